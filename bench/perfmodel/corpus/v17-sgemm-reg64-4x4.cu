// Corpus · v17-sgemm-reg64-4x4 · designed limiter: lsu (shared memory to register bandwidth)
//
// What: a register-tiled SGEMM: 64 x 64 tiles of C per 256-thread block (BM = BN = 64, TM = TN = 4:
// a 16 x 16 block), thread (tx, ty) computing the 4 x 4 outputs at rows 4 ty.., columns 4 tx.. in
// registers. Per K step of BK = 16 the block stages A (64 x 16, stored transposed as As[k][m], rows
// padded to 68 floats) and B (16 x 64) in shared memory, 4 coalesced scalar loads of each per
// thread. Per k a thread reads one float4 of As and one float4 of Bs and does 16 FFMAs.
// Run:  warpbook check 17-tiled-sgemm bench/perfmodel/corpus/v17-sgemm-reg64-4x4.cu
//
// Why: the first step up from one output per thread (16 FFMAs per 2 shared loads instead of ~1
// per 2), but still short of the FP32 pipe. Shared memory returns 128 B per clock per SM, one
// 32-lane register; an LDS.128 returns 4 registers, so 4 clocks (2 where lane pairs n, n^1 or
// n, n^2 read the same address, as for the As read here: 16 lanes share a row). Per warp k step:
// 2 + 4 = 6 clocks of shared return against 16 FFMAs = 4 clocks of the SM's 4 FMA issue slots.
// So the shared (MIO/LSU) pipe binds at ~2/3 of the FP32 rate, before overheads; 95 registers
// leave 2 blocks (512 threads) per SM. Global traffic: 2 x 4096^3 x 4 B / 64 = 8.6 GB, mostly L2
// hits. Expected: ~30-45% of the 67 TFLOP/s speed of light, limited by shared-memory loads (the
// brief's fp32 candidate; see v17-sgemm-reg64-8x8 for the tile that does reach the FP32 limit).
// @tune BM=64
// @tune BN=64
// @tune TM=4
// @tune TN=4

#if BM != 64 || BN != 64 || TM != 4 || TN != 4
#error "this kernel is written for BM = BN = 64, TM = TN = 4"
#endif
#define BK 16
#define NT 256 // threads per block

extern "C" __global__ void sgemm(const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) float As[BK][BM + 4]; // transposed: As[k][m]
  __shared__ __align__(16) float Bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y; // 16 x 16
  const int tid = ty * 16 + tx;
  const long long bm = (long long)blockIdx.y * BM, bn = (long long)blockIdx.x * BN;

  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int q = 0; q < (BM * BK) / NT; ++q) {
      const int e = tid + q * NT;
      const int m = e / BK, kk = e % BK; // A tile: 16 consecutive k per row, coalesced along K
      const long long gr = bm + m;
      const int gk = k0 + kk;
      As[kk][m] = (gr < M && gk < K) ? A[gr * K + gk] : 0.0f;
    }
#pragma unroll
    for (int q = 0; q < (BK * BN) / NT; ++q) {
      const int e = tid + q * NT;
      const int kk = e / BN, n = e % BN; // B tile: 64 consecutive columns per row
      const int gk = k0 + kk;
      const long long gc = bn + n;
      Bs[kk][n] = (gk < K && gc < N) ? B[(long long)gk * N + gc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a = *reinterpret_cast<const float4*>(&As[k][4 * ty]);
      const float4 b = *reinterpret_cast<const float4*>(&Bs[k][4 * tx]);
      const float av[4] = {a.x, a.y, a.z, a.w};
      const float bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const long long r = bm + 4 * ty + i;
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const long long c = bn + 4 * tx + j;
      if (c < N) C[r * N + c] = acc[i][j];
    }
  }
}
