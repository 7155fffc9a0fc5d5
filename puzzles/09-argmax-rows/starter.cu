// 09 · Argmax of each row: idx[r] = the column of the largest element of row r of x
// (rows x cols, row-major). When the largest value appears more than once, the LOWEST column wins.
// One block per row, BLOCK threads (a power of two, 32..1024).

extern "C" __global__ void argmax_rows(const float* x, int* idx, int rows, int cols) {
  const float* row = x + (long long)blockIdx.x * cols;

  // Each thread scans the columns threadIdx.x, threadIdx.x + blockDim.x, ...
  float best = 0.0f; // TODO: is 0 a safe starting value? (some rows are all negative)
  int best_col = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    if (row[c] >= best) { // TODO: ties must go to the lowest column
      best = row[c];
      best_col = c;
    }
  }

  // TODO: combine the (best, best_col) pairs of all threads of the block; the pair with the larger
  // value wins, and between equal values the lower column.
  if (threadIdx.x == 0) idx[blockIdx.x] = best_col;
}
