// fault: an undeclared identifier, with line and column
// puzzle: 01-vector-add
// sim: compile_error | learner.cu:@HERE:21: | identifier "q" is undefined
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = q + b[i]; /*HERE*/
}
