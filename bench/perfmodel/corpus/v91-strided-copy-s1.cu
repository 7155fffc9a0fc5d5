// Corpus · v91-strided-copy-s1 · designed limiter: dram
//
// What: the strided-copy demo's kernel, unchanged, with STRIDE = 1: the array is viewed as a
// cdiv(n, 1) x 1 row-major matrix walked column by column, so neighbouring threads copy
// floats 1 apart; 256-thread blocks, every element copied exactly once.
// Run:  warpbook check 91-demo-strided-copy bench/perfmodel/corpus/v91-strided-copy-s1.cu
//
// Why: with STRIDE = 1 the array is a single column (rows = n), so thread t takes row t: the
// coalesced copy, 4 sectors per warp request, every byte used. The kernel still pays a 64-bit
// division and remainder per thread (t / rows, t % rows) and grid = cdiv(n, 256) one-float
// threads; that is ~2x the instructions of the plain copy but far below the issue limit.
// Expected: DRAM-bound like 90-demo-coalesced-copy, about 75-85% of the 4.8 TB/s datasheet.
// @tune STRIDE=1
// @tune BLOCK=256

extern "C" __global__ void strided_copy(const float* src, float* dst, int n, int stride) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long rows = (n + stride - 1) / stride;
  long long row = t % rows;         // consecutive threads: consecutive rows ...
  long long col = t / rows;         // ... of the same column
  long long i = row * stride + col; // so their addresses are `stride` floats apart
  if (col < stride && i < n) dst[i] = src[i];
}
