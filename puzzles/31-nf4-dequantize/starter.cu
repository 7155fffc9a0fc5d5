// 31 · NF4 dequantization, bitsandbytes layout, blocks of 64:
//     y[i] = bf16( NF4[code_i] * absmax[i / 64] )     (the product in f32, rounded once to bf16)
// code_i is 4 bits of packed[i / 2]: element 2j is the HIGH nibble of packed[j], element 2j + 1
// the low nibble. n is even.
// Launch: cdiv(n, BLOCK * VEC) blocks of BLOCK threads; each thread owns VEC consecutive elements
// (VEC = 2 by default: exactly one byte of packed).
#include <cuda_bf16.h>

// The 16 NF4 values (bitsandbytes' table; quantiles of a normal distribution, scaled to [-1, 1]).
__constant__ float kNF4[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f,
};

extern "C" __global__ void nf4_dequantize(const unsigned char* packed, const float* absmax,
                                          __nv_bfloat16* y, int n) {
  long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  if (i < n) {
    unsigned int byte = packed[i / 2];
    // TODO: this takes the low nibble for element i, but even elements live in the HIGH nibble.
    // TODO: the thread owns elements i .. i + VEC - 1 (those below n); it writes only i.
    unsigned int code = byte & 15u;
    y[i] = __float2bfloat16_rn(kNF4[code] * absmax[i / 64]);
  }
}
