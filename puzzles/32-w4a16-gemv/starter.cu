// 32 · W4A16 GEMV: y = W x, with W (M x K) stored as llama.cpp q4_0 blocks and x, y in f16.
//     Each row of W is K / 32 blocks of 18 bytes: an f16 scale d (little-endian), then qs[16].
//     weight 32b + j      = ((qs[j] & 15) - 8) * d     for j < 16   (low nibbles)
//     weight 32b + j + 16 = ((qs[j] >> 4) - 8) * d                  (high nibbles)
//     y[r] = sum over k of weight(r, k) * x[k], accumulated in f32, rounded once to f16.
// Launch: cdiv(M, ROWS) blocks of THREADS threads (256 and 8 by default): each block owns ROWS
// rows; here one warp per row. K is a multiple of 32. The 18-byte blocks are 2-byte aligned only.
#include <cuda_fp16.h>

extern "C" __global__ void w4a16_gemv(const unsigned char* W, const __half* x, __half* y, int M,
                                      int K) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long r = (long long)blockIdx.x * ROWS + warp;
  if (warp >= ROWS || r >= M) return;
  const int nb = K / 32;
  float acc = 0.0f;
  for (int b = lane; b < nb; b += 32) { // one block per lane
    const unsigned char* blk = W + (r * nb + b) * 18;
    const float d = __half2float(__ushort_as_half((unsigned short)(blk[0] | (blk[1] << 8))));
    for (int j = 0; j < 16; ++j) {
      // TODO: the low nibble is signed around 8 (subtract 8), and the high nibble of qs[j] is
      // weight j + 16 of the block: it is not used at all here.
      acc += (blk[2 + j] & 15) * d * __half2float(x[b * 32 + j]);
    }
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if (lane == 0) y[r] = __float2half_rn(acc);
}
