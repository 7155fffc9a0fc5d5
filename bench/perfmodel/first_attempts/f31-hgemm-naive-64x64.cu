// First attempt · f31-hgemm-naive-64x64 · 19-wmma-gemm
// What: no tensor cores: a 512-thread block per 64 x 64 tile of C, each thread computing 8 outputs
// (t, t + 512, ...) as f32 dot products of f16 values read straight from global memory.
// Naive pattern: a huge-grid naive GEMM in f16: two 2-byte loads and two conversions per FMA, no
// tiling in shared memory.
// @tune BM=64
// @tune BN=64
// @tune WM=16
// @tune WN=16
#include <cuda_fp16.h>

extern "C" __global__ void wmma_gemm(const __half* A, const __half* B, float* C, int M, int N,
                                     int K) {
  const long long r0 = (long long)blockIdx.y * BM, c0 = (long long)blockIdx.x * BN;
  for (int t = threadIdx.x; t < BM * BN; t += blockDim.x) {
    const long long r = r0 + t / BN, c = c0 + t % BN;
    if (r >= M || c >= N) continue;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += __half2float(A[r * K + k]) * __half2float(B[(long long)k * N + c]);
    C[r * N + c] = acc;
  }
}
