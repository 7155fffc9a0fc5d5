// Lesson 0008, rung 3 · register tiles: a block of 16 x 16 threads computes a 128 x 128 tile of
// C, each thread an 8 x 8 patch of it held in 64 registers. Per k of a BK = 8 slice, a thread
// loads 8 values of A and 8 of B from shared memory and does the 64 multiply-adds between them:
// 16 shared loads for 64 FMAs, against 2 for 1 in rung 2. Loads are still one float at a time.
// Thread (tx, ty) owns rows 8 ty .. 8 ty + 7 and columns 8 tx .. 8 tx + 7 of the tile.
// Run:  warpbook check 17-tiled-sgemm lessons/0008-matmul-tiled/ladder/03-register-tiles.cu
//       warpbook predict 17-tiled-sgemm lessons/0008-matmul-tiled/ladder/03-register-tiles.cu
// measured: 8326 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=128
// @tune TM=8
// @tune TN=8

#define BK 8
#define NT ((BM / TM) * (BN / TN)) // threads: 256

extern "C" __global__ void __launch_bounds__(NT)
    sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[BM][BK]; // as A lies in memory: row, then k
  __shared__ float Bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * (BN / TN) + tx;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += NT) { // 8 neighbouring threads read one row's 8 floats
      const int r = i / BK, k = i % BK;
      As[r][k] = bm + r < M && k0 + k < K ? A[(long long)(bm + r) * K + k0 + k] : 0.0f;
    }
    for (int i = tid; i < BK * BN; i += NT) { // a warp reads 32 neighbouring floats of a row
      const int k = i / BN, c = i % BN;
      Bs[k][c] = k0 + k < K && bn + c < N ? B[(long long)(k0 + k) * N + bn + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[ty * TM + i][k];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int r = bm + ty * TM + i, c = bn + tx * TN + j;
      if (r < M && c < N) C[(long long)r * N + c] = acc[i][j];
    }
}
