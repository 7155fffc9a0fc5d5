// Experiment (README.md here): puzzle 14's reference, but the idle threads wait at a barrier at the
// end instead of returning, so their warps stay resident for the whole row.
extern "C" __global__ void rmsnorm_residual(const float* x, const float* res, const float* w,
                                            float* h, float* y, int rows, int cols, float eps) {
  if (threadIdx.x == 0) {
    long long base = (long long)blockIdx.x * cols;
    double ss = 0.0;
    for (int c = 0; c < cols; ++c) {
      double v = (double)x[base + c] + (double)res[base + c];
      h[base + c] = (float)v;
      ss += v * v;
    }
    double rstd = 1.0 / sqrt(ss / cols + (double)eps);
    for (int c = 0; c < cols; ++c)
      y[base + c] = (float)(((double)x[base + c] + (double)res[base + c]) * rstd * w[c]);
  }
  __syncthreads();
}
