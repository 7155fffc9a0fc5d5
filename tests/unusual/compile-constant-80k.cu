// fault: an 80 KB __constant__ array: the GPU's constant bank holds 64 KiB
// sim: compile_error | ptxas | constant data | 80000 bytes | 65536
// gpu: same
// gpu-sticky: no
__constant__ float table[20000];
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + 0.0f * table[i % 20000];
}
