// Corpus · v02-rowsum-atomic · designed limiter: atomics
//
// What: one 1024-thread block per row. Thread 0 zeroes the row's accumulator, a barrier, then
// every thread adds its strided share of the row (columns t, t + 1024, ...) in a register and
// folds it into the accumulator with one global atomicAdd: 1024 atomics on the same address per
// row. The accumulator is y[row] itself, used as a 32-bit fixed-point integer (units of 2^-20);
// after a second barrier thread 0 reads it back and stores the float.
// Run:  warpbook check 02-row-sum bench/perfmodel/corpus/v02-rowsum-atomic.cu
//
// Why it is slow: atomics on one address are applied one at a time at the L2 slice that owns it:
// a warp's 32 same-address atomics arrive as one request but are 32 serial updates. At the timed
// size that is 8192 rows x 1024 = 8.4 M atomic updates on 8192 addresses, 1024 per address, while
// each thread only loads 8 floats (32 B, all in flight) per atomic. The 264 rows resident at a
// time (2 blocks per SM) each queue 1024 updates at their own slice. Expected: the atomic units,
// not DRAM, set the pace; time well above the ~60 us DRAM floor (268 MB).
// Why fixed point: float atomics in arbitrary order accumulate 1024 roundings at the magnitude of
// the row sum; a simulation of the timed size puts a few % of checks past the 1e-4 tolerance on
// some row. Integer atomics are exact and order-free: the only error is rounding each partial to
// 2^-20 (<= 4.8e-7). The range, +-2048, is > 10 standard deviations of any checked row sum.
// @tune BLOCK=1024

#define SCALE 1048576.0f // 2^20: fixed-point units per 1.0

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  const float* row = x + (long long)blockIdx.x * cols;
  int* acc = reinterpret_cast<int*>(y) + blockIdx.x; // y[row]'s 4 bytes hold the running sum
  if (threadIdx.x == 0) *acc = 0;                    // y is poisoned before the run
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += row[c];
  atomicAdd(acc, __float2int_rn(s * SCALE));
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = (float)atomicAdd(acc, 0) * (1.0f / SCALE);
}
