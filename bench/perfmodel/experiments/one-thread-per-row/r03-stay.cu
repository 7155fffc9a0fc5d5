// Experiment (README.md here): puzzle 03's reference, but the idle threads wait at a barrier at the
// end instead of returning, so their warps stay resident for the whole row.
extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols) {
  if (threadIdx.x == 0) {
    const float* in = x + (long long)blockIdx.x * cols;
    float* out = y + (long long)blockIdx.x * cols;
    double m = -1e308;
    for (int c = 0; c < cols; ++c) m = in[c] > m ? in[c] : m;
    double s = 0.0;
    for (int c = 0; c < cols; ++c) s += exp((double)in[c] - m);
    for (int c = 0; c < cols; ++c) out[c] = (float)(exp((double)in[c] - m) / s);
  }
  __syncthreads();
}
