// LayerNorm over rows, one warp per row (blockDim = 32): mean and variance with warp shuffles,
// y = (x - mean) * rsqrt(var + eps) * gamma + beta.
extern "C" __global__ void layernorm(const float* x, const float* gamma, const float* beta,
                                     float* y, int rows, int cols, float eps) {
  int row = blockIdx.x;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float s = 0.0f, ss = 0.0f;
  for (int c = threadIdx.x; c < cols; c += 32) {
    float v = xr[c];
    s += v;
    ss += v * v;
  }
  for (int o = 16; o > 0; o >>= 1) {
    s += __shfl_xor_sync(0xffffffffu, s, o);
    ss += __shfl_xor_sync(0xffffffffu, ss, o);
  }
  float mean = s / cols;
  float var = ss / cols - mean * mean;
  float r = rsqrtf(var + eps);
  for (int c = threadIdx.x; c < cols; c += 32)
    y[(size_t)row * cols + c] = (xr[c] - mean) * r * gamma[c] + beta[c];
}
