// fault: #include "notes.h": a file beside the learner's, which a GPU elsewhere would not have
// sim: compile_error | notes.h | not one of the toolkit's headers | learner.cu:5
// gpu: same
// gpu-sticky: no
#include "notes.h"
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
