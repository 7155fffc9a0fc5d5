// fault: assigning a float to a pointer
// puzzle: 01-vector-add
// sim: compile_error | learner.cu:@HERE: | a value of type "float" cannot be
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float* p = 3.0f; /*HERE*/
  if (i < n) c[i] = a[i] + b[i] + *p;
}
