// First attempt · f06-gemv-thread-per-row-8 · 18-gemv
// What: one thread per row, 8 rows per block: thread y = 0..7 with x = 0 walks row y of the block's
// group, the other 31 lanes of each warp idle.
// Naive pattern: one thread per row, one active lane per warp: each warp has a single dependent
// walk over K floats, loads one 4-byte element at a time, and relies on L1 for the rest of a line.
// @tune THREADS=32
// @tune ROWS=8

extern "C" __global__ void gemv(const float* A, const float* x, float* y, int M, int K) {
  const long long r = (long long)blockIdx.x * ROWS + threadIdx.y;
  if (threadIdx.x != 0 || r >= M) return;
  const float* a = A + r * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * x[k];
  y[r] = acc;
}
