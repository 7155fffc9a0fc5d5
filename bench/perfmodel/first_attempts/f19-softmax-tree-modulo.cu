// First attempt · f19-softmax-tree-modulo · 03-softmax
// What: one 1024-thread block per row; a strided pass for the per-thread maximum, an interleaved
// shared-memory tree for the row maximum, a strided pass for the sum of exponentials, the same tree
// for the row sum, and a strided pass writing the outputs.
// Naive pattern: two barrier-heavy t % (2 * stride) trees per row (20 barriers), most warps
// waiting while a few threads work.
// @tune BLOCK=1024

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols) {
  __shared__ float part[BLOCK];
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  float m = -INFINITY;
  for (int c = t; c < cols; c += BLOCK) m = fmaxf(m, in[c]);
  part[t] = m;
  __syncthreads();
  for (int stride = 1; stride < BLOCK; stride *= 2) {
    if (t % (2 * stride) == 0) part[t] = fmaxf(part[t], part[t + stride]);
    __syncthreads();
  }
  m = part[0];
  __syncthreads();
  float s = 0.0f;
  for (int c = t; c < cols; c += BLOCK) s += expf(in[c] - m);
  part[t] = s;
  __syncthreads();
  for (int stride = 1; stride < BLOCK; stride *= 2) {
    if (t % (2 * stride) == 0) part[t] += part[t + stride];
    __syncthreads();
  }
  const float inv = 1.0f / part[0];
  for (int c = t; c < cols; c += BLOCK) out[c] = expf(in[c] - m) * inv;
}
