// Reference: one thread per output element (VEC columns per thread), the sum formed in double.
extern "C" __global__ void outer_add(const float* x, const float* y, float* out, int rows, int cols) {
  long long r = (long long)blockIdx.y * blockDim.y + threadIdx.y;
  long long k0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  if (r >= rows) return;
  for (long long k = k0; k < k0 + VEC && k < cols; ++k)
    out[r * cols + k] = (float)((double)x[r] + (double)y[k]);
}
