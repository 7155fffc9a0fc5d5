// First attempt · f13-rowsum-shared-atomic · 02-row-sum
// What: one block per row; every thread sums its strided share of the row, adds it into one
// __shared__ accumulator with atomicAdd, and thread 0 stores the total.
// Naive pattern: same-address shared-memory atomics: all BLOCK threads update one shared word,
// 32 lanes of a warp serialised in the shared atomic unit.
// @tune BLOCK=512

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float total;
  const float* row = x + (long long)blockIdx.x * cols;
  if (threadIdx.x == 0) total = 0.0f;
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += row[c];
  atomicAdd(&total, s);
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = total;
}
