// 16 · Causal depthwise 1-D convolution. x and y are channels x length, w is channels x ksize:
//     y[c][t] = sum over k = 0..ksize-1 of w[c][k] * x[c][t + k - (ksize - 1)]
// Inputs before the start of the sequence (negative index) count as 0. ksize <= 64.
// Launch: grid (cdiv(length, BLOCK * ITEMS), channels), BLOCK threads; blockIdx.y is the channel.
// ITEMS = 1 by default: one output per thread.

extern "C" __global__ void conv1d(const float* x, const float* w, float* y, int channels, int length, int ksize) {
  long long c = blockIdx.y;
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= length) return;
  float acc = 0.0f;
  for (int k = 0; k < ksize; ++k) {
    // TODO: output t must see the inputs t - (ksize - 1) ... t (causal: nothing from the future),
    // and inputs before index 0 are zero. This reads t ... t + ksize - 1 instead.
    long long i = t + k;
    if (i < length) acc += w[c * ksize + k] * x[c * length + i];
  }
  y[c * length + t] = acc;
}
