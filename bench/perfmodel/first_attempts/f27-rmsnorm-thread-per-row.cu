// First attempt · f27-rmsnorm-thread-per-row · 14-rmsnorm-residual
// What: thread 0 of each block does the row: h = x + res and the sum of squares in one pass, then
// y = h * rstd * w in a second pass reading h back.
// Naive pattern: a one-thread-per-row loop: a single lane per block streams 3 rows of 4096 floats
// through loads one element at a time; h may alias x, so stores order the loads.
// @tune BLOCK=32

extern "C" __global__ void rmsnorm_residual(const float* x, const float* res, const float* w,
                                            float* h, float* y, int rows, int cols, float eps) {
  if (threadIdx.x != 0) return;
  const long long base = (long long)blockIdx.x * cols;
  float ss = 0.0f;
  for (int c = 0; c < cols; ++c) {
    const float v = x[base + c] + res[base + c];
    h[base + c] = v;
    ss += v * v;
  }
  const float rstd = rsqrtf(ss / cols + eps);
  for (int c = 0; c < cols; ++c) y[base + c] = h[base + c] * rstd * w[c];
}
