// fault: a 60 KB __constant__ array: under the 64 KiB bank, so it compiles and runs
// sim: passed
// gpu: same
// gpu-sticky: no
__constant__ float table[15000];
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + table[i % 15000];
}
