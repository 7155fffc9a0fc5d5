// 37 · Split-K GEMM: C = A x B^T with A (M x K) and B (N x K) in bf16, both row-major, C (M x N)
// in bf16.
//     C[r][c] = bf16( sum over k of A[r][k] * B[c][k] )   (products exact, sums in f32, one rounding)
// Two launches. splitk_gemm: grid [cdiv(N, BN), cdiv(M, BM), S], (BM / WM) x (BN / WN) warps a
// block; block (x, y, z) owns tile (y, x) of C and slice z of K, and leaves its f32 partial sums
// in the workspace `part`. splitk_reduce: cdiv(M * N, RBLOCK * RPER) blocks of RBLOCK threads
// add the S partials of each output and write C. S comes from the shape (puzzle.toml: enough
// blocks for one wave of WAVE, slices no shallower than KMIN). `tickets`: one zeroed counter per
// tile, for a splitk_gemm that adds the slices itself (it must leave them at zero); this one does
// not. Change the tunables with // @tune BM=128 (and so on).
#include <cuda_bf16.h>

// Slice z covers k = z * D .. z * D + D - 1, D = cdiv(K, S) rounded up to a whole k-step: the
// last slice is shorter and the ones after it (if D was rounded up) are empty.
__device__ __forceinline__ int slice_depth(int K, int S) {
  const int d = (K + S - 1) / S;
  return (d + BK - 1) / BK * BK;
}

extern "C" __global__ void splitk_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* part,
                                       unsigned* tickets, __nv_bfloat16* C, int M, int N, int K, int S) {
  const int D = slice_depth(K, S);
  const int k0 = blockIdx.z * D, k1 = min(K, k0 + D);
  float* slice = part + (long long)blockIdx.z * M * N;
  // TODO (speed): one thread per output, its dot product on the CUDA cores, straight from global
  // memory. Bring in puzzle 20's mainloop: cp.async ring, ldmatrix, mma.sync, 64 x 64 warp tiles.
  for (int t = threadIdx.x; t < BM * BN; t += blockDim.x) {
    const int r = blockIdx.y * BM + t / BN, c = blockIdx.x * BN + t % BN;
    if (r >= M || c >= N) continue;
    float acc = 0.0f;
    for (int k = k0; k < k1; ++k)
      acc += __bfloat162float(A[(long long)r * K + k]) * __bfloat162float(B[(long long)c * K + k]);
    slice[(long long)r * N + c] = acc; // an empty slice writes its zeros too
  }
}

extern "C" __global__ void splitk_reduce(const __nv_bfloat16* A, const __nv_bfloat16* B, float* part,
                                         unsigned* tickets, __nv_bfloat16* C, int M, int N, int K, int S) {
  const long long total = (long long)M * N;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    float sum = 0.0f;
    // The slices in order: the same bits every run. TODO: is the rounding to bf16 here wanted?
    for (int z = 0; z < S; ++z) sum += __bfloat162float(__float2bfloat16(part[z * total + i]));
    C[i] = __float2bfloat16(sum);
  }
}
