// fault: accumulates in f32 but rounds each result to f16 on the way out (an f16 answer, as torch.matmul returns for f16 inputs)
// puzzle: 19-wmma-gemm
// sim: wrong_answer | are wrong | max abs error
// gpu: same
// note: The tolerance must refuse an f16 answer: rtol (1e-4) is below f16's relative step, and at K = 4096 the outputs reach 20 to 80, where f16's step (1/64 to 1/16) is far above atol. Short cases may pass (outputs below ~16, where half of f16's step is within atol + rtol |C|); the large whole numbers overflow to Inf and K = 4096 always fails.
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
  if (threadIdx.x >= 32) return;
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
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
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
      if (r < M && c < N) C[(long long)r * N + c] = __half2float(__float2half(Cs[e])); /*HERE*/
    }
    __syncwarp();
  }
}
