// fault: needs ~200 registers per thread; launched with 1024 threads
// puzzle: 01-vector-add
// sim: runtime_fault | more than this kernel can run | registers per thread
// gpu: same
// note: 64 K registers per SM / 1024 threads = 64 per thread; both backends read the kernel's registers from ptxas.
// @tune BLOCK=1024
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float r[160];
#pragma unroll
  for (int k = 0; k < 160; ++k) r[k] = a[(i + k) % max(n, 1)] * (k + 1);
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < 160; ++k) s += r[k] * r[(k * 7) % 160];
  if (i < n) c[i] = a[i] + b[i] + 0.0f * s;
}
