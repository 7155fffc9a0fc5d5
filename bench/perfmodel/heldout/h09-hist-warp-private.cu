// Held-out · h09-hist-warp-private · designed limiter: atomics
//
// What: a histogram with one private 256-bin copy per WARP in shared memory (16 warps x 1 KB =
// 16 KB per 512-thread block). A grid-stride loop reads 4 bytes per thread per trip as one
// 32-bit word (128 B per warp request) and does 4 shared atomicAdds into its warp's copy; at the
// end thread b < 256 adds bin b over the 16 copies and makes one global atomicAdd if non-zero.
// GRID = 528 blocks of BLOCK = 512 threads: 4 blocks (2048 threads) per SM, one wave.
// Run:  warpbook check 10-histogram bench/perfmodel/heldout/h09-hist-warp-private.cu
//
// Why it should be atomics-bound: per-warp copies remove contention BETWEEN warps, but not the
// collisions inside one atomic instruction: the data is skewed (about half of all bytes are 0),
// so in a typical warp-wide atomic ~16 lanes hit bin 0 and are serialised. At the timed 2^30
// bytes an SM issues ~250 K warp-level shared atomics (8.1 M bytes / 32), each taking ~16 or more
// passes: ~4 M cycles, ~2 ms, against ~0.25 ms for the 1.07 GB of DRAM reads. Expected: ~10% of
// speed of light, close to a per-block histogram.
// @tune BLOCK=512
// @tune GRID=528

#define WARPS (BLOCK / 32)

extern "C" __global__ void histogram(const unsigned char* __restrict__ data,
                                     unsigned int* __restrict__ bins, int n) {
  __shared__ unsigned int h[WARPS][256];
  for (int k = threadIdx.x; k < WARPS * 256; k += BLOCK) (&h[0][0])[k] = 0u;
  __syncthreads();
  unsigned int* mine = h[threadIdx.x >> 5];

  const long long words = n >> 2;
  const unsigned int* data4 = reinterpret_cast<const unsigned int*>(data);
  const long long stride = (long long)gridDim.x * BLOCK;
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < words; i += stride) {
    const unsigned int w = data4[i];
    atomicAdd(&mine[w & 0xffu], 1u);
    atomicAdd(&mine[(w >> 8) & 0xffu], 1u);
    atomicAdd(&mine[(w >> 16) & 0xffu], 1u);
    atomicAdd(&mine[w >> 24], 1u);
  }
  // The last n % 4 bytes: block 0, one thread each.
  if (blockIdx.x == 0 && threadIdx.x < (n & 3)) atomicAdd(&mine[data[words * 4 + threadIdx.x]], 1u);
  __syncthreads();

  for (int b = threadIdx.x; b < 256; b += BLOCK) {
    unsigned int t = 0u;
    for (int w = 0; w < WARPS; ++w) t += h[w][b];
    if (t) atomicAdd(&bins[b], t);
  }
}
