// Corpus · v01-vadd-block32 · designed limiter: latency (the blocks-per-SM cap)
//
// What: c = a + b, one float per thread, 32-thread blocks (grid = cdiv(n, 32): 2^21 blocks at
// the timed n = 2^26).
// Run:  warpbook check 01-vector-add bench/perfmodel/corpus/v01-vadd-block32.cu
//
// Why it is slow: a Hopper SM holds at most 32 resident blocks, so 32-thread blocks leave it at
// 1024 threads (32 warps, half of the 2048-thread maximum). Each thread has exactly one load pair
// in flight (2 x 4 B), so an SM has about 8 KB of loads outstanding. Little's law asks for about
// 4.8 TB/s x ~0.7 us / 132 SMs = ~25 KB per SM to keep HBM busy, so the expected rate is about a
// third of the DRAM ceiling: roughly 1.3-1.6 TB/s, some 30% of speed of light (805 MB moved).
// @tune BLOCK=32
// @tune ITEMS=1

// One element per thread; the ITEMS loop (k * BLOCK + tid, coalesced) is kept so that the same
// kernel serves every block size. ITEMS = 1 here: a single iteration.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  const long long base = (long long)blockIdx.x * BLOCK * ITEMS + threadIdx.x;
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = base + (long long)k * BLOCK;
    if (i < n) c[i] = a[i] + b[i];
  }
}
