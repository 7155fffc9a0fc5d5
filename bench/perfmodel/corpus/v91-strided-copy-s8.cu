// Corpus · v91-strided-copy-s8 · designed limiter: sectors
//
// What: the strided-copy demo's kernel, unchanged, with STRIDE = 8: the array is viewed as a
// cdiv(n, 8) x 8 row-major matrix walked column by column, so neighbouring threads copy
// floats 8 apart; 256-thread blocks, every element copied exactly once.
// Run:  warpbook check 91-demo-strided-copy bench/perfmodel/corpus/v91-strided-copy-s8.cu
//
// Why: neighbouring lanes are 8 floats (32 B, one sector) apart: every lane its own sector, 32
// sectors per request for 128 useful bytes (sim: 32 per request, 4 ideal). 8x the sector traffic
// of the coalesced copy at every level below L1. Expected: about 1/8 of its rate, ~10% of speed
// of light.
// @tune STRIDE=8
// @tune BLOCK=256

extern "C" __global__ void strided_copy(const float* src, float* dst, int n, int stride) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long rows = (n + stride - 1) / stride;
  long long row = t % rows;         // consecutive threads: consecutive rows ...
  long long col = t / rows;         // ... of the same column
  long long i = row * stride + col; // so their addresses are `stride` floats apart
  if (col < stride && i < n) dst[i] = src[i];
}
