// First attempt · f26-cross-entropy-thread-per-row · 27-cross-entropy
// What: thread 0 of each block computes the row's loss alone: a pass for the maximum, a pass for
// the sum of exp(x - max), then loss = max - x[target] + log(sum); rows with target -100 get 0.
// The sum is kept in double: 128K float adds one after another drift past the puzzle's 1e-5
// relative tolerance on the GPU (about 1.2e-5 at V = 128256), where a tree of partial sums would
// not.
// Naive pattern: a one-thread-per-row loop over a 128K-wide vocabulary row: one lane of one warp
// walks 2 x V floats, a dependent FMNMX / DADD chain with one load at a time.
// @tune BLOCK=64

extern "C" __global__ void cross_entropy(const float* logits, const int* target, float* loss,
                                         int rows, int V) {
  if (threadIdx.x != 0) return;
  const float* x = logits + (long long)blockIdx.x * V;
  const int t = target[blockIdx.x];
  if (t == -100) {
    loss[blockIdx.x] = 0.0f;
    return;
  }
  float m = -INFINITY;
  for (int j = 0; j < V; ++j) m = fmaxf(m, x[j]);
  double s = 0.0;
  for (int j = 0; j < V; ++j) s += expf(x[j] - m);
  loss[blockIdx.x] = (m - x[t]) + (float)log(s);
}
