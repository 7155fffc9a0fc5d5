// First attempt · f07-softmax-thread-per-row · 03-softmax
// What: thread 0 of each block does the whole row: a pass for the maximum, a pass for the sum of
// exponentials, a pass writing the outputs.
// Naive pattern: one thread per row (three dependent walks over the row); 31 lanes of its warp
// and the rest of the block do nothing.
// @tune BLOCK=32

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols) {
  if (threadIdx.x != 0) return;
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, in[c]);
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += expf(in[c] - m);
  const float inv = 1.0f / s;
  for (int c = 0; c < cols; ++c) out[c] = expf(in[c] - m) * inv;
}
