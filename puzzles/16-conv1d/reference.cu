// Reference: one thread per output (ITEMS per thread), the sum in double precision.
extern "C" __global__ void conv1d(const float* x, const float* w, float* y, int channels, int length, int ksize) {
  long long c = blockIdx.y;
  long long t0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * ITEMS;
  for (long long t = t0; t < t0 + ITEMS && t < length; ++t) {
    double acc = 0.0;
    for (int k = 0; k < ksize; ++k) {
      long long i = t + k - (ksize - 1); // the input this tap reads; before the start it is 0
      if (i >= 0) acc += (double)w[c * ksize + k] * (double)x[c * length + i];
    }
    y[c * length + t] = (float)acc;
  }
}
