// fault: a static_assert that fails
// puzzle: 01-vector-add
// sim: compile_error | learner.cu:@HERE: | floats are 8 bytes
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  static_assert(sizeof(float) == 8, "floats are 8 bytes"); /*HERE*/
  if (i < n) c[i] = a[i] + b[i];
}
