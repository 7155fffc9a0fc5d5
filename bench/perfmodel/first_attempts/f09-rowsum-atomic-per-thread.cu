// First attempt · f09-rowsum-atomic-per-thread · 02-row-sum
// What: one block per row; thread 0 zeroes y[row], then every thread sums its strided share of the
// row (coalesced) and adds it into y[row] with one global atomicAdd.
// Naive pattern: same-address global atomics: the BLOCK atomics of a row all land on one address
// and are applied one after another in the L2.
// @tune BLOCK=256

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  const float* row = x + (long long)blockIdx.x * cols;
  if (threadIdx.x == 0) y[blockIdx.x] = 0.0f;
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += row[c];
  atomicAdd(&y[blockIdx.x], s);
}
