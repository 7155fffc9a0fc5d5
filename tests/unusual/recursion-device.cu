// fault: a recursive device function of small depth
// sim: passed
// gpu: same
// gpu-sticky: no
__device__ __noinline__ int depth(int k) { return k <= 0 ? 0 : 1 + depth(k - 1); }
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + 0.0f * depth(i % 8);
}
