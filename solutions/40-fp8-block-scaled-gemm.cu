// Solution · 40 FP8 GEMM with DeepSeek-V3 block scales (1 x 128 activations, 128 x 128 weights)
//
// What: C[M x N] (bf16) = sum over the K / 128 blocks kb of K of
//   a_scale[kb][m] * b_scale[n / 128][kb] * (A_kb x B_kb^T)[m][n],
// A and B in fp8 e4m3, row-major (B given as [N, K]), a_scale [K / 128][M] (MN-major), b_scale
// [cdiv(N, 128)][K / 128]. Puzzle 33's kernel with one change of substance: the promotion.
//   - A block of 128 threads (4 warps) per 128 x 64 tile of C, a 64 x 32 tile per warp, two
//     blocks per SM. One k-step is one scale block: BK = 128 bytes, four stages in a ring filled
//     by cp.async.cg (16 bytes from global straight into shared memory), one wait_group and one
//     __syncthreads() per step. The steady state runs 2 x STAGES steps a trip, unrolled, as in
//     puzzle 33; K is a multiple of 128, so every tile lies wholly inside K and no copy needs a
//     bounds test. Rows past M (N) are copied from the last row: they feed only C values that
//     are never stored.
//   - Each stage also holds its K block's activation scales for the tile's 128 rows: thread r
//     copies a_scale[kb][bm + r] with a 4-byte cp.async beside the tiles. The MN-major layout
//     makes that one contiguous 512-byte run per stage.
//   - Shared rows are 128 bytes, 16-byte chunks XOR-swizzled by the row (chunk c of row r at
//     c ^ (r % 8)), so the 8 rows an ldmatrix phase reads fall on 8 different bank groups.
//   - Fragments: ldmatrix.x4 gives the m16n8k32 e4m3 fragment; each register is unpacked to two
//     f16 pairs with cvt.rn.f16x2.e4m3x2 (exact) and fed to m16n8k16 f16 mma with f32 sums (puzzle
//     33: Hopper has no FP8 mma.sync in machine code, and this is its fast path). B's four
//     n-tiles are unpacked first, then A's m-tiles one at a time, so each fragment is unpacked
//     once and only 24 registers hold unpacked operands.
//   - Promotion: a K block's products go into `part`, 64 f32 a lane that start at zero; at the
//     end of the block each lane adds part x (a_scale[kb][row] x b_scale[nb][kb]) into `acc`, one
//     FFMA per output on the CUDA cores. The row scales come from the stage's shared copy (the 4
//     lanes of a quad read one word: a broadcast); the warp's one weight scale (its 32 columns lie
//     in one 128-wide block of N) is loaded from global memory when the block starts.
//   - Epilogue: round acc pairs to bf16 with one cvt.rn.bf16x2.f32, store 4 bytes per lane per row.
// Run:  warpbook check 40-fp8-block-scaled-gemm solutions/40-fp8-block-scaled-gemm.cu
//       warpbook predict 40-fp8-block-scaled-gemm solutions/40-fp8-block-scaled-gemm.cu --gpu
//       h100-sxm
//
// Why: at 4096 x 7168 x 2048 the kernel must do 120 GFLOP; the least DRAM traffic is 82 MB (1-byte
// inputs, 2-byte outputs, 0.3 MB of scales), 25 us at 3.35 TB/s, so it is compute-bound. Through
// mma.sync (f16 after the unpacking) the ceiling is about 650 TFLOP/s, a third of the 1979 TFLOP/s
// dense FP8 datasheet figure only wgmma reaches. The scales cost registers, not bandwidth: a warp
// keeps the running total and the current block's sums, 2 x 64 f32 for a 64 x 32 tile, where
// puzzle 33's 64 x 64 tile held 128 in one set. ptxas then uses all 255 registers a thread
// (a few words spilled outside the main loop), so an SM holds 8 warps: two blocks of 4, so that
// one block's __syncthreads() leaves the other's mma running. The smaller warp tile costs 1.5
// unpacks per HMMA where puzzle 33 had 1, and the promotion 64 FFMA per 128 HMMA a warp.
// Shared memory: 4 x ((128 + 64) x 128 + 4 x 128) B = 100352 B per block (@tune SMEM), two per SM.
// Grid at the perf size: 112 x 32 = 3584 blocks on 132 SMs x 2 (13.6 waves).
//
// Napkin maths: 120.3 GFLOP at 1979 TFLOP/s (datasheet, dense FP8) = 61 us; at the f16 mma.sync
// rate (650 TFLOP/s) 185 us; puzzle 33's kernel, with no block scales, ran at 483 TFLOP/s on an
// H200: 249 us here. Gold is 18% of the datasheet, 338 us.
// Predicted (`warpbook predict`): 362 us on the H100 SXM, 353 us on the H200 (17% of the datasheet;
// the model put puzzle 33's solution 1.18x slower than the H200 measured).
// What loses, and why (predicted, H100 SXM, `warpbook predict`):
//   - Scales applied once at the end (one a_scale per row, one b_scale per block): wrong, not
//     slow; the sums of different K blocks carry different scales and cannot be added unscaled.
//   - Scaling the operands instead (unpack to f16, multiply by the scale, one accumulator): f16
//     keeps few bits of code x scale for small scales (0.001 x 2^-9 is an f16 subnormal, 5 bits)
//     and each product rounds, so the answer drifts from the recipe; it also costs a multiply per
//     operand element per warp that reads it instead of one per output per K block.
//   - 128 x 128 block tiles of 8 warps, one block per SM: 396 us at 3 stages, 400 at 4; the
//     warps spend 18% of their time at __syncthreads() with no other block to run.
//   - The row scales loaded from global memory into 8 registers when the block starts (instead of
//     travelling with the tiles): they stay live across the mma, and ptxas spills 500 bytes: 394 us
//     at 128 x 128.
//   - A 32 x 64 warp tile: 395 us, 344 bytes spilled; a 64 x 64 one needs 256 f32 a lane for the
//     two sets, past the 255-register limit.
//   - This file at 3 stages: 366 us; at 2: 367 us; 64 x 128 block tiles: 362 us (the same).
//   - wgmma with promotion every 128 of K (DeepGEMM's way) is faster on Hopper, but puzzle 33
//     measured that FP8 wgmma keeps too few bits inside one k32 product to meet an f32 tolerance
//     on saturated codes; this puzzle keeps the f32 accuracy.
//
// Measured on an H100 80GB HBM3 (`warpbook check`, scripts/puzzles_vs_torch.sh in the same run):
// 332 us, 362 TFLOP/s, 18.3% of the datasheet: gold, on the bar's edge. torch._scaled_mm with the
// same 1 x 128 and 128 x 128 scales took 104.9 us (this file is 0.31x of it) but missed the f32
// tolerance (max error 0.0645 at the perf size), as did the Triton form's FP8 tl.dot: both sum
// inside FP8 wgmma, which keeps too few bits (puzzle 33 found the same).
// On an NVIDIA H200 (`warpbook check` in the gpu test): 338.11 us, 356 TFLOP/s, 17.97% of the
// datasheet: silver, 0.03 points short of the 18% gold bar (the same tensor cores as the H100's).
// measured: 338.11 us on NVIDIA H200
// measured: 331.94 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=64
// @tune WM=64
// @tune WN=32
// @tune BK=128
// @tune STAGES=4
// @tune SMEM=100352
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#define THREADS ((BM / WM) * (BN / WN) * 32)
#define WARPS_N (BN / WN)
#define MI (WM / 16)  // m16 tiles per warp
#define NJ (WN / 8)   // n8 tiles per warp
#define CPR (BK / 16) // 16-byte chunks per tile row
#define A_TILE (BM * BK)
#define B_TILE (BN * BK)
#define S_TILE (BM * 4)               // the K block's activation scales of the tile's BM rows, f32
#define MINB (THREADS >= 256 ? 1 : 2) // 2 blocks of 4 warps: 255 registers a thread still fit
#if BM % WM != 0 || BN % WN != 0 || WM % 16 != 0 || WN % 16 != 0
#error "the warp tiles must split the block tile, in multiples of 16"
#endif
#if BK != 128
#error "one k-step is one 128-deep scale block: BK must be 128 bytes"
#endif
#if 128 % WN != 0
#error "a warp's columns must lie in one 128-wide block of N (one weight scale): WN divides 128"
#endif
#if (BM * CPR) % THREADS != 0 || (BN * CPR) % THREADS != 0
#error "the tile copies must split evenly over the threads"
#endif
#if SMEM < STAGES * ((BM + BN) * BK + BM * 4)
#error                                                                                             \
    "SMEM is too small for the ring: STAGES x ((BM + BN) x BK + 4 BM) bytes (see the @tune lines)"
