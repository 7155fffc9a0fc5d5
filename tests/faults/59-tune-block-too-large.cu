// fault: @tune BLOCK=2048: outside what the puzzle allows
// puzzle: 01-vector-add
// sim: compile_error | learner.cu:5:1: | BLOCK = 2048 is outside 32..1024
// gpu: same
// @tune BLOCK=2048
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
