// fault: writing through a const pointer
// puzzle: 01-vector-add
// sim: compile_error | learner.cu:@HERE: | expression must be a modifiable lvalue
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { c[i] = a[i] + b[i]; a[i] = 0.0f; } /*HERE*/
}
