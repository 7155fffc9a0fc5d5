// Reference: a thread per output of its block's share of C, walking k one code at a time. The
// code of (k, n) is found from the packing's definition (puzzle.toml), the weight rounded to f16
// as the format defines it, the products summed in double and C rounded once to f16.
#include <cuda_fp16.h>

// The code q[k][n] (0..15) from the fragment-ordered words of B (puzzle.toml, README).
__device__ unsigned code_at(const unsigned* B, int N, int k, int n) {
  const int kk = k % 16, nn = n % 16;      // place inside the 16 x 16 tile
  const int tile = (n / 16) % 4;           // tile j of the 64-column group
  const int g = nn % 8, t = (kk % 8) / 2;  // the lane l = 4g + t that holds it
  const int nib = 4 * (kk % 2) + 2 * (nn / 8) + kk / 8;
  const long long word = (long long)(k / 16) * 2 * N + (n / 64) * 128 + 4 * (4 * g + t) + tile;
  return (B[word] >> (4 * nib)) & 15u;
}

extern "C" __global__ void w4a16_gemm(const __half* A, const unsigned* B, const __half* s, __half* C,
                                      int M, int N, int K) {
  // The grid's blocks share C out evenly, whatever the tunables: block (x, y) takes columns
  // x BNc .. and rows y BMr .. of it.
  const int BNc = (N + gridDim.x - 1) / gridDim.x, BMr = (M + gridDim.y - 1) / gridDim.y;
  for (int i = threadIdx.x; i < BNc * BMr; i += blockDim.x) {
    const int m = blockIdx.y * BMr + i / BNc, n = blockIdx.x * BNc + i % BNc;
    if (m >= M || n >= N) continue;
    double acc = 0.0;
    for (int k = 0; k < K; ++k) {
      const int q = (int)code_at(B, N, k, n);
      const float sc = __half2float(s[(long long)(k / 128) * N + n]);
      const float w = __half2float(__float2half_rn((float)(q - 8) * sc)); // exact, then one rounding
      acc += (double)__half2float(A[(long long)m * K + k]) * (double)w;
    }
    C[(long long)m * N + n] = __double2half(acc);
  }
}
