// First attempt · f29-sgemm-naive-rows-on-x · 17-tiled-sgemm
// What: one thread per element of C in 16 x 16 blocks, with threadIdx.x choosing the ROW of C and
// threadIdx.y the column (the mapping that reads like matrix notation).
// Naive pattern: a huge-grid naive GEMM with uncoalesced loads: the 16 lanes of a half-warp read
// A at 16 rows K floats apart and write C 16 rows apart; B is a broadcast.
// @tune BM=16
// @tune BN=16
// @tune TM=1
// @tune TN=1

extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  const long long r = (long long)blockIdx.y * BM + threadIdx.x;
  const long long c = (long long)blockIdx.x * BN + threadIdx.y;
  if (r >= M || c >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[r * K + k] * B[(long long)k * N + c];
  C[r * N + c] = acc;
}
