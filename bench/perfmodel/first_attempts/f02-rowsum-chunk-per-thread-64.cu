// First attempt · f02-rowsum-chunk-per-thread-64 · 02-row-sum
// What: one 64-thread block per row; each thread walks a contiguous chunk of cols / 64 floats and
// the two warps' partials are added by thread 0 from shared memory.
// Naive pattern: an uncoalesced per-thread row walk with few warps per row: lanes read addresses
// a chunk apart, each load touches 32 lines, and only the L1 keeps the walk from going to DRAM.
// @tune BLOCK=64

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
