// Corpus · v17-sgemm-reg64-8x8 · designed limiter: fp32
//
// What: a register-tiled SGEMM with 64 x 64 tiles of C per 64-thread block (BM = BN = 64,
// TM = TN = 8: an 8 x 8 block of threads), each thread computing 8 x 8 = 64 outputs in registers:
// rows {4ty..4ty+3, 32+4ty..32+4ty+3} and the same pattern of columns with tx. Per K step of
// BK = 8 the block copies A (64 x 8, transposed as As[k][m], rows padded to 68 floats) and B
// (8 x 64) into shared memory with cp.async (4-byte copies that bypass registers; zero-filled past
// the edges), double-buffered: step s + 1's tile is in flight while step s computes. Per k a thread
// reads 2 float4 of As and 2 float4 of Bs and does 64 FFMAs.
// Run:  warpbook check 17-tiled-sgemm bench/perfmodel/corpus/v17-sgemm-reg64-8x8.cu
//
// Why: shared memory returns one 32-lane register per clock per SM, and an LDS.128 returns 4 of
// them, in 2 clocks when lane pairs (n, n^1) or (n, n^2) read the same address. Lanes are laid out
// so that both hold: lane bit 0 selects ty (so n and n^1 read the same Bs word), bit 1 selects tx
// (n and n^2 read the same As word). Per warp k step: 4 LDS.128 x 2 = 8 clocks of shared return
// against 64 FFMAs = 16 clocks of the SM's 4 FMA issue slots: the shared pipe is ~50% busy and
// FP32 issue is the limit (~75% of the PTX instructions are FFMA, more after ptxas). 155 registers
// (__launch_bounds__(64, 6), no spills): 6 blocks, 384 threads, 3 warps per scheduler per SM, each
// warp with 64 independent FMAs per k, tile loads hidden behind the previous step's FMAs. Global
// traffic 2 x 4096^3 x 4 B / 64 = 8.6 GB, mostly L2 hits. Expected: ~50-65% of the 67 TFLOP/s
// speed of light, bounded by FFMA issue.
// @tune BM=64
// @tune BN=64
// @tune TM=8
// @tune TN=8

#if BM != 64 || BN != 64 || TM != 8 || TN != 8
#error "this kernel is written for BM = BN = 64, TM = TN = 8"
#endif
#define BK 8
#define NT 64 // threads per block

// One 4-byte global -> shared copy that does not pass through registers; src_bytes = 0 writes 0.
__device__ __forceinline__ void cp_async4(float* dst, const float* src, int src_bytes) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes)
               : "memory");
}

extern "C" __global__ void __launch_bounds__(NT, 6) // <= 168 registers: 6 blocks per SM, no spills
    sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
          int N, int K) {
  __shared__ __align__(16) float As[2][BK][BM + 4]; // transposed: As[buf][k][m]
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int tid = threadIdx.y * 8 + threadIdx.x;
  // Lane bits: b0 -> ty bit 0, b1 -> tx bit 0, b2 -> ty bit 1, b3 -> tx bit 1, b4 -> tx bit 2;
  // the warp bit -> ty bit 2. A warp covers 8 tx x 4 ty.
  const int lane = tid & 31, warp = tid >> 5;
  const int tx = ((lane >> 1) & 1) | (((lane >> 3) & 1) << 1) | (((lane >> 4) & 1) << 2);
  const int ty = (lane & 1) | (((lane >> 2) & 1) << 1) | (warp << 2);
  const long long bm = (long long)blockIdx.y * BM, bn = (long long)blockIdx.x * BN;
  const bool inside = bm + BM <= M && bn + BN <= N; // a whole tile of C: unchecked loads

  // Thread t copies A[bm + t / 8 + 8 q][k0 + t % 8] and B[k0 + q][bn + t], q = 0..7, into buffer
  // buf.
  auto issue = [&](int buf, int k0) {
    const int m0 = tid / BK, kk = tid % BK;
    if (inside && k0 + BK <= K) {
      const float* pa = A + (bm + m0) * K + k0 + kk;
      const float* pb = B + (long long)k0 * N + bn + tid;
#pragma unroll
      for (int q = 0; q < BK; ++q) {
        cp_async4(&As[buf][kk][m0 + 8 * q], pa + (long long)q * 8 * K, 4);
        cp_async4(&Bs[buf][q][tid], pb + (long long)q * N, 4);
      }
    } else {
#pragma unroll
      for (int q = 0; q < BK; ++q) {
        const long long gr = bm + m0 + 8 * q, gc = bn + tid;
        const int gka = k0 + kk, gkb = k0 + q;
        const bool oka = gr < M && gka < K, okb = gkb < K && gc < N;
        cp_async4(&As[buf][kk][m0 + 8 * q], oka ? A + gr * K + gka : A, oka ? 4 : 0);
        cp_async4(&Bs[buf][q][tid], okb ? B + (long long)gkb * N + gc : B, okb ? 4 : 0);
      }
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  };

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  const int steps = (K + BK - 1) / BK;
  issue(0, 0);
  for (int s = 0; s < steps; ++s) {
    const int cur = s & 1;
    if (s + 1 < steps) {
      issue(cur ^ 1, (s + 1) * BK); // lands while this step computes
      asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[cur][k][4 * ty]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[cur][k][32 + 4 * ty]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[cur][k][4 * tx]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[cur][k][32 + 4 * tx]);
      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads(); // everyone is done with buffer cur before step s + 1 refills it
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const long long r = bm + (i < 4 ? 4 * ty + i : 32 + 4 * ty + (i - 4));
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const long long c = bn + (j < 4 ? 4 * tx + j : 32 + 4 * tx + (j - 4));
      if (c < N) C[r * N + c] = acc[i][j];
    }
  }
}
