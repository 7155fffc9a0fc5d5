// fault: leaves the shared tiles' elements past M, N or K unwritten instead of zero: stale or garbage values enter the sums
// puzzle: 19-wmma-gemm
// sim: wrong_answer | are wrong
// gpu: wrong_answer | are wrong
// note: The simulator fills shared memory with NaN, so the first case already fails. On a GPU the padding holds whatever was there: zeros, maybe, in the first tile, but the previous tile's values in the next, so K = 29 fails.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void wmma_gemm(const __half* A, const __half* B, float* C, int M, int N, int K) {
  __shared__ __align__(32) __half As[16 * 16];
  __shared__ __align__(32) __half Bs[16 * 16];
  __shared__ __align__(32) float Cs[16 * 16];
  const int lane = threadIdx.x % 32;
  if (threadIdx.x >= 32) return;
  for (int t = 0; t < (BM / 16) * (BN / 16); ++t) {
    const int r0 = blockIdx.y * BM + (t / (BN / 16)) * 16, c0 = blockIdx.x * BN + (t % (BN / 16)) * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
      for (int e = lane; e < 256; e += 32) {
        int i = e / 16, j = e % 16;
        if (r0 + i < M && k0 + j < K) As[e] = A[(long long)(r0 + i) * K + k0 + j]; /*HERE*/
        if (k0 + i < K && c0 + j < N) Bs[e] = B[(long long)(k0 + i) * N + c0 + j];
      }
      __syncwarp();
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
      wmma::load_matrix_sync(a, As, 16);
      wmma::load_matrix_sync(b, Bs, 16);
      wmma::mma_sync(acc, a, b, acc);
      __syncwarp();
    }
    wmma::store_matrix_sync(Cs, acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) {
      int r = r0 + e / 16, c = c0 + e % 16;
      if (r < M && c < N) C[(long long)r * N + c] = Cs[e];
    }
    __syncwarp();
  }
}
