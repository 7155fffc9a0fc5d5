// Lesson 0008, rung 2 · shared-memory tiles: a block of 32 x 32 threads computes a 32 x 32 tile of
// C, one output per thread. Per step of BK = 32 along K it loads a 32 x 32 slice of A and one of
// B into shared memory (coalesced), waits, does 32 multiply-adds per thread from them, and waits
// again before the next step overwrites them. Each element of A and B now comes from global
// memory N / 32 and M / 32 times instead of N and M times; every FMA still reads two words of
// shared memory.
// Run:  warpbook check 17-tiled-sgemm lessons/0008-matmul-tiled/ladder/02-shared-tiles.cu
//       warpbook predict 17-tiled-sgemm lessons/0008-matmul-tiled/ladder/02-shared-tiles.cu
// measured: 15444 us on NVIDIA H100 80GB HBM3
// @tune BM=32
// @tune BN=32
// @tune TM=1
// @tune TN=1

#define BK 32

extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[BM][BK]; // As[r][k] = A[row0 + r][k0 + k]
  __shared__ float Bs[BK][BN]; // Bs[k][c] = B[k0 + k][col0 + c]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * BM + ty, col = blockIdx.x * BN + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BK) {
    // Each thread loads one element of each slice; zeros past the edges add nothing.
    As[ty][tx] = row < M && k0 + tx < K ? A[(long long)row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = k0 + ty < K && col < N ? B[(long long)(k0 + ty) * N + col] : 0.0f;
    __syncthreads();                                           // the slices are complete
    for (int k = 0; k < BK; ++k) acc += As[ty][k] * Bs[k][tx]; // As: broadcast; Bs: 32 banks
    __syncthreads(); // everyone is done before the next step overwrites them
  }
  if (row < M && col < N) C[(long long)row * N + col] = acc;
}
