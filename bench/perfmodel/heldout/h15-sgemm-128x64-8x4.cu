// Held-out · h15-sgemm-128x64-8x4 · designed limiter: fp32
//
// What: a register-tiled SGEMM with a rectangular tile: BM = 128, BN = 64, each thread computes
// TM x TN = 8 x 4 outputs (256 threads, 16 x 16). Per K step of BK = 8 the block stages A
// (128 x 8, transposed into As[8][128 + 4], padded so the transposing stores are conflict-free)
// and B (8 x 64) in shared memory with coalesced scalar loads and zero-filled edges; the inner
// loop reads 8 values of A (two LDS.128, broadcast within each half-warp) and 4 of B (one
// LDS.128) per k and does 32 FFMAs, fully unrolled. One buffer, two barriers per K step.
// Run:  warpbook check 17-tiled-sgemm bench/perfmodel/heldout/h15-sgemm-128x64-8x4.cu
//
// Why it should be FP32-bound: per k a warp issues 32 FFMAs (8 cycles of the SM's 4 FMA pipes)
// against 3 shared loads (~4 wavefronts), so the FMA pipe, not shared memory, is the busier
// unit; global traffic is 6 loads per thread per 256 FFMAs (A is read 64 times and B 32 times
// at 4096^3: ~6.4 GB, L2 hits mostly, ~0.7 ms). The 137 GFLOP are 2.05 ms at the 67 TFLOP/s
// speed of light. Losses: ~95 registers leave 2 blocks (16 warps) per SM, the single buffer
// exposes some load latency at each K step, and 2048 blocks over 264 slots make 7.8 waves (the
// last one 76% full). Expected: ~45-60% of FP32 peak.
// @tune BM=128
// @tune BN=64
// @tune TM=8
// @tune TN=4

#define BK 8
#define NTHREADS ((BM / TM) * (BN / TN))
#define APAD 4

#if TM != 8 || TN != 4 || BM != 128 || BN != 64
#error "written for 128 x 64 tiles and 8 x 4 outputs per thread"
#endif

extern "C" __global__ void sgemm(const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) float As[BK][BM + APAD];
  __shared__ __align__(16) float Bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y; // 16 x 16
  const int tid = ty * (BN / TN) + tx;
  const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    // A tile: 1024 elements, 4 per thread; a warp reads 4 rows x 32 contiguous bytes.
#pragma unroll
    for (int q = 0; q < BM * BK / NTHREADS; ++q) {
      const int idx = tid + q * NTHREADS;
      const int m = idx / BK, kk = idx % BK;
      const long long gm = m0 + m;
      As[kk][m] = (gm < M && k0 + kk < K) ? A[gm * K + k0 + kk] : 0.0f;
    }
    // B tile: 512 elements, 2 per thread; a warp reads 128 contiguous bytes.
#pragma unroll
    for (int q = 0; q < BK * BN / NTHREADS; ++q) {
      const int idx = tid + q * NTHREADS;
      const int kk = idx / BN, n = idx % BN;
      const long long gn = n0 + n;
      Bs[kk][n] = (k0 + kk < K && gn < N) ? B[(long long)(k0 + kk) * N + gn] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[k][ty * TM]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[k][ty * TM + 4]);
      const float4 b = *reinterpret_cast<const float4*>(&Bs[k][tx * TN]);
      const float a[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bb[TN] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], bb[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const long long gm = m0 + ty * TM + i;
    if (gm >= M) break;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const long long gn = n0 + tx * TN + j;
      if (gn < N) C[gm * N + gn] = acc[i][j];
    }
  }
}
