// First attempt · f21-layernorm-tree-sequential · 13-layernorm
// What: one 512-thread block per row; the mean and then the variance each go through a shared-
// memory tree with sequential addressing (t < stride adds part[t + stride]) and a __syncthreads
// after every step, down to stride 1; then every thread normalises its strided share.
// Naive pattern: a barrier-heavy block reduction: 18 barriers per row, the last 5 steps with a
// single busy warp while 15 warps wait.
// @tune BLOCK=512

extern "C" __global__ void layernorm(const float* x, const float* w, const float* b, float* y,
                                     int rows, int cols, float eps) {
  __shared__ float part[BLOCK];
  const long long base = (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  float s = 0.0f;
  for (int c = t; c < cols; c += BLOCK) s += x[base + c];
  part[t] = s;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (t < stride) part[t] += part[t + stride];
    __syncthreads();
  }
  const float mean = part[0] / cols;
  __syncthreads();
  float v = 0.0f;
  for (int c = t; c < cols; c += BLOCK) {
    const float d = x[base + c] - mean;
    v += d * d;
  }
  part[t] = v;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (t < stride) part[t] += part[t + stride];
    __syncthreads();
  }
  const float rstd = rsqrtf(part[0] / cols + eps);
  for (int c = t; c < cols; c += BLOCK) y[base + c] = (x[base + c] - mean) * rstd * w[c] + b[c];
}
