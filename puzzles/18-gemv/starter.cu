// 18 · GEMV: y = A x, with A (M x K, row-major), x (K) and y (M).
//     y[r] = sum over k of A[r][k] * x[k]
// Launch: cdiv(M, ROWS) blocks of THREADS x ROWS threads (32 x 8 by default): threadIdx.y picks
// one of the block's ROWS rows, and the THREADS threads along x share that row.

extern "C" __global__ void gemv(const float* A, const float* x, float* y, int M, int K) {
  long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y;
  if (r >= M) return;
  float acc = 0.0f;
  for (int k = threadIdx.x; k < K; k += blockDim.x) acc += A[r * K + k] * x[k];
  // TODO: acc holds this thread's part of the row only; add up the parts of the THREADS threads
  // that share row r (with 32 threads per row, that is one warp: warp shuffles need no memory).
  if (threadIdx.x == 0) y[r] = acc;
}
