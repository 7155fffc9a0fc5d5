// Lesson 0008, rung 1 · naive SGEMM: one thread per element of C, A and B read straight from
// global memory. 8 bytes asked of the memory system per multiply-add.
// Run:  warpbook check 17-tiled-sgemm lessons/0008-matmul-tiled/ladder/01-naive.cu
//       warpbook predict 17-tiled-sgemm lessons/0008-matmul-tiled/ladder/01-naive.cu
// measured: 25414 us on NVIDIA H100 80GB HBM3
// @tune BM=16
// @tune BN=16
// @tune TM=1
// @tune TN=1

extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  const int col = blockIdx.x * BN + threadIdx.x, row = blockIdx.y * BM + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(long long)row * K + k] * B[(long long)k * N + col];
    C[(long long)row * N + col] = acc;
  }
}
