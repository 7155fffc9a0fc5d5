// Held-out · h02-rowsum-chunked · designed limiter: sectors
//
// What: one 256-thread block per row (the puzzle's launch); the row is cut into 256 contiguous
// chunks of cdiv(cols, 256) floats and thread t adds up chunk t in a plain loop, then a warp
// shuffle reduction and one shared-memory step over the 8 warp sums. The "each thread takes a
// contiguous piece" split that feels natural on a CPU.
// Run:  warpbook check 02-row-sum bench/perfmodel/heldout/h02-rowsum-chunked.cu
//
// Why it should be slow: at the timed 8192 x 8192 a chunk is 32 floats = 128 B, so the 32 lanes
// of a warp load from 32 different 128-byte lines in every instruction: 32 sectors per request
// instead of 4 (8x), and one L1 tag lookup per lane. Each lane then walks its own line for 31
// more loads, which can hit in L1 only while the SM's 8 resident blocks (8 x 32 KB = 256 KB of
// rows) fit there; they do not quite, so some lines are fetched again. 268 MB is the minimum
// traffic (~60 us at the measured read ceiling); the L1 request and sector rate, not DRAM, sets
// the pace. Expected: a small fraction of the DRAM ceiling.
// @tune BLOCK=256

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float warp_sums[BLOCK / 32];
  const float* row = x + (long long)blockIdx.x * cols;
  const int chunk = (cols + BLOCK - 1) / BLOCK;
  const int begin = threadIdx.x * chunk;
  const int end = min(begin + chunk, cols);

  float s = 0.0f;
  for (int c = begin; c < end; ++c) s += row[c];

  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int w = 0; w < BLOCK / 32; ++w) t += warp_sums[w];
    y[blockIdx.x] = t;
  }
}
