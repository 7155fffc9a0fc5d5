// Corpus · v90-copy-block32 · designed limiter: latency (the blocks-per-SM cap)
//
// What: the coalesced-copy demo (dst[i] = src[i], one float per thread) with 32-thread blocks:
// 2^21 blocks at the timed n = 2^26.
// Run:  warpbook check 90-demo-coalesced-copy bench/perfmodel/corpus/v90-copy-block32.cu
//
// Why it is slow: at most 32 blocks are resident per Hopper SM, so 32-thread blocks give 1024
// threads per SM, each with one 4-byte load in flight: about 4 KB outstanding per SM, where
// Little's law wants ~25 KB (4.8 TB/s x ~0.7 us / 132 SMs). Expected: a small fraction of the DRAM
// ceiling, around 20-30% of speed of light (537 MB moved).
// @tune BLOCK=32

// The demo's kernel, unchanged: thread i copies element i.
extern "C" __global__ void coalesced_copy(const float* src, float* dst, int n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}
