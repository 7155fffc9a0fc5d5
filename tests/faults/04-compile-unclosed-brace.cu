// fault: a brace never closed
// puzzle: 01-vector-add
// sim: compile_error | learner.cu: | expected a "}"
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = a[i] + b[i];
}
