// Corpus · v91-strided-copy-s4 · designed limiter: sectors
//
// What: the strided-copy demo's kernel, unchanged, with STRIDE = 4: the array is viewed as a
// cdiv(n, 4) x 4 row-major matrix walked column by column, so neighbouring threads copy
// floats 4 apart; 256-thread blocks, every element copied exactly once.
// Run:  warpbook check 91-demo-strided-copy bench/perfmodel/corpus/v91-strided-copy-s4.cu
//
// Why: neighbouring lanes are 4 floats (16 B) apart, so a warp request touches 16 sectors
// (sim: 16 sectors per request, 4 ideal) and uses a quarter of every sector it fetches; the rest
// is re-fetched by later threads long after it left the 60 MB L2. ~4x the sector traffic of the
// coalesced copy on both loads and stores. Expected: about a quarter of its rate.
// @tune STRIDE=4
// @tune BLOCK=256

extern "C" __global__ void strided_copy(const float* src, float* dst, int n, int stride) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long rows = (n + stride - 1) / stride;
  long long row = t % rows;         // consecutive threads: consecutive rows ...
  long long col = t / rows;         // ... of the same column
  long long i = row * stride + col; // so their addresses are `stride` floats apart
  if (col < stride && i < n) dst[i] = src[i];
}
