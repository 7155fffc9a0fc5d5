// fault: #include of a file elsewhere on the machine
// sim: compile_error | learner.cu:@HERE | toolkit
// gpu: same
// gpu-sticky: no
#include "/etc/passwd" /*HERE*/
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
