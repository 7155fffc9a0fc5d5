// fault: q4_0 read in NF4's order: weights 2j and 2j + 1 from byte j (q4_0 puts weights j and j + 16 there)
// puzzle: 32-w4a16-gemv
// sim: wrong_answer | are wrong
// gpu: same
#include <cuda_fp16.h>
extern "C" __global__ void w4a16_gemv(const unsigned char* W, const __half* x, __half* y, int M, int K) {
  const long long nb = K / 32;
  for (int t = threadIdx.x; t < ROWS; t += blockDim.x) {
    const long long r = (long long)blockIdx.x * ROWS + t;
    if (r >= M) continue;
    float acc = 0.0f;
    for (long long b = 0; b < nb; ++b) {
      const unsigned char* blk = W + (r * nb + b) * 18;
      const float d = __half2float(__ushort_as_half((unsigned short)(blk[0] | (blk[1] << 8))));
      for (int j = 0; j < 16; ++j) {
        acc += ((blk[2 + j] & 15) - 8) * d * __half2float(x[b * 32 + 2 * j]);
        acc += ((blk[2 + j] >> 4) - 8) * d * __half2float(x[b * 32 + 2 * j + 1]);
      }
    }
    y[r] = __float2half_rn(acc);
  }
}
