// Solution · 17 tiled SGEMM (fp32 FMA, no tensor cores)
//
// What: 128 x 128 tiles of C per block, 256 threads, each computing an 8 x 8 block of outputs in
// registers; K is walked in steps of BK = 8.
//   - Per step the block stages A[128 x 8] (stored transposed, As[k][m]) and B[8 x 128] in shared
//     memory: one float4 of A and one of B per thread, coalesced.
//   - Per k, a thread reads 8 A values and 8 B values as four float4 shared loads and does 64
//     FMAs. Thread (tx, ty) owns rows {4ty..4ty+3, 64+4ty..} and columns {4tx..4tx+3, 64+4tx..}:
//     split in two halves so that a warp's float4 reads cover contiguous 16-byte chunks, which
//     keeps shared-memory reads free of bank conflicts.
//   - Double buffering: the next step's global loads go into registers before the current step's
//     FMAs and into the other shared buffer after them: one __syncthreads() per step, and the
//     global-load latency hides behind 512 FMAs per thread.
//   - C is written with float4 stores. Edges (M, N, K not multiples of the tile) are zero-filled on
//     load and guarded on store; K or N not a multiple of 4 switch to scalar loads.
// Run:  warpbook check 17-tiled-sgemm solutions/17-tiled-sgemm.cu
//
// Why: per k-step a thread issues 4 shared loads (LDS.128) and 64 FFMAs, so ~94% of issued
// instructions are FMAs, the ratio a Hopper SM needs to approach its 128 FMA lanes. 64 accumulators
// + 16 operands + prefetch registers fit in ~128 registers, so two 256-thread blocks share an SM
// (__launch_bounds__(256, 2)). Shared memory: 2 x (4.1 + 4) KB = 16.3 KB per block. The A tile's
// rows are padded by 4 floats so its transposed stores do not collide in a bank either.
//
// Napkin maths: 137.4 GFLOP at 67 TFLOP/s = 2.05 ms on the H200; gold (55%) is 3.73 ms,
// 36.9 TFLOP/s.
// Measured on the H200: 3597 us, 38.2 TFLOP/s: 57% of the 67 TFLOP/s datasheet FP32
// rate, 59% of the 65.2 TFLOP/s measured by `warpbook probe`; gold. On an H100 SXM: 3603 us,
// against 2666 us for cuBLAS (`torch.matmul`, TF32 off) and 3253 us for the Triton form (128 x 128
// x 32 blocks, 8 warps, 3 stages) side by side (`scripts/puzzles_vs_torch.sh`): 0.74x cuBLAS.
// What loses, or wins too little (H100, `warpbook check`, medians), each with A copied as rows by
// cp.async into a ring of STAGES slices instead of transposed through registers:
//   - 8 x 8 outputs a thread, two blocks an SM: BK 8 x 3-4 stages 3967-4014 us, BK 16 x 2-4
//     3638-3789, BK 32 x 2-3 3580-3682; one block an SM with BK 32 or 64: 3734-3904.
//   - 8 x 16 outputs a thread in 128-thread blocks (128 x 128 tiles), two blocks an SM: BK 32 x 2
//     3589 (3620 with the blocks taken 8 rows of tiles at a time, for the L2), BK 16 x 3-4
//     3897-3990.
//   - 8 x 16 outputs a thread in 128 x 256 tiles, 255 registers, one block an SM: BK 8 x 4 3915,
//     BK 16 x 3-4 3721-3764, BK 32 x 3-4 3461-3464, BK 32 x 2 3400 (twice), BK 64 x 2 3391: the
//     best found, 6% faster than this file and 0.79x cuBLAS. The L2 raster (3458) and each thread's
//     rows 16 apart (3445) did not add to it. It is not this file: it adds a cp.async ring and a
//     255-register thread for 6%, and what closes the rest of the gap to cuBLAS is not known here.
// measured: 3597.33 us on NVIDIA H200
// measured: 3603 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=128
// @tune TM=8
// @tune TN=8

#define BK 8
#if BM != 128 || BN != 128 || TM != 8 || TN != 8
#error "this solution is written for BM = BN = 128, TM = TN = 8"
#endif

