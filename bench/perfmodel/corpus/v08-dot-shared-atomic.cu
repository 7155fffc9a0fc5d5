// Corpus · v08-dot-shared-atomic · designed limiter: atomics
//
// What: dot_partial with no reduction tree: every thread walks its grid-stride share of a and b
// and adds EVERY product a[i] * b[i] (formed in double) with atomicAdd into one __shared__ double
// of its block; thread 0 zeroes it first and, after a barrier, writes it to partial[blockIdx.x].
// GRID = 1056 blocks of 256 threads (8 per SM, 2048 threads). dot_final adds the partial sums with
// a shuffle tree.
// Run:  warpbook check 08-dot-product bench/perfmodel/corpus/v08-dot-shared-atomic.cu
//
// Why it is slow: all 32 lanes of a warp update the same shared word, so each warp instruction is
// 32 serialised read-modify-writes, and the 64 warps of an SM queue on 8 words. At the timed
// n = 2^27 that is ~1 M same-address atomics per SM; at one per clock at best ~1 M cycles ~ 0.5 ms,
// twice the ~250 us the 1.07 GB of loads need, and several times worse where the SM runs a 64-bit
// shared add as a compare-and-swap loop (only one contending lane succeeds per round). Expected:
// a small fraction of speed of light (~5-20%), DRAM mostly idle, shared atomics the bottleneck.
// Why double: a float accumulator takes ~127 K additions per block in arbitrary order; at the
// timed size that misses the 1e-3 + 1e-4 |dot| tolerance in ~15% of checks (simulated), a double
// one never does.
// @tune BLOCK=256
// @tune GRID=1056

extern "C" __global__ void dot_partial(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ partial, int n) {
  __shared__ double acc;
  if (threadIdx.x == 0) acc = 0.0;
  __syncthreads();
  const long long step = (long long)gridDim.x * BLOCK;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += step)
    atomicAdd(&acc, (double)a[i] * (double)b[i]);
  __syncthreads();
  if (threadIdx.x == 0) partial[blockIdx.x] = (float)acc;
}

extern "C" __global__ void dot_final(const float* __restrict__ partial, float* __restrict__ out,
                                     int parts) {
  __shared__ float warp_sums[32];
  float v = 0.0f;
  for (int k = threadIdx.x; k < parts; k += BLOCK) v += partial[k];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < BLOCK / 32 ? warp_sums[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) out[0] = v;
  }
}
