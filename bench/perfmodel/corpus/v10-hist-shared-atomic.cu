// Corpus · v10-hist-shared-atomic · designed limiter: atomics
//
// What: the textbook privatised histogram: each block keeps ONE 256-bin histogram in shared
// memory (zeroed first), every thread adds each of its bytes with a shared atomicAdd, in a
// grid-stride loop over single bytes, and after a barrier the block adds its non-zero bins to
// `bins` with one global atomic per bin. GRID = 1056 blocks of 256 threads (8 per SM).
// Run:  warpbook check 10-histogram bench/perfmodel/corpus/v10-hist-shared-atomic.cu
//
// Why it is slow: the data is skewed (about half of all bytes are 0), so in a typical warp ~16
// lanes hit bin 0 in the same atomic instruction and are serialised, and the 8 warps of a block
// (64 per SM) contend for the same 256 words. At the timed 2^30 bytes an SM performs ~8 M shared
// atomics, ~250 K warp-level atomic instructions each replayed ~16 times or more: ~4 M+ cycles,
// ~2 ms, against ~0.24 ms for the 1.07 GB of DRAM traffic. Expected: ~10% of speed of light or
// less, the shared atomic unit saturated (the solution's 16 interleaved copies avoid exactly this).
// @tune BLOCK=256
// @tune GRID=1056

extern "C" __global__ void histogram(const unsigned char* __restrict__ data,
                                     unsigned int* __restrict__ bins, int n) {
  __shared__ unsigned int h[256];
  for (int k = threadIdx.x; k < 256; k += BLOCK) h[k] = 0u;
  __syncthreads();
  const long long step = (long long)gridDim.x * BLOCK;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += step)
    atomicAdd(&h[data[i]], 1u);
  __syncthreads();
  for (int k = threadIdx.x; k < 256; k += BLOCK)
    if (h[k]) atomicAdd(&bins[k], h[k]);
}
