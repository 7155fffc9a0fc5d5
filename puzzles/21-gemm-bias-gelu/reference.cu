// Reference: no tensor cores. Each thread walks its share of the block's BM x BN tile of Y; every
// output is a K-long dot product of row r of A and row c of B (B is [N, K]) plus bias[c], all in
// double (bf16 values convert exactly), then the tanh form of GELU in double,
//     gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))),
// rounded to bf16 once.
#include <cuda_bf16.h>

extern "C" __global__ void gemm_bias_gelu(const __nv_bfloat16* A, const __nv_bfloat16* B,
                                          const __nv_bfloat16* bias, __nv_bfloat16* Y, int M, int N,
                                          int K) {
  const long long r0 = (long long)blockIdx.y * BM, c0 = (long long)blockIdx.x * BN;
  for (int t = threadIdx.x; t < BM * BN; t += blockDim.x) {
    const long long r = r0 + t / BN, c = c0 + t % BN;
    if (r >= M || c >= N) continue;
    double x = (double)__bfloat162float(bias[c]);
    for (int k = 0; k < K; ++k)
      x += (double)__bfloat162float(A[r * K + k]) * (double)__bfloat162float(B[c * K + k]);
    const double u = 0.7978845608028654 * (x + 0.044715 * x * x * x); // sqrt(2 / pi) = 0.79788...
    Y[r * N + c] = __double2bfloat16(0.5 * x * (1.0 + tanh(u)));
  }
}
