// fault: @tune BLOCK=2048: a block has at most 1024 threads
// sim: compile_error | 1024
// gpu: same
// gpu-sticky: no
// @tune BLOCK=2048
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
