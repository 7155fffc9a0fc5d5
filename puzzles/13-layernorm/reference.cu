// Reference: thread 0 of each block, two passes over the row in double precision.
extern "C" __global__ void layernorm(const float* x, const float* w, const float* b, float* y,
                                     int rows, int cols, float eps) {
  if (threadIdx.x != 0) return;
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  double mean = 0.0;
  for (int c = 0; c < cols; ++c) mean += in[c];
  mean /= cols;
  double var = 0.0;
  for (int c = 0; c < cols; ++c) var += (in[c] - mean) * (in[c] - mean);
  var /= cols;
  double rstd = 1.0 / sqrt(var + (double)eps);
  for (int c = 0; c < cols; ++c) out[c] = (float)((in[c] - mean) * rstd * w[c] + b[c]);
}
