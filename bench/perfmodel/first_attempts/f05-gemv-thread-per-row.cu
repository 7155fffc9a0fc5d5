// First attempt · f05-gemv-thread-per-row · 18-gemv
// What: one thread per row of A: the first ROWS threads of each block (one warp) each walk a whole
// row, multiplying by x and summing in a register; the other threads of the block have no row.
// Naive pattern: one thread per row. The 32 lanes read 32 rows K floats apart, so each load
// touches 32 lines and the warp streams 32 rows through L1 at once; one busy warp per block.
// @tune THREADS=32
// @tune ROWS=32

extern "C" __global__ void gemv(const float* A, const float* x, float* y, int M, int K) {
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
  if (t >= ROWS) return;
  const long long r = (long long)blockIdx.x * ROWS + t;
  if (r >= M) return;
  const float* a = A + r * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * x[k];
  y[r] = acc;
}
