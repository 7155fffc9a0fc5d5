// First attempt · f01-rowsum-chunk-per-thread · 02-row-sum
// What: one block per row; each thread sums its own contiguous chunk of the row (cols / BLOCK
// consecutive floats), then the partial sums meet in shared memory and thread 0 adds them.
// Naive pattern: an uncoalesced per-thread row walk. At each step the 32 lanes of a warp read
// addresses a whole chunk apart (32 cache lines per load instead of one), so the walk leans on
// L1 hits for the rest of each line and has few loads in flight.
// @tune BLOCK=256

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float part[BLOCK];
  const float* row = x + (long long)blockIdx.x * cols;
  const int chunk = (cols + BLOCK - 1) / BLOCK;
  const int begin = threadIdx.x * chunk;
  const int end = min(begin + chunk, cols);
  float s = 0.0f;
  for (int c = begin; c < end; ++c) s += row[c];
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int k = 0; k < BLOCK; ++k) t += part[k];
    y[blockIdx.x] = t;
  }
}
