// fault: #include that climbs out of the toolkit's folders
// sim: compile_error | learner.cu:@HERE | toolkit
// gpu: same
// gpu-sticky: no
#include "../../../../../../etc/hostname" /*HERE*/
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
