// Held-out · h12-layernorm-smem-tree · designed limiter: barrier
//
// What: one 1024-thread block per row with classic shared-memory tree reductions and no warp
// shuffles: each sum is written to s[1024], then halved 10 times (s[t] += s[t + stride] for
// t < stride, a __syncthreads after every level). Pass 1 sums x (tree 1: the mean); pass 2 sums
// (x - mean)^2 re-reading x from global memory (tree 2: the variance); pass 3 re-reads x, reads
// w and b and writes y. Scalar, coalesced loads, 4 elements per thread per pass at cols = 4096.
// Run:  warpbook check 13-layernorm bench/perfmodel/heldout/h12-layernorm-smem-tree.cu
//
// Why it should be barrier-bound: a row costs 2 x 11 block-wide barriers, each level a
// dependent shared load / add / store round trip (~60-80 cycles) across 32 warps, against only
// 12 loads and 4 stores per thread. ~40 registers x 1024 threads leave room for ONE block per SM,
// so nothing else runs while a block waits at its barriers (or on its first pass's loads). At the
// timed 16384 x 4096: ~124 rows per SM, ~2700 barriers per SM, ~1800 cycles of tree per row.
// DRAM traffic is 8 B per element (537 MB, ~140 us at the read+write ceiling); the re-reads of x
// hit L1 (one 16 KB row per SM). Expected: ~35-50% of speed of light, the trees and the lone
// block's stalls, not DRAM, setting the pace.
// @tune BLOCK=1024

__device__ float tree_sum(float v, float* s) {
  const int t = threadIdx.x;
  s[t] = v;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  const float total = s[0];
  __syncthreads(); // s is reused by the next reduction
  return total;
}

extern "C" __global__ void layernorm(const float* x, const float* w, const float* b, float* y,
                                     int rows, int cols, float eps) {
  __shared__ float s[BLOCK];
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;

  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) sum += in[c];
  const float mean = tree_sum(sum, s) / cols;

  float sq = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) {
    const float d = in[c] - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(tree_sum(sq, s) / cols + eps);

  for (int c = threadIdx.x; c < cols; c += BLOCK) out[c] = (in[c] - mean) * rstd * w[c] + b[c];
}
