// First attempt · f10-gemv-atomic-per-thread · 18-gemv
// What: THREADS threads per row (the puzzle's layout, a warp per row); lane 0 zeroes y[row], then
// each lane sums its strided share of the row times x and adds it into y[row] with atomicAdd.
// Naive pattern: same-address global atomics in place of a warp reduction: 32 atomics per row on
// one address, serialised at the L2.
// @tune THREADS=32
// @tune ROWS=8

extern "C" __global__ void gemv(const float* A, const float* x, float* y, int M, int K) {
  const long long r = (long long)blockIdx.x * ROWS + threadIdx.y;
  if (r >= M) return;
  if (threadIdx.x == 0) y[r] = 0.0f;
  __syncwarp();
  const float* a = A + r * K;
  float acc = 0.0f;
  for (int k = threadIdx.x; k < K; k += THREADS) acc += a[k] * x[k];
  atomicAdd(&y[r], acc);
}
