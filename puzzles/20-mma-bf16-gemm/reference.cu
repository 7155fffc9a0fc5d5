// Reference: no tensor cores. Each thread walks its share of the block's BM x BN tile of C; every
// output is a K-long dot product of row r of A and row c of B (B is [N, K]), bf16 values
// converted exactly, accumulated in double and rounded to f32 once.
#include <cuda_bf16.h>

extern "C" __global__ void mma_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N,
                                    int K) {
  const long long r0 = (long long)blockIdx.y * BM, c0 = (long long)blockIdx.x * BN;
  for (int t = threadIdx.x; t < BM * BN; t += blockDim.x) {
    const long long r = r0 + t / BN, c = c0 + t % BN;
    if (r >= M || c >= N) continue;
    double acc = 0.0;
    for (int k = 0; k < K; ++k)
      acc += (double)__bfloat162float(A[r * K + k]) * (double)__bfloat162float(B[c * K + k]);
    C[r * N + c] = (float)acc;
  }
}
