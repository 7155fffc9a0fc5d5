// bf16: out[i] = bf16(float(a[i]) * s + float(b[i])) computed in float, and prod[i] = a[i] * b[i]
// with the native __hmul on __nv_bfloat16, and the max with __hmax.
#include <cuda_bf16.h>
extern "C" __global__ void bf16_ops(const __nv_bfloat16* a, const __nv_bfloat16* b,
                                    __nv_bfloat16* out, __nv_bfloat16* prod, __nv_bfloat16* mx,
                                    float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = __float2bfloat16(__bfloat162float(a[i]) * s + __bfloat162float(b[i]));
    prod[i] = __hmul(a[i], b[i]);
    mx[i] = __hmax(a[i], b[i]);
  }
}
