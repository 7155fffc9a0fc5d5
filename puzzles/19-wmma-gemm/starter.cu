// 19 · GEMM on the tensor cores: C = A x B, with A (M x K) and B (K x N) in f16 and C (M x N) in
// f32, all row-major.
//     C[r][c] = sum over k of A[r][k] * B[k][c]      (products exact, sums in f32)
// Launch: one block per BM x BN tile of C, one warp per WM x WN tile of that: (BM / WM) x (BN / WN)
// warps in a 1-D block. By default BM = BN = WM = WN = 16: one warp, one 16 x 16 tile of C.
// BM, BN, WM, WN and SMEM (dynamic shared memory, bytes) are compile-time constants; change them
// with // @tune BM=128 (and so on).
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void wmma_gemm(const __half* A, const __half* B, float* C, int M, int N, int K) {
  // One warp, one 16 x 16 tile of C (written for the defaults: every warp of the block takes
  // the 16 x 16 tiles of the block's tile in turn).
  __shared__ __align__(32) __half As[16 * 16];
  __shared__ __align__(32) __half Bs[16 * 16];
  __shared__ __align__(32) float Cs[16 * 16];
  const int lane = threadIdx.x % 32;
  if (threadIdx.x >= 32) return; // TODO (speed): one warp does all the work of the block
  for (int t = 0; t < (BM / 16) * (BN / 16); ++t) {
    const int r0 = blockIdx.y * BM + (t / (BN / 16)) * 16, c0 = blockIdx.x * BN + (t % (BN / 16)) * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
      // Copy a 16 x 16 tile of A and of B into shared memory, zeros past the edges.
      for (int e = lane; e < 256; e += 32) {
        int i = e / 16, j = e % 16;
        As[e] = (r0 + i < M && k0 + j < K) ? A[(long long)(r0 + i) * K + k0 + j] : __float2half(0.0f);
        Bs[e] = (k0 + i < K && c0 + j < N) ? B[(long long)(k0 + i) * N + c0 + j] : __float2half(0.0f);
      }
      __syncwarp();
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b; // TODO: Bs is row-major
      wmma::load_matrix_sync(a, As, 16);
      wmma::load_matrix_sync(b, Bs, 16);
      wmma::mma_sync(acc, a, b, acc);
      __syncwarp();
    }
    // Through shared memory, so that the edges of C can be left out.
    wmma::store_matrix_sync(Cs, acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) {
      int r = r0 + e / 16, c = c0 + e % 16;
      if (r < M && c < N) C[(long long)r * N + c] = Cs[e];
    }
    __syncwarp();
  }
  // TODO (speed): each A and B value is loaded from memory by every tile that needs it, and a warp
  // does one mma per 1 KB it copies. Stage BM x BK and BK x BN tiles for the whole block, give
  // each warp several fragments, and load the next tiles while computing on these (cp.async).
}
