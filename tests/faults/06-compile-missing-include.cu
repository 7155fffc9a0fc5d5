// fault: including a header that is not there
// puzzle: 01-vector-add
// sim: compile_error | learner.cu:@HERE: | "helpers.cuh" is not one of the toolkit's headers
// gpu: same
#include "helpers.cuh" /*HERE*/
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
