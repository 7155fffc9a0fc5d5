// Reference: the definition, with no routing at all. moe_count, moe_scatter and moe_gemm do
// nothing; in moe_combine each warp takes outputs Y[t][n] one at a time (t = blockIdx.y, the
// block's columns shared among its warps) and, for each of token t's k choices j, forms the
// H-long dot product of X[t] and row n of expert topk_ids[t][j]'s weight in double (every bf16
// product is exact there; the lanes take every 32nd h, so that their loads are contiguous, and a
// shuffle tree adds their sums), adds it times topk_weights[t][j], and rounds the sum once to
// bf16. Experts nobody chose are never read.
#include <cuda_bf16.h>

#define MOE_ARGS                                                                                  \
  const __nv_bfloat16 *X, const int *topk_ids, const float *topk_weights, const __nv_bfloat16 *W, \
      int *meta, int *rows, float *part, __nv_bfloat16 *Y, int T, int k, int E, int H, int N

extern "C" __global__ void moe_count(MOE_ARGS) {}
extern "C" __global__ void moe_scatter(MOE_ARGS) {}
extern "C" __global__ void moe_gemm(MOE_ARGS) {}

extern "C" __global__ void moe_combine(MOE_ARGS) {
  const int t = blockIdx.y, lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int cols = (N + gridDim.x - 1) / gridDim.x; // CCOLS, whatever it is set to
  const __nv_bfloat16* x = X + (long long)t * H;
  for (int n = blockIdx.x * cols + warp; n < N && n < (blockIdx.x + 1) * cols; n += warps) {
    double y = 0.0;
    for (int j = 0; j < k; ++j) {
      const int e = topk_ids[(long long)t * k + j];
      const __nv_bfloat16* w = W + ((long long)e * N + n) * H;
      double dot = 0.0;
      for (int h = lane; h < H; h += 32)
        dot += (double)__bfloat162float(x[h]) * (double)__bfloat162float(w[h]);
      for (int o = 16; o > 0; o /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, o);
      y += (double)topk_weights[(long long)t * k + j] * dot;
    }
    if (lane == 0) Y[(long long)t * N + n] = __double2bfloat16(y);
  }
}
