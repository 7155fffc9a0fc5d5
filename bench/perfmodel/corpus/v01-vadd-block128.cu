// Corpus · v01-vadd-block128 · designed limiter: dram
//
// What: c = a + b, one float per thread, 128-thread blocks (2^19 blocks at n = 2^26).
// Run:  warpbook check 01-vector-add bench/perfmodel/corpus/v01-vadd-block128.cu
//
// Why: 16 blocks of 128 threads fill an SM (2048 threads, half the 32-block cap), so every SM
// has 2048 load pairs (16 KB) in flight with room to spare while blocks turn over. With a loaded
// latency well under 1 us this streams at close to the plain-copy rate of HBM3e: the textbook
// one-element kernel, expected near 75-85% of the 4.8 TB/s datasheet (805 MB in ~200-225 us).
// @tune BLOCK=128
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
