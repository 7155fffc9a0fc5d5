// atomicCAS loops: a float atomic max built from atomicCAS on the bits (*mx = max of x), and a
// double add built the classic way (*sum += x[i] as double).
__device__ float atomic_max_float(float* addr, float val) {
  int* a = (int*)addr;
  int old = *a, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= val) break;
    old = atomicCAS(a, assumed, __float_as_int(val));
  } while (assumed != old);
  return __int_as_float(old);
}
__device__ double atomic_add_double(double* addr, double val) {
  unsigned long long* a = (unsigned long long*)addr;
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __double_as_longlong(val + __longlong_as_double(assumed)));
  } while (assumed != old);
  return __longlong_as_double(old);
}
extern "C" __global__ void cas_loops(const float* x, float* mx, double* sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomic_max_float(mx, x[i]);
  atomic_add_double(sum, (double)x[i]);
}
