// 02 · Row sum: y[r] = sum of row r of x (rows x cols, row-major).
// One block per row; BLOCK threads per block (a power of two, 32..1024).

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x;
  const float* row = x + (long long)r * cols;

  // TODO: every thread sums a slice of the row: threadIdx.x, threadIdx.x + blockDim.x, ...
  float partial = 0.0f;
  if (threadIdx.x < cols) partial = row[threadIdx.x];

  // TODO: combine the partial sums of all threads of the block (shared memory or warp shuffles),
  // then one thread writes y[r].
  if (threadIdx.x == 0) y[r] = partial;
}
