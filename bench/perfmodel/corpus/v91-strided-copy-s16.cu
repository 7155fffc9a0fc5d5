// Corpus · v91-strided-copy-s16 · designed limiter: sectors
//
// What: the strided-copy demo's kernel, unchanged, with STRIDE = 16: the array is viewed as a
// cdiv(n, 16) x 16 row-major matrix walked column by column, so neighbouring threads copy
// floats 16 apart; 256-thread blocks, every element copied exactly once.
// Run:  warpbook check 91-demo-strided-copy bench/perfmodel/corpus/v91-strided-copy-s16.cu
//
// Why: neighbouring lanes are 16 floats (64 B) apart: still 32 sectors per request (the worst a
// 4-byte access can do), 8x the sector traffic of the coalesced copy, now spread over twice as
// many 128-byte lines (each lane its own line every other sector), which halves the use DRAM gets
// out of each row opening as well. Expected: like STRIDE = 8 or a little slower, ~10% of SoL.
// @tune STRIDE=16
// @tune BLOCK=256

extern "C" __global__ void strided_copy(const float* src, float* dst, int n, int stride) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long rows = (n + stride - 1) / stride;
  long long row = t % rows;         // consecutive threads: consecutive rows ...
  long long col = t / rows;         // ... of the same column
  long long i = row * stride + col; // so their addresses are `stride` floats apart
  if (col < stride && i < n) dst[i] = src[i];
}
