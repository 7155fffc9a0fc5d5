// Held-out · h13-rmsnorm-two-pass-alias · designed limiter: latency (loads serialised by stores)
//
// What: the straightforward two-pass kernel, one 512-thread block per row, plain pointers (no
// __restrict__). Pass 1: v = x + res, store h, accumulate v * v; block sum (shuffles + 16 warp
// sums in shared memory); pass 2: re-read h (just written, an L2 hit) and w, store
// y = h * rstd * w. Scalar, coalesced accesses, 8 elements per thread per pass at cols = 4096.
// Run:  warpbook check 14-rmsnorm-residual bench/perfmodel/heldout/h13-rmsnorm-two-pass-alias.cu
//
// Why it should be latency-bound: every trip of both loops stores through a pointer that may
// alias the arrays it loads, so the compiler cannot hoist the next trip's loads above this trip's
// store: each thread has one load pair (8 B) in flight at a time. 2048 resident threads per SM
// give ~16 KB outstanding, about two thirds of the ~25 KB Little's law asks for at DRAM latency
// (pass 2 waits only on L2, but no more in flight). DRAM traffic is 16 B per element: 1.07 GB
// at the timed 16384 x 4096, ~280 us at the read+write ceiling, plus 8 B per element of L2/L1
// re-reads (h and w). Expected: ~50-65% of speed of light.
// @tune BLOCK=512

extern "C" __global__ void rmsnorm_residual(const float* x, const float* res, const float* w,
                                            float* h, float* y, int rows, int cols, float eps) {
  __shared__ float warp_sums[BLOCK / 32];
  const long long base = (long long)blockIdx.x * cols;

  float ss = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) {
    const float v = x[base + c] + res[base + c];
    h[base + c] = v;
    ss += v * v;
  }
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = ss;
  __syncthreads();
  float total = 0.0f;
  for (int k = 0; k < BLOCK / 32; ++k) total += warp_sums[k];

  const float rstd = rsqrtf(total / cols + eps);
  for (int c = threadIdx.x; c < cols; c += BLOCK) y[base + c] = h[base + c] * rstd * w[c];
}
