// First attempt · f28-sgemm-naive-32x32 · 17-tiled-sgemm
// What: one thread per element of C in 32 x 32 blocks (1024 threads): thread (x, y) walks k over
// row y of A and column x of B straight from global memory.
// Naive pattern: a huge-grid naive GEMM (16384 blocks): two global loads per FMA, reuse left to
// the caches.
// @tune BM=32
// @tune BN=32
// @tune TM=1
// @tune TN=1

extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  const long long r = (long long)blockIdx.y * BM + threadIdx.y;
  const long long c = (long long)blockIdx.x * BN + threadIdx.x;
  if (r >= M || c >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[r * K + k] * B[(long long)k * N + c];
  C[r * N + c] = acc;
}
