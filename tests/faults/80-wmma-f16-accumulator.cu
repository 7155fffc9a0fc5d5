// fault: accumulates in an f16 WMMA fragment: rounds to 11 bits after every mma and overflows past 65504
// puzzle: 19-wmma-gemm
// sim: wrong_answer | are a near miss | accumulated rounding | a wider accumulator
// gpu: same
// note: Right to f16 precision only: passes the cases with K <= 29 (one or two roundings stay within atol), fails from K = 64 on, and overflows past 65504 in the large whole-numbers case.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void wmma_gemm(const __half* A, const __half* B, float* C, int M, int N, int K) {
  __shared__ __align__(32) __half As[16 * 16];
  __shared__ __align__(32) __half Bs[16 * 16];
  __shared__ __align__(32) __half Cs[16 * 16];
  const int lane = threadIdx.x % 32;
  if (threadIdx.x >= 32) return;
  for (int t = 0; t < (BM / 16) * (BN / 16); ++t) {
    const int r0 = blockIdx.y * BM + (t / (BN / 16)) * 16, c0 = blockIdx.x * BN + (t % (BN / 16)) * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 16, __half> acc; /*HERE*/
    wmma::fill_fragment(acc, __float2half(0.0f));
    for (int k0 = 0; k0 < K; k0 += 16) {
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
    wmma::store_matrix_sync(Cs, acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < 256; e += 32) {
      int r = r0 + e / 16, c = c0 + e % 16;
      if (r < M && c < N) C[(long long)r * N + c] = __half2float(Cs[e]);
    }
    __syncwarp();
  }
}
