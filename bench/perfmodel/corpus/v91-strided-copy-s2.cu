// Corpus · v91-strided-copy-s2 · designed limiter: sectors
//
// What: the strided-copy demo's kernel, unchanged, with STRIDE = 2: the array is viewed as a
// cdiv(n, 2) x 2 row-major matrix walked column by column, so neighbouring threads copy
// floats 2 apart; 256-thread blocks, every element copied exactly once.
// Run:  warpbook check 91-demo-strided-copy bench/perfmodel/corpus/v91-strided-copy-s2.cu
//
// Why: neighbouring lanes are 2 floats (8 B) apart, so a warp's 32 loads span 256 B: 8 sectors
// per request, half of each sector wasted (sim: global_load_sectors / requests = 8 where the
// coalesced copy has 4). Stores are strided the same way. DRAM fetches whole sectors, but the
// other half is needed by thread t + n/2, half a grid later, long after it has left L2 at
// n = 2^26 (256 MiB per array against a 60 MB L2): ~2x the DRAM read traffic and twice the L1/L2
// sectors. Expected: about half of the coalesced copy's rate.
// @tune STRIDE=2
// @tune BLOCK=256

extern "C" __global__ void strided_copy(const float* src, float* dst, int n, int stride) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long rows = (n + stride - 1) / stride;
  long long row = t % rows;         // consecutive threads: consecutive rows ...
  long long col = t / rows;         // ... of the same column
  long long i = row * stride + col; // so their addresses are `stride` floats apart
  if (col < stride && i < n) dst[i] = src[i];
}
