// Corpus · v02-rowsum-warp32 · designed limiter: latency
//
// What: one 32-thread block (one warp) per row. Lane l adds columns l, l + 32, ... in a loop that
// is not unrolled (`#pragma unroll 1`), then 5 __shfl_down_sync steps reduce the warp and lane 0
// writes y[row].
// Run:  warpbook check 02-row-sum bench/perfmodel/corpus/v02-rowsum-warp32.cu
//
// Why it is slow: each lane has exactly one 4-byte load in flight (the next load waits for the
// loop's add), and 32-thread blocks hit the 32-blocks-per-SM cap at 1024 threads: ~4 KB
// outstanding per SM against the ~25 KB Little's law asks for (4.8 TB/s x ~0.7 us / 132 SMs).
// At the timed size (8192 x 8192) each warp walks 256 loads in a row; 8192 rows over 4224
// resident warps is ~2 waves. Expected: ~15-20% of the DRAM ceiling (268 MB read).
// @tune BLOCK=32

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  const float* row = x + (long long)blockIdx.x * cols;
  float s = 0.0f;
#pragma unroll 1
  for (int c = threadIdx.x; c < cols; c += 32) s += row[c];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (threadIdx.x == 0) y[blockIdx.x] = s;
}
