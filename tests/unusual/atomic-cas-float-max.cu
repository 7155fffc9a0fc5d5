// fault: an atomicCAS loop (a float max) in every thread
// sim: passed
// gpu: same
// gpu-sticky: no
__device__ float atomic_max(float* p, float v) {
  int* q = reinterpret_cast<int*>(p);
  int old = *q, seen;
  do {
    seen = old;
    if (__int_as_float(seen) >= v) break;
    old = atomicCAS(q, seen, __float_as_int(v));
  } while (old != seen);
  return __int_as_float(old);
}
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = -3.0e38f;
    atomic_max(&c[i], a[i] + b[i]);
  }
}