extern "C" __global__ void __launch_bounds__(256, 2)
    sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
          int N, int K) {
  __shared__ __align__(
      16) float As[2][BK][BM + 4]; // +4: the transposed stores avoid 2-way conflicts
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y; // 16 x 16
  const int tid = ty * 16 + tx;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

  // Which float4 of each tile this thread loads.
  const int a_row = tid >> 1, a_k = (tid & 1) * 4;  // A tile: 128 rows x 8 columns
  const int b_k = tid >> 5, b_col = (tid & 31) * 4; // B tile: 8 rows x 128 columns
  const bool a_vec = (K & 3) == 0, b_vec = (N & 3) == 0;
  const long long ar = bm + a_row;
  const int bc = bn + b_col;

  float4 ra, rb;
  auto load_tiles = [&](int k0) {
    int k = k0 + a_k;
    if (a_vec) {
      ra = (ar < M && k < K) ? *reinterpret_cast<const float4*>(A + ar * K + k)
                             : make_float4(0.f, 0.f, 0.f, 0.f);
    } else {
      const float* p = A + ar * K;
      bool row_ok = ar < M;
      ra.x = row_ok && k < K ? p[k] : 0.f;
      ra.y = row_ok && k + 1 < K ? p[k + 1] : 0.f;
      ra.z = row_ok && k + 2 < K ? p[k + 2] : 0.f;
      ra.w = row_ok && k + 3 < K ? p[k + 3] : 0.f;
    }
    int kb = k0 + b_k;
    if (b_vec) {
      rb = (kb < K && bc < N) ? *reinterpret_cast<const float4*>(B + (long long)kb * N + bc)
                              : make_float4(0.f, 0.f, 0.f, 0.f);
    } else {
      const float* p = B + (long long)kb * N;
      bool k_ok = kb < K;
      rb.x = k_ok && bc < N ? p[bc] : 0.f;
      rb.y = k_ok && bc + 1 < N ? p[bc + 1] : 0.f;
      rb.z = k_ok && bc + 2 < N ? p[bc + 2] : 0.f;
      rb.w = k_ok && bc + 3 < N ? p[bc + 3] : 0.f;
    }
  };
  auto store_tiles = [&](int buf) {
    As[buf][a_k + 0][a_row] = ra.x;
    As[buf][a_k + 1][a_row] = ra.y;
    As[buf][a_k + 2][a_row] = ra.z;
    As[buf][a_k + 3][a_row] = ra.w;
    *reinterpret_cast<float4*>(&Bs[buf][b_k][b_col]) = rb;
  };

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

  const int steps = (K + BK - 1) / BK;
  load_tiles(0);
  store_tiles(0);
  __syncthreads();
  for (int s = 0; s < steps; ++s) {
    const int cur = s & 1;
    if (s + 1 < steps) load_tiles((s + 1) * BK); // in flight during the FMAs below
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float4 a0 = *reinterpret_cast<const float4*>(&As[cur][k][4 * ty]);
      float4 a1 = *reinterpret_cast<const float4*>(&As[cur][k][64 + 4 * ty]);
      float4 b0 = *reinterpret_cast<const float4*>(&Bs[cur][k][4 * tx]);
      float4 b1 = *reinterpret_cast<const float4*>(&Bs[cur][k][64 + 4 * tx]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (s + 1 < steps) store_tiles(cur ^ 1); // the other buffer: nobody reads it this step
    __syncthreads();
  }

  // Write the 8 x 8 block: rows 4ty + i and 64 + 4ty + i, columns 4tx + j and 64 + 4tx + j.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    long long r = bm + (i < 4 ? 4 * ty + i : 64 + 4 * ty + (i - 4));
    if (r >= M) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      int c = bn + h * 64 + 4 * tx;
      float* p = C + r * N + c;
      if (b_vec && c + 3 < N) {
        *reinterpret_cast<float4*>(p) =
            make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (c + j < N) p[j] = acc[i][4 * h + j];
      }
    }
  }
}
