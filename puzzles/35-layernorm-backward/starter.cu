// 35 · LayerNorm backward. For each row r of x and dy (M x N, bf16), with the forward's saved
// mean[r] and rstd[r] (f32) and the weight gamma (N, bf16):
//     x-hat = (x - mean) * rstd          g = gamma * dy
//     c1 = mean over the row of x-hat * g          c2 = mean over the row of g
//     dx = rstd * (g - c2 - x-hat * c1)            (bf16, M x N)
//     dgamma[c] = sum over rows of dy * x-hat      dbeta[c] = sum over rows of dy   (f32, N)
//
// Two kernels run one after the other:
//   ln_bwd_dx:     parts = min(GRID, M) blocks of BLOCK threads (GRID = 264, BLOCK = 512). Block b
//                  takes rows b*M/parts .. (b+1)*M/parts - 1 and leaves its own column sums in the
//                  workspace: part[(2b) * N + c] for dgamma, part[(2b + 1) * N + c] for dbeta.
//   ln_bwd_dgamma: cdiv(N, 32) blocks of 1024 threads; block j adds up the partial sums of columns
//                  32j .. 32j + 31.
#include <cuda_bf16.h>

extern "C" __global__ void ln_bwd_dx(const __nv_bfloat16* x, const __nv_bfloat16* dy,
                                     const __nv_bfloat16* gamma, const float* mean,
                                     const float* rstd, __nv_bfloat16* dx, float* dgamma,
                                     float* dbeta, float* part, int M, int N, int parts) {
  float* pg = part + (long long)blockIdx.x * 2 * N;
  float* pb = pg + N;
  for (int c = threadIdx.x; c < N; c += blockDim.x) pg[c] = pb[c] = 0.0f;
  const int r0 = (int)((long long)blockIdx.x * M / parts);
  const int r1 = (int)((long long)(blockIdx.x + 1) * M / parts);
  for (int r = r0; r < r1; ++r) {
    const long long base = (long long)r * N;
    float c1 = 0.0f, c2 = 0.0f;
    for (int c = threadIdx.x; c < N; c += blockDim.x) {
      float xh = (__bfloat162float(x[base + c]) - mean[r]) * rstd[r];
      float g = __bfloat162float(gamma[c]) * __bfloat162float(dy[base + c]);
      c1 += xh * g;
      c2 += g;
    }
    // TODO: c1 and c2 are this thread's share of the two row sums. Every thread needs the whole
    // row's sums, divided by N (a block reduction, as in puzzle 13).
    for (int c = threadIdx.x; c < N; c += blockDim.x) {
      float xh = (__bfloat162float(x[base + c]) - mean[r]) * rstd[r];
      float d = __bfloat162float(dy[base + c]);
      float g = __bfloat162float(gamma[c]) * d;
      dx[base + c] = __float2bfloat16(rstd[r] * (g - c2 - xh * c1));
      pg[c] += d * xh;
      pb[c] += d;
    }
  }
}

extern "C" __global__ void ln_bwd_dgamma(const __nv_bfloat16* x, const __nv_bfloat16* dy,
                                         const __nv_bfloat16* gamma, const float* mean,
                                         const float* rstd, __nv_bfloat16* dx, float* dgamma,
                                         float* dbeta, float* part, int M, int N, int parts) {
  const int c = blockIdx.x * 32 + threadIdx.x;
  if (threadIdx.x >= 32 || c >= N) return;
  // TODO: this takes block 0's partial sums only; dgamma and dbeta are the sums over all parts.
  dgamma[c] = part[c];
  dbeta[c] = part[N + c];
}
