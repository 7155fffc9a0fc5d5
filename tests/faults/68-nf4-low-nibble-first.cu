// fault: NF4 with the nibbles swapped: element 2j taken from the low nibble (bitsandbytes puts it in the high one)
// puzzle: 31-nf4-dequantize
// sim: wrong_answer | are wrong
// gpu: same
#include <cuda_bf16.h>
__constant__ float kNF4[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                               -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                               0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
                               0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};
extern "C" __global__ void nf4_dequantize(const unsigned char* packed, const float* absmax, __nv_bfloat16* y, int n) {
  long long i0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  for (long long i = i0; i < i0 + VEC && i < n; ++i) {
    unsigned int byte = packed[i / 2];
    unsigned int code = (i % 2 == 0) ? (byte & 15u) : (byte >> 4);
    y[i] = __float2bfloat16_rn(kNF4[code] * absmax[i / 64]);
  }
}
