// Corpus · v01-vadd-unroll4 · designed limiter: dram
//
// What: c = a + b with ITEMS = 4 floats per thread, 256-thread blocks. The loop is fully
// unrolled and split in two: all 8 loads (4 of a, 4 of b, each a coalesced 128-byte warp access
// BLOCK floats apart) are issued before the first add, then the 4 stores.
// Run:  warpbook check 01-vector-add bench/perfmodel/corpus/v01-vadd-unroll4.cu
//
// Why: __restrict__ and the explicit two-phase loop let the compiler keep all 8 loads in flight
// per thread: 2048 threads x 32 B = 64 KB outstanding per SM, more than twice the ~25 KB that
// Little's law asks for at 4.8 TB/s (x ~0.7 us / 132 SMs). Nothing else is close to a limit
// (1 FLOP per 12 bytes, ~4 instructions per element), so HBM sets the time: expected near the
// measured copy rate, ~85-90% of the 4.8 TB/s datasheet (805 MB in ~190 us).
// @tune BLOCK=256
// @tune ITEMS=4

extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n) {
  const long long base = (long long)blockIdx.x * BLOCK * ITEMS + threadIdx.x;
  float x[ITEMS], y[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = base + (long long)k * BLOCK;
    x[k] = i < n ? a[i] : 0.0f;
    y[k] = i < n ? b[i] : 0.0f;
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = base + (long long)k * BLOCK;
    if (i < n) c[i] = x[k] + y[k];
  }
}
