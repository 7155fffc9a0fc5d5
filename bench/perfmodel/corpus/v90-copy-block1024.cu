// Corpus · v90-copy-block1024 · designed limiter: dram
//
// What: the coalesced-copy demo (dst[i] = src[i], one float per thread) with 1024-thread blocks:
// 65536 blocks at the timed n = 2^26.
// Run:  warpbook check 90-demo-coalesced-copy bench/perfmodel/corpus/v90-copy-block1024.cu
//
// Why: two blocks fill an SM (2048 threads), 8 KB of loads in flight per SM plus the stores
// draining behind them; a copy moves as many bytes out as in, and HBM's read/write turnaround,
// not the issue rate (3 instructions per element), sets the time. Expected: near the default
// 256-thread demo, a one-float copy close to the DRAM ceiling (the probe's best copy is ~4 TB/s).
// @tune BLOCK=1024

// The demo's kernel, unchanged: thread i copies element i.
extern "C" __global__ void coalesced_copy(const float* src, float* dst, int n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}
