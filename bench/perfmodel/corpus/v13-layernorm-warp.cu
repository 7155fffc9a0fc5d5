// Corpus · v13-layernorm-warp · designed limiter: latency
//
// What: one 32-thread block (one warp) per row, three lane-strided passes over the row in global
// memory: the mean, the variance of (x - mean) (two-pass, exact enough for the large-mean case),
// then y = (x - mean) * rstd * w + b. Sums are per lane, then 5 xor-shuffle steps. The loops are
// not unrolled: one load of x in flight per lane (plus w and b in the last pass, which hit L2).
// Run:  warpbook check 13-layernorm bench/perfmodel/corpus/v13-layernorm-warp.cu
//
// Why it is slow: 32-thread blocks stop at the 32-blocks-per-SM cap (1024 threads per SM); one
// 4-byte load per lane in flight is ~4 KB outstanding per SM against the ~25 KB Little's law
// wants. The row (16 KB at 4096 columns) is read three times; the 4224 resident rows are 69 MB,
// a bit more than the L2, so part of the re-reads reach DRAM. Expected: ~10% of speed of light
// (16384 x 4096 rows: 537 MB in the cost model), limited by single loads waiting on memory.
// @tune BLOCK=32

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void layernorm(const float* x, const float* w, const float* b, float* y,
                                     int rows, int cols, float eps) {
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  const int lane = threadIdx.x;
  float s = 0.0f;
#pragma unroll 1
  for (int c = lane; c < cols; c += 32) s += in[c];
  const float mean = warp_sum(s) / cols;
  float q = 0.0f;
#pragma unroll 1
  for (int c = lane; c < cols; c += 32) {
    const float d = in[c] - mean;
    q = fmaf(d, d, q);
  }
  const float rstd = rsqrtf(warp_sum(q) / cols + eps);
#pragma unroll 1
  for (int c = lane; c < cols; c += 32) out[c] = fmaf((in[c] - mean) * rstd, w[c], b[c]);
}
