// RMSNorm, one block of 64 threads per row: y = x / sqrt(mean(x^2) + eps) * w, the sum of squares
// reduced with shuffles inside each warp and shared memory across the two warps.
extern "C" __global__ void rmsnorm(const float* x, const float* w, float* y, int cols, float eps) {
  __shared__ float part[2];
  const float* xr = x + (size_t)blockIdx.x * cols;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) ss += xr[c] * xr[c];
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_down_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = ss;
  __syncthreads();
  float total = part[0] + part[1];
  float scale = rsqrtf(total / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    y[(size_t)blockIdx.x * cols + c] = xr[c] * scale * w[c];
}
