// Corpus · v01-vadd-block1024 · designed limiter: dram
//
// What: c = a + b, one float per thread, 1024-thread blocks (65536 blocks at n = 2^26).
// Run:  warpbook check 01-vector-add bench/perfmodel/corpus/v01-vadd-block1024.cu
//
// Why: two 1024-thread blocks fill an SM (2048 threads, 16 KB of loads in flight), as with
// 128-thread blocks, but in coarse steps: a block's 32 warps finish at different times and the
// SM is only refilled when all 1024 threads have left. 65536 blocks over 264 slots is 248 waves,
// so the wave tail is negligible. Expected: DRAM-bound like BLOCK=128, maybe a few % slower.
// @tune BLOCK=1024
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
