// Reference: one thread per output (VEC per thread), in double precision.
extern "C" __global__ void swiglu(const float* gu, float* y, int rows, int cols) {
  long long r = blockIdx.y;
  long long j0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  for (long long j = j0; j < j0 + VEC && j < cols; ++j) {
    double g = gu[r * 2 * cols + j];
    double u = gu[r * 2 * cols + cols + j];
    y[r * cols + j] = (float)(g / (1.0 + exp(-g)) * u);
  }
}
