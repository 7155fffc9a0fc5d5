// fault: __half and __nv_bfloat16 values through cuda_fp16.h and cuda_bf16.h
// sim: passed
// gpu: same
// gpu-sticky: no
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __half h = __float2half(0.0f);
    __nv_bfloat16 z = __float2bfloat16(0.0f);
    c[i] = a[i] + b[i] + __half2float(h) + __bfloat162float(z);
  }
}
