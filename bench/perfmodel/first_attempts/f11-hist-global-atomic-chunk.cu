// First attempt · f11-hist-global-atomic-chunk · 10-histogram
// What: each thread counts its own contiguous run of 16 bytes with one global atomicAdd per byte;
// enough blocks that every byte has a thread (no grid-stride loop beyond the GRID cap).
// Naive pattern: few-address global atomics on skewed data (about half the bytes hit bin 0), and a
// per-thread walk: lanes read bytes 16 apart.
// @tune BLOCK=256
// @tune GRID=65535

extern "C" __global__ void histogram(const unsigned char* data, unsigned int* bins, int n) {
  const long long step = (long long)gridDim.x * BLOCK * 16;
  for (long long base = ((long long)blockIdx.x * BLOCK + threadIdx.x) * 16; base < n; base += step)
    for (int j = 0; j < 16 && base + j < n; ++j) atomicAdd(&bins[data[base + j]], 1u);
}
