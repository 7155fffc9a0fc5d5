// Reference: thread t < ROWS of each block walks row blockIdx.x * ROWS + t, decoding each q4_0
// block byte by byte and accumulating in double precision; y is rounded once at the end.
#include <cuda_fp16.h>

extern "C" __global__ void w4a16_gemv(const unsigned char* W, const __half* x, __half* y, int M,
                                      int K) {
  const long long nb = K / 32; // blocks per row
  for (int t = threadIdx.x; t < ROWS; t += blockDim.x) {
    const long long r = (long long)blockIdx.x * ROWS + t;
    if (r >= M) continue;
    double acc = 0.0;
    for (long long b = 0; b < nb; ++b) {
      const unsigned char* blk = W + (r * nb + b) * 18;
      const unsigned short dbits = (unsigned short)(blk[0] | (blk[1] << 8)); // little-endian f16
      const double d = (double)__half2float(__ushort_as_half(dbits));
      for (int j = 0; j < 16; ++j) {
        const int lo = (blk[2 + j] & 15) - 8; // weight j
        const int hi = (blk[2 + j] >> 4) - 8; // weight j + 16
        acc += lo * d * (double)__half2float(x[b * 32 + j]);
        acc += hi * d * (double)__half2float(x[b * 32 + j + 16]);
      }
    }
    y[r] = __float2half_rn((float)acc);
  }
}
