// Corpus · v01-vadd-block64 · designed limiter: latency (too few bytes in flight per SM)
//
// What: c = a + b, one float per thread, 64-thread blocks (2^20 blocks at n = 2^26).
// Run:  warpbook check 01-vector-add bench/perfmodel/corpus/v01-vadd-block64.cu
//
// Why: at 64 threads per block the 32-blocks-per-SM cap and the 2048-threads-per-SM cap coincide,
// so an SM is full only while all 32 of its blocks are resident; every block that retires leaves
// a 64-thread hole until the next one is scheduled (1M short-lived blocks). At best each SM has
// 2048 threads x 8 B = 16 KB of loads in flight, below the ~25 KB Little's law asks for
// (4.8 TB/s x ~0.7 us / 132 SMs). Expected: between the 32-thread blocks (~1/3 of the ceiling)
// and the 128-thread blocks; the point of this entry is to sit on the latency side of that line.
// @tune BLOCK=64
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
