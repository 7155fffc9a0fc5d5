// 39 · Marlin-style W4A16 GEMM: C[M, N] = A[M, K] (f16) x W[K, N], W as 4-bit codes in mma
// fragment order (B, u32 [K / 16][2N]) and f16 scales s[K / 128][N]:
//     w[k][n] = f16((q[k][n] - 8) * s[k / 128][n]),   C = f16(A x w), sums in f32 or better.
// Grid [cdiv(N, 64 NB), cdiv(M, 16 MT)], 32 NB KS threads: block (x, y) owns columns 64 NB x ..
// and rows 16 MT y .. of C. Change the tunables with // @tune NB=2 (and so on).
#include <cuda_fp16.h>

// The code of (k, n). Row k / 16 of B holds that 16 rows of k; its 64-column group n / 64 is 128
// words, four 16 x 16 tiles j, and word 4 l + j is lane l's share of tile j (g = l / 4 is its
// column, t = l % 4 picks its rows 2t, 2t + 1, 2t + 8, 2t + 9).
__device__ unsigned code_at(const unsigned* B, int N, int k, int n) {
  const int kk = k % 16, nn = n % 16, tile = (n / 16) % 4;
  const int g = nn % 8, t = (kk % 8) / 2;
  // The lane's 8 codes in order: rows 2t, 2t + 1, 2t + 8, 2t + 9 of column g, then of g + 8.
  const int nib = 4 * (nn / 8) + 2 * (kk / 8) + kk % 2;
  const long long word = (long long)(k / 16) * 2 * N + (n / 64) * 128 + 4 * (4 * g + t) + tile;
  return (B[word] >> (4 * nib)) & 15u;
}

extern "C" __global__ void w4a16_gemm(const __half* A, const unsigned* B, const __half* s, __half* C,
                                      int M, int N, int K) {
  // TODO (speed): a thread per output, every code decoded on the CUDA cores, B re-read by every
  // row of C. Stream B once through a cp.async ring, dequantize a whole word to four f16x2 with
  // lop3 and the 0x6400 trick, and feed the tensor cores (ldmatrix for A, mma.sync m16n8k16).
  const int cols = 64 * NB, rows = 16 * MT;
  for (int i = threadIdx.x; i < cols * rows; i += blockDim.x) {
    const int m = blockIdx.y * rows + i / cols, n = blockIdx.x * cols + i % cols;
    if (m >= M || n >= N) continue;
    float acc = 0.f;
    for (int k = 0; k < K; ++k) {
      const int q = (int)code_at(B, N, k, n);
      const __half w = __float2half_rn((float)(q - 8) * __half2float(s[(k / 128) * N + n]));
      acc += __half2float(A[(long long)m * K + k]) * __half2float(w);
    }
    C[(long long)m * N + n] = __float2half_rn(acc);
  }
}
