// fault: a call through a device function pointer, chosen at run time
// sim: passed
// gpu: same
// gpu-sticky: no
__device__ float add2(float x, float y) { return x + y; }
__device__ float mul2(float x, float y) { return x * y; }
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float (*op)(float, float) = (n > 0) ? add2 : mul2;
  if (i < n) c[i] = op(a[i], b[i]);
}
