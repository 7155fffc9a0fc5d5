// Reference: thread x = 0 of each row group walks the row, accumulating in double precision.
extern "C" __global__ void gemv(const float* A, const float* x, float* y, int M, int K) {
  long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y;
  if (threadIdx.x != 0 || r >= M) return;
  double acc = 0.0;
  for (int k = 0; k < K; ++k) acc += (double)A[r * K + k] * (double)x[k];
  y[r] = (float)acc;
}
