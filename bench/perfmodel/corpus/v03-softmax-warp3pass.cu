// Corpus · v03-softmax-warp3pass · designed limiter: latency
//
// What: one 32-thread block (one warp) per row and the textbook three passes over global memory:
// the row max (xor-shuffle max), the sum of exp(x - max) (xor-shuffle sum), then
// y = exp(x - max) / sum. Each pass is a lane-strided loop (lane l takes columns l, l + 32, ...)
// that is not unrolled, so a lane has one 4-byte load in flight at a time.
// Run:  warpbook check 03-softmax bench/perfmodel/corpus/v03-softmax-warp3pass.cu
//
// Why it is slow: 32-thread blocks stop at the 32-blocks-per-SM cap (1024 threads per SM), and
// one load per lane in flight gives ~4 KB outstanding per SM where Little's law wants ~25 KB
// (4.8 TB/s x ~0.7 us / 132 SMs). The row (32 KB at 8192 columns) is read three times; the
// 4224 rows resident at once hold 138 MB, more than the 60 MB L2, so the re-reads mostly go to
// DRAM as well: ~16 B moved per element against the 8 B of the cost model. Expected: a few
// percent to ~10% of speed of light, the time spent waiting on single loads.
// @tune BLOCK=32

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols) {
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  const int lane = threadIdx.x;
  float m = -INFINITY;
#pragma unroll 1
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, in[c]);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.0f;
#pragma unroll 1
  for (int c = lane; c < cols; c += 32) s += __expf(in[c] - m);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  const float inv = 1.0f / s;
#pragma unroll 1
  for (int c = lane; c < cols; c += 32) out[c] = __expf(in[c] - m) * inv;
}
