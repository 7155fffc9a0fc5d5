// Tensor cores through wmma: one warp computes a 16x16 tile of C = A * B with A (16 x K, row-major)
// and B (K x 16, col-major) in half and f32 accumulation, K a multiple of 16.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void wmma_gemm(const __half* A, const __half* B, float* C, int K) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(c, 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + k, K);
    wmma::load_matrix_sync(b, B + k, K);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C, c, 16, wmma::mem_row_major);
}
