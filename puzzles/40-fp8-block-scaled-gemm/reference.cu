// Reference: no tensor cores. Each thread walks its share of the block's BM x BN tile of C; every
// output is the recipe written out: for each 128-deep block kb of K, the dot product of the e4m3
// values (converted exactly) over that block, times a_scale[kb][r] * b_scale[c / 128][kb], all in
// double, which is exact for the inner sums (each product is a multiple of 2^-18 below 2^18, so
// 128 of them stay within 44 bits); one rounding to bf16 at the end. K must be a multiple of 128:
// the scales are defined per 128 of K, and there is no scale for a partial block.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

extern "C" __global__ void fp8_block_gemm(const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B,
                                          const float* a_scale, const float* b_scale,
                                          __nv_bfloat16* C, int M, int N, int K) {
  const int KB = K / 128; // scale blocks along K
  const long long r0 = (long long)blockIdx.y * BM, c0 = (long long)blockIdx.x * BN;
  for (int t = threadIdx.x; t < BM * BN; t += blockDim.x) {
    long long r = r0 + t / BN, c = c0 + t % BN;
    if (r >= M || c >= N) continue;
    double acc = 0.0;
    for (int kb = 0; kb < KB; ++kb) {
      double part = 0.0;
      for (int k = kb * 128; k < kb * 128 + 128; ++k) // B is [N][K]: row c is column c of B
        part += (double)(float)A[r * K + k] * (double)(float)B[c * K + k];
      // a_scale is [K / 128][M] (MN-major: the M scales of one K block are contiguous);
      // b_scale is [cdiv(N, 128)][K / 128] (row-major, one per 128 x 128 block of B).
      acc += part * (double)a_scale[(long long)kb * M + r] * (double)b_scale[(c / 128) * KB + kb];
    }
    C[r * N + c] = __double2bfloat16(acc);
  }
}
