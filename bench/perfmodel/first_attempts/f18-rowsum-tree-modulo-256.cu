// First attempt · f18-rowsum-tree-modulo-256 · 02-row-sum
// What: one 256-thread block per row; strided per-thread sums, then the interleaved shared-memory
// tree (t % (2 * stride) == 0 adds part[t + stride]) with a __syncthreads after each of 8 steps.
// Naive pattern: a barrier-heavy block reduction with divergent, scattered active threads.
// @tune BLOCK=256

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float part[BLOCK];
  const float* row = x + (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  float s = 0.0f;
  for (int c = t; c < cols; c += BLOCK) s += row[c];
  part[t] = s;
  __syncthreads();
  for (int stride = 1; stride < BLOCK; stride *= 2) {
    if (t % (2 * stride) == 0) part[t] += part[t + stride];
    __syncthreads();
  }
  if (t == 0) y[blockIdx.x] = part[0];
}
