// fault: the same tunable set twice
// sim: compile_error | BLOCK is set twice | on line 5
// gpu: same
// gpu-sticky: no
// @tune BLOCK=128
// @tune BLOCK=512
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
