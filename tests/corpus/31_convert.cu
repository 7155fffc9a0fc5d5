// Conversions: ints[4*i + ...] = float -> int with round-to-nearest, toward zero, down and up
// (__float2int_rn/rz/rd/ru, saturating on overflow), u8[i] = saturating float -> unsigned char,
// h[i] = __float2half_rz, dd[i] = (double)int * 0.1, ff[i] = __int2float_rn(x) of a large int.
#include <cuda_fp16.h>
extern "C" __global__ void convert(const float* f, int* ints, unsigned char* u8, __half* h,
                                   double* dd, float* ff, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = f[i];
  ints[4 * i + 0] = __float2int_rn(v);
  ints[4 * i + 1] = __float2int_rz(v);
  ints[4 * i + 2] = __float2int_rd(v);
  ints[4 * i + 3] = __float2int_ru(v);
  u8[i] = (unsigned char)__float2uint_rn(fminf(fmaxf(v, 0.0f), 255.0f));
  h[i] = __float2half_rz(v);
  dd[i] = (double)(int)v * 0.1;
  ff[i] = __int2float_rn(16777217 + i) + __uint2float_rz(0xffffffffu - i);
}
