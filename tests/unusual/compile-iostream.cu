// fault: #include <iostream>: a host header NVRTC does not have
// sim: compile_error | cannot open source file | iostream
// gpu: same
// gpu-sticky: no
#include <iostream>
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