#endif
#if STAGES < 2
#error "the ring needs two stages at least"
#endif

// Byte offset of chunk `ch` (16 codes) of row `r` in a [rows][128] tile, XOR-swizzled: 8
// consecutive rows at one logical chunk hit 8 different bank groups.
__device__ __forceinline__ int swz(int r, int ch) {
  return r * BK + ((ch ^ (r % CPR)) << 4);
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async4(unsigned dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N_> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N_) : "memory");
}
__device__ __forceinline__ void ldmatrix_x4(unsigned (&d)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(addr));
}
// Two e4m3 codes to an f16 pair, exactly: the low 16 bits of v (unpack_lo) or the high 16.
__device__ __forceinline__ unsigned unpack_lo(unsigned v) {
  unsigned r;
  asm("{.reg .b16 l, h;\n mov.b32 {l, h}, %1;\n cvt.rn.f16x2.e4m3x2 %0, l;}" : "=r"(r) : "r"(v));
  return r;
}
__device__ __forceinline__ unsigned unpack_hi(unsigned v) {
  unsigned r;
  asm("{.reg .b16 l, h;\n mov.b32 {l, h}, %1;\n cvt.rn.f16x2.e4m3x2 %0, h;}" : "=r"(r) : "r"(v));
  return r;
}
// acc (16 x 8, f32) += a (16 x 16, f16, row) x b (16 x 8, f16, col)
__device__ __forceinline__ void mma_f16(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                        unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    fp8_block_gemm(const __nv_fp8_e4m3* __restrict__ A8, const __nv_fp8_e4m3* __restrict__ B8,
                   const float* __restrict__ a_scale, const float* __restrict__ b_scale,
                   __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned char* A = reinterpret_cast<const unsigned char*>(A8);
  const unsigned char* B = reinterpret_cast<const unsigned char*>(B8);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int KB = K / 128; // scale blocks = k-steps; K % 128 != 0 is outside the format
  constexpr int STAGE_BYTES = A_TILE + B_TILE + S_TILE;
  const unsigned sbase = smem_addr(smem);

  // Copies: thread tid always takes chunk tid % CPR of rows tid / CPR + i * RSTEP, whose swizzle
  // is the same (RSTEP is a multiple of 8), so each chunk's shared offset is a compile-time stride
  // from the first and its global address moves by BK a step.
  constexpr int RSTEP = THREADS / CPR;
  constexpr int NA = BM / RSTEP, NB = BN / RSTEP;
  static_assert(RSTEP % CPR == 0, "the row step must keep each chunk's swizzle");
  const int cr = tid / CPR, cc = tid % CPR;
  const unsigned sa0 = sbase + swz(cr, cc); // + i * RSTEP * BK for chunk i
  const unsigned char* pa[NA];
  const unsigned char* pb[NB];
#pragma unroll
  for (int i = 0; i < NA; ++i) pa[i] = A + (long long)min(bm + cr + i * RSTEP, M - 1) * K + cc * 16;
#pragma unroll
  for (int i = 0; i < NB; ++i) pb[i] = B + (long long)min(bn + cr + i * RSTEP, N - 1) * K + cc * 16;
  // The activation scales travel with the tiles: thread tid < BM copies the scale of row
  // bm + tid (clamped into A, as the copies are) for the stage's K block, 4 bytes, so the
  // promotion reads them from shared memory and no register holds them across the mma.
  const float* psa = a_scale + min(bm + tid, M - 1); // + kt * M for K block kt
  const unsigned ss0 = sbase + A_TILE + B_TILE + tid * 4;
  // Tile kt into stage s, the pointers standing at k = kbase * BK.
  int kbase = 0;
  auto load_tile = [&](int kt, int s) {
    const int dk = (kt - kbase) * BK;
#pragma unroll
    for (int i = 0; i < NA; ++i) cp_async16(sa0 + s * STAGE_BYTES + i * RSTEP * BK, pa[i] + dk);
#pragma unroll
    for (int i = 0; i < NB; ++i)
      cp_async16(sa0 + s * STAGE_BYTES + A_TILE + i * RSTEP * BK, pb[i] + dk);
    if (tid < BM) cp_async4(ss0 + s * STAGE_BYTES, psa + (long long)kt * M);
  };

  // This lane's rows are g + 8h + 16i of the warp's tile; its columns lie in the 128-wide block
  // nb of N, whose weight scales are the row b_scale[nb][*] (clamped into it for warps past N).
  const int g = lane / 4, t = lane % 4;
  const int r0 = bm + wm * WM + g, c0 = bn + wn * WN + 2 * t;
  const float* sb_ptr = b_scale + (long long)min((bn + wn * WN) / 128, (N - 1) / 128) * KB;
  const float* s_rows = reinterpret_cast<const float*>(smem + A_TILE + B_TILE) + wm * WM + g;

  float acc[MI][NJ][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  // ldmatrix.x4 row addresses, as in puzzle 33: for A, lane l points at row l % 16 of a 16 x 16
  // fragment, chunk l / 16; for B, at row (l / 16) * 8 + l % 8 of a 16-row pair of n-tiles,
  // chunk (l / 8) % 2. Only the 32-of-k step kk changes the swizzled chunk.
  const int a_row = wm * WM + (lane % 16), a_ch = lane / 16;
  const int b_row = wn * WN + (lane / 16) * 8 + (lane % 8), b_ch = (lane / 8) % 2;
  unsigned a_addr[BK / 32], b_addr[BK / 32];
#pragma unroll
  for (int kk = 0; kk < BK / 32; ++kk) {
    a_addr[kk] = sbase + swz(a_row, kk * 2 + a_ch);
    b_addr[kk] = sbase + A_TILE + swz(b_row, kk * 2 + b_ch);
  }

  // One K block kt from stage buffer `soff` (bytes): its sums into part, then promoted.
  auto kblock = [&](unsigned soff, int kt) {
    const float sb = __ldg(sb_ptr + kt); // loaded first: the mma below hide the wait
    float part[MI][NJ][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) part[i][j][q] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < BK / 32; ++kk) {
      // bytes 0-1 of every fp8 register make one k16 f16 fragment, bytes 2-3 the other, alike
      // for A and B, so the two mma cover the 32 k once. All of B's fragments first (16
      // registers), then A's one m-tile at a time (8): each fragment is still unpacked once.
      unsigned blo[NJ / 2][4], bhi[NJ / 2][4];
#pragma unroll
      for (int jp = 0; jp < NJ / 2; ++jp) {
        unsigned d[4];
        ldmatrix_x4(d, b_addr[kk] + soff + jp * 16 * BK);
#pragma unroll
        for (int q = 0; q < 4; ++q) blo[jp][q] = unpack_lo(d[q]), bhi[jp][q] = unpack_hi(d[q]);
      }
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        unsigned a[4], alo[4], ahi[4];
        ldmatrix_x4(a, a_addr[kk] + soff + i * 16 * BK);
#pragma unroll
        for (int q = 0; q < 4; ++q) alo[q] = unpack_lo(a[q]), ahi[q] = unpack_hi(a[q]);
          // The low halves into every n-tile, then the high halves: NJ mma apart, an accumulator's
          // two updates do not wait on each other.
#pragma unroll
        for (int jp = 0; jp < NJ / 2; ++jp) {
          mma_f16(part[i][2 * jp], alo, blo[jp][0], blo[jp][1]);
          mma_f16(part[i][2 * jp + 1], alo, blo[jp][2], blo[jp][3]);
        }
#pragma unroll
        for (int jp = 0; jp < NJ / 2; ++jp) {
          mma_f16(part[i][2 * jp], ahi, bhi[jp][0], bhi[jp][1]);
          mma_f16(part[i][2 * jp + 1], ahi, bhi[jp][2], bhi[jp][3]);
        }
      }
    }
    // Promotion: one FFMA per output; d[0], d[1] are row g, d[2], d[3] row g + 8. The row
    // scales come from this stage's copy (a quad of lanes reads one word: a broadcast).
    const float* srow = s_rows + soff / 4;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float f = srow[16 * i + 8 * h] * sb;
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
          acc[i][j][2 * h] = fmaf(part[i][j][2 * h], f, acc[i][j][2 * h]);
          acc[i][j][2 * h + 1] = fmaf(part[i][j][2 * h + 1], f, acc[i][j][2 * h + 1]);
        }
      }
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KB) load_tile(s, s);
    cp_async_commit();
  }

  // The steady state: 2 x STAGES K blocks per trip, unrolled, so the stage read and the stage
  // written are compile-time constants; the copies' pointers move once per trip.
  int kt = 0;
  constexpr int TRIP = 2 * STAGES;
  for (; kt + TRIP + STAGES - 2 < KB; kt += TRIP) {
#pragma unroll
    for (int s = 0; s < TRIP; ++s) {
      cp_async_wait<STAGES - 2>(); // this thread's copies of tile kt + s have landed
      __syncthreads();             // everyone's have; everyone is done with tile kt + s - 1
      const int w = (s + STAGES - 1) % STAGES;
      const int koff = (s + STAGES - 1) * BK;
#pragma unroll
      for (int i = 0; i < NA; ++i) cp_async16(sa0 + w * STAGE_BYTES + i * RSTEP * BK, pa[i] + koff);
#pragma unroll
      for (int i = 0; i < NB; ++i)
        cp_async16(sa0 + w * STAGE_BYTES + A_TILE + i * RSTEP * BK, pb[i] + koff);
      if (tid < BM) cp_async4(ss0 + w * STAGE_BYTES, psa + (long long)(kt + s + STAGES - 1) * M);
      cp_async_commit();
      kblock((s % STAGES) * STAGE_BYTES, kt + s);
    }
#pragma unroll
    for (int i = 0; i < NA; ++i) pa[i] += TRIP * BK;
#pragma unroll
    for (int i = 0; i < NB; ++i) pb[i] += TRIP * BK;
  }
  kbase = kt;
  // The rest: one K block a trip, the stage a run-time value.
  for (; kt < KB; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < KB) load_tile(next, next % STAGES);
    cp_async_commit(); // even when empty: the group count stays right
    kblock((kt % STAGES) * STAGE_BYTES, kt);
  }
  cp_async_wait<0>();

  // Epilogue: round pairs to bf16, store 4 bytes per lane per row.
  if (bm + wm * WM >= M || bn + wn * WN >= N) return;
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = r0 + i * 16 + 8 * h;
      if (r >= M) continue;
      __nv_bfloat16* row = C + (long long)r * N;
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const int c = c0 + j * 8;
        const float x = acc[i][j][2 * h], y = acc[i][j][2 * h + 1];
        if ((N % 2) == 0) {
          if (c < N) // N even and c even: the pair is wholly inside
            *reinterpret_cast<__nv_bfloat162*>(row + c) = __floats2bfloat162_rn(x, y);
        } else {
          if (c < N) row[c] = __float2bfloat16(x);
          if (c + 1 < N) row[c + 1] = __float2bfloat16(y);
        }
      }
    }
}
