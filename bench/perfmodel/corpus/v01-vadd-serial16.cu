// Corpus · v01-vadd-serial16 · designed limiter: latency (one load pair in flight per thread)
//
// What: c = a + b with 16 elements per thread in a loop that must not be unrolled
// (`#pragma unroll 1`): element k of a thread is base + k * 128 + tid, so every warp access is
// still 128 contiguous bytes. 128-thread blocks, grid = cdiv(n, 2048): 32768 blocks at n = 2^26.
// Run:  warpbook check 01-vector-add bench/perfmodel/corpus/v01-vadd-serial16.cu
//
// Why it is slow: without unrolling (and without __restrict__, so the compiler may not hoist the
// next iteration's loads above this iteration's store) each thread waits one full DRAM round trip
// per element: load a[i], load b[i], wait ~0.6-1 us, add, store, next. An SM still holds 2048
// threads, but there are 16x fewer threads in the grid than in the one-element kernel, and only
// 2048 x 8 B = 16 KB in flight per SM at the very best; the per-iteration loop overhead and the
// store sitting between two round trips cut it further. Expected: about half of the DRAM
// ceiling or less (Little's law: 16 KB / 0.7 us x 132 SMs = 3.0 TB/s is the upper bound).
// @tune BLOCK=128
// @tune ITEMS=16

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  const long long base = (long long)blockIdx.x * BLOCK * ITEMS + threadIdx.x;
#pragma unroll 1
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = base + (long long)k * BLOCK;
    if (i < n) c[i] = a[i] + b[i];
  }
}
