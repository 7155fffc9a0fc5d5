// fault: reads a q4_0 block's qs[16] as four 4-byte words: blocks are 18 bytes, so every other block's qs is only 2-byte aligned
// puzzle: 32-w4a16-gemv
// sim: runtime_fault | aligned
// gpu: runtime_fault | misaligned
// gpu-sticky: yes
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
      const unsigned int* qs = reinterpret_cast<const unsigned int*>(blk + 2);
      for (int w = 0; w < 4; ++w) {
        unsigned int v = qs[w]; /*HERE*/
        for (int k = 0; k < 4; ++k) {
          const int j = 4 * w + k;
          acc += (int((v >> (8 * k)) & 15u) - 8) * d * __half2float(x[b * 32 + j]);
          acc += (int((v >> (8 * k + 4)) & 15u) - 8) * d * __half2float(x[b * 32 + j + 16]);
        }
      }
    }
    y[r] = __float2half_rn(acc);
  }
}
