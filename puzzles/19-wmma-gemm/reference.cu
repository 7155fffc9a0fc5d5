// Reference: no tensor cores. Each thread walks its share of the block's BM x BN tile of C; every
// output is a K-long dot product of f16 values (converted exactly) accumulated in double.
#include <cuda_fp16.h>

extern "C" __global__ void wmma_gemm(const __half* A, const __half* B, float* C, int M, int N, int K) {
  const long long r0 = (long long)blockIdx.y * BM, c0 = (long long)blockIdx.x * BN;
  for (int t = threadIdx.x; t < BM * BN; t += blockDim.x) {
    long long r = r0 + t / BN, c = c0 + t % BN;
    if (r >= M || c >= N) continue;
    double acc = 0.0;
    for (int k = 0; k < K; ++k)
      acc += (double)__half2float(A[r * K + k]) * (double)__half2float(B[(long long)k * N + c]);
    C[r * N + c] = (float)acc;
  }
}
