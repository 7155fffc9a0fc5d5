// fault: a toolkit header included with quotes, as many tutorials write it
// sim: passed
// gpu: same
// gpu-sticky: no
#include "cuda_fp16.h"
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + __half2float(__float2half(0.0f));
}
