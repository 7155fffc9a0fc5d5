// First attempt · f17-rowsum-tree-modulo · 02-row-sum
// What: one 1024-thread block per row; each thread sums its strided share, then a shared-memory
// tree: at step `stride` thread t adds part[t + stride] when t % (2 * stride) == 0, with a
// __syncthreads after every step.
// Naive pattern: a barrier-heavy block reduction with interleaved addressing: 10 barriers, and the
// active threads are scattered over all 32 warps (divergent) until the last steps, where one busy
// warp keeps the block waiting.
// @tune BLOCK=1024

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
