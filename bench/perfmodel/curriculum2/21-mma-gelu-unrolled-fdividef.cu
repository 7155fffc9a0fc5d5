// Solution · 21 GEMM + bias + GELU (bf16 in and out): puzzle 20's mainloop, a fused epilogue
//
// What: Y[M x N] (bf16) = gelu(A[M x K] x B^T + bias), B given as [N x K] (an nn.Linear weight),
// all bf16, row-major; the sums in f32 on the tensor cores, the bias and GELU (tanh form) in f32
// registers, Y rounded to bf16 once. The mainloop is puzzle 20's solution, at BK 64 x 3 stages:
//   - a block of 128 threads (4 warps) per 128 x 128 tile of Y, a 64 x 64 tile per warp (4 x 8
//     m16n8 accumulator tiles, 128 f32 registers), two blocks per SM;
//   - BK = 64 k-steps through a ring of STAGES = 3 shared buffers filled by cp.async.cg (16
//     bytes, a source size of 0 for zeros past K; rows past M or N copied from the last row,
//     as they reach only values never stored; element by element when K % 8 != 0), one
//     cp.async.wait_group + one __syncthreads() per k-step; the copies' addresses worked out
//     once before the loop and advanced by BK a step (per chunk per step they cost 497 us
//     against 365 on the H200: see puzzle 20's solution);
//   - the steady state unrolled over 2 x STAGES k-steps a trip, so that every stage index is a
//     compile-time constant: ldmatrix and cp.async take the stage, fragment and k offsets as
//     immediates, and the tiles copied there need no bounds tests (puzzle 20's solution);
//   - XOR-swizzled [rows][BK] tiles, so that ldmatrix.x4 (4 for A, 4 for B per 16 of k: B's rows
//     are the .col operand as they lie, no .trans) reads without bank conflicts; 32
//     mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32 per 16 of k per warp.
//   - The epilogue is where this puzzle differs. Each lane holds C[g][2t, 2t + 1] and
//     C[g + 8][2t, 2t + 1] of every m16n8 tile: it adds bias[2t], bias[2t + 1] (loaded once per
//     n-tile, not per element), applies GELU as x / (1 + e^-2u) with __expf, packs the pair into
//     one __nv_bfloat162, and writes it to a per-warp staging tile in the ring's (now idle)
//     shared memory. Then the warp writes its 64 x 64 tile out with one 16-byte store per lane
//     per row chunk: each instruction writes 4 rows x 128 contiguous bytes. (Straight from the
//     registers, a lane's 4 bytes per row and n-tile would make each store write 8 rows x 16
//     bytes: half of every 32-byte sector.) When N % 8 != 0 the rows are not 16-byte aligned and
//     the copy goes element by element.
// Run:  warpbook check 21-gemm-bias-gelu solutions/21-gemm-bias-gelu.cu
//       warpbook predict 21-gemm-bias-gelu solutions/21-gemm-bias-gelu.cu
//
// Why: the mainloop's argument is puzzle 20's (32 FLOP per shared byte at the 64 x 64 warp tile,
// 64 FLOP per L2 byte at the block tile, copies three k-steps ahead). The epilogue costs, per
// element of Y, one add, an exp and ~15 more FP32 instructions for GELU (the IEEE division is
// most of them), and 2 bytes out: at 4096^2 that is about 10 us of FP32 issue over 132 SMs and
// 33.6 MB of writes (7 us at 4.8 TB/s), against ~300 us of mma, and the other block on the SM
// keeps the tensor cores busy meanwhile. Unfused, a GEMM writing bf16 C and an elementwise bias +
// GELU pass would write C, read it back and write Y: 67 MB more DRAM traffic (14 us on the H200)
// and a second launch, and a GEMM writing f32 C twice that. Shared memory: 3 x (128 + 128) x 64 x 2
// B = 98304 B per block (the epilogue's 4 x 64 x 72 x 2 = 36864 B reuse it), two blocks per SM.
// Grid at 4096^3: 32 x 32 = 1024 blocks.
//
// Napkin maths (H200): 137.4 GFLOP at 989 TFLOP/s (datasheet, dense bf16) = 139 us; at the
// mma.sync ceiling `warpbook probe` measured (646 TFLOP/s) 213 us; the gold bar (0.45 x 989 =
// 445 TFLOP/s) is 309 us. DRAM: 2 x 33.6 MB in, 33.6 MB out: 101 MB, 21 us at 4.8 TB/s.
// Measured on the H200 (`warpbook check`, 2026-11-25) before the mainloop was unrolled: 365.0 us,
// 377 TFLOP/s (BK 64 x 3; BK 32 x 4 took 374 us against 369 side by side).
// PyTorch eager (F.linear, then F.gelu: cuBLAS on wgmma plus a second pass) took 200 us.
// The mainloop in machine code (sm_90, nvcc 13.0 -O3: 247 to 250 registers, no spills), per warp
// and 32-deep k-step: 64 HMMA.16816, 16 LDSM.x4, 8 LDGSTS.128 and 15 other instructions, as in
// puzzle 20's solution. The version timed above ran 93 others per 32 of k at BK 32 x 4 and 151
// per 64 of k at BK 64 x 3 (75 per 32). This one is at BK 32 x 4 because at BK 64 x 3 the new
// mainloop spills (about 250 bytes; 8 loads from local memory per 3-step trip): it keeps more
// registers live (4 ldmatrix bases per operand instead of 2, two cp.async destinations). With
// puzzle 20's final copy layout (8 threads a tile row at BK 64, one chunk each) and 8 steps a
// trip it does not spill at BK 64.
// Timed side by side on the H200 (`warpbook check`, 2026-11-25, run 5 then run 8): the old loop
// 364.9 us; the unrolled loop at BK 32 x 4, 340.6 and 344.2 us; with puzzle 20's final loop at
// BK 32 x 4 335.4 us, BK 64 x 2 335.2 us, BK 64 x 3 331.3 us (this file).
// This file: 331.3 us, 415 TFLOP/s, 64% of the mma.sync ceiling `warpbook probe` measured that day
// (647 TFLOP/s), short of issue 12's 70%; 24 us behind puzzle 20's plain GEMM, which is the
// epilogue's cost and more than the napkin maths above gives it.
// measured: 331.33 us on NVIDIA H200
// @tune BM=128
// @tune BN=128
// @tune WM=64
// @tune WN=64
// @tune BK=64
// @tune STAGES=3
#include <cuda_bf16.h>

#define THREADS ((BM / WM) * (BN / WN) * 32)
#define WARPS_N (BN / WN)
#define MI (WM / 16)  // m16 tiles per warp
#define NJ (WN / 8)   // n8 tiles per warp
#define CPR (BK / 8)  // 16-byte chunks per tile row
#define RPL (8 / CPR) // tile rows per 128-byte line of banks
#define A_TILE (BM * BK)
#define B_TILE (BN * BK)
#define MINB (THREADS >= 256 ? 1 : 2)
#define FAST_DIVIDE 1 // GELU's division: 1 __fdividef, 0 a plain x / y
#if BM % WM != 0 || BN % WN != 0 || WM % 16 != 0 || WN % 16 != 0
#error "the warp tiles must split the block tile, in multiples of 16"
#endif
#if BK != 16 && BK != 32 && BK != 64
#error "BK must be 16, 32 or 64 (2, 4 or 8 chunks of 16 bytes per row)"
#endif
#if (BM * CPR) % THREADS != 0 || (BN * CPR) % THREADS != 0
#error "the tile copies must split evenly over the threads"
#endif
#if STAGES < 2
#error "the ring needs two stages at least"
#endif

// Element offset of chunk `ch` (8 bf16) of row `r` in a [rows][BK] tile, XOR-swizzled: the RPL
// rows of one 128-byte line keep their places, and the lines' chunks are permuted so that 8
// consecutive rows at one logical chunk hit 8 different bank groups.
__device__ __forceinline__ int swz(int r, int ch) {
  return r * BK + ((ch ^ ((r / RPL) % CPR)) << 3);
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
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
// acc (16 x 8, f32) += a (16 x 16, bf16, row) x b (16 x 8, bf16, col)
__device__ __forceinline__ void mma_bf16(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Chunk (r, k .. k+7) of X (`rows` x K, row-major, K % 8 != 0: rows not 16-byte aligned) into
// shared memory at dst through registers, element by element, zeros outside X.
__device__ __forceinline__ void load_chunk_scalar(__nv_bfloat16* dst, const __nv_bfloat16* X,
                                                  int rows, int K, int r, int k) {
  __align__(16) unsigned short v[8];
  const unsigned short* Xs = reinterpret_cast<const unsigned short*>(X);
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = (r < rows && k + j < K) ? Xs[(long long)r * K + k + j] : 0;
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

// The tanh form of GELU, as x * sigmoid(2u): 0.5 x (1 + tanh(u)) = x / (1 + e^-2u). No
// cancellation in the negative tail (where 1 + tanh(u) would lose its digits), and no NaN at
// large |x|: e^-2u is 0 or inf there, giving x or -0.
__device__ __forceinline__ float gelu(float x) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x); // sqrt(2 / pi) (x + ...)
#if FAST_DIVIDE
  return __fdividef(x, 1.0f + __expf(-2.0f * u));
#else
  return x / (1.0f + __expf(-2.0f * u));
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    gemm_bias_gelu(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                   const __nv_bfloat16* __restrict__ bias, __nv_bfloat16* __restrict__ Y, int M,
                   int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16* smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool vec = (K % 8) == 0;
  const bool warp_busy = bm + wm * WM < M && bn + wn * WN < N;
  constexpr int STAGE_BYTES = (A_TILE + B_TILE) * 2;
  const unsigned sbase = smem_addr(smem);

  // Copies: thread tid always takes chunk tid % CPR of rows tid / CPR + i * RSTEP, whose
  // swizzle is the same (the row step is a multiple of RPL * CPR): each chunk's shared offset is
  // a compile-time stride from the first, and its global address moves by BK a step. Rows past
  // M (N) are clamped to the last row: they only feed rows (columns) of C that are never stored,
  // so no per-row test is needed, and every copy reads real data.
  constexpr int RSTEP = THREADS / CPR;
  constexpr int NA = BM / RSTEP, NB = BN / RSTEP;
  static_assert(RSTEP % (RPL * CPR) == 0, "the row step must keep each chunk's swizzle");
  const int cr = tid / CPR, cc = tid % CPR;
  const unsigned sa = sbase + 2 * swz(cr, cc); // + 2 * i * RSTEP * BK for chunk i
  const __nv_bfloat16* pa[NA];
  const __nv_bfloat16* pb[NB];
#pragma unroll
  for (int i = 0; i < NA; ++i) pa[i] = A + (long long)min(bm + cr + i * RSTEP, M - 1) * K + cc * 8;
#pragma unroll
  for (int i = 0; i < NB; ++i) pb[i] = B + (long long)min(bn + cr + i * RSTEP, N - 1) * K + cc * 8;

  // Tile kt (k0 = kt * BK) into stage s, any tile, K % 8 == 0 or not: zeros past K. The
  // pointers stand at k = kbase * BK (the steady-state loop below moves them).
  int kbase = 0;
  auto load_tile = [&](int kt, int s) {
    const int k0 = kt * BK;
    if (vec) {
      const bool in = k0 + cc * 8 < K;
      const int dk = k0 - kbase * BK;
#pragma unroll
      for (int i = 0; i < NA; ++i)
        cp_async16(sa + s * STAGE_BYTES + 2 * i * RSTEP * BK, in ? pa[i] + dk : A, in ? 16 : 0);
#pragma unroll
      for (int i = 0; i < NB; ++i)
        cp_async16(sa + s * STAGE_BYTES + A_TILE * 2 + 2 * i * RSTEP * BK, in ? pb[i] + dk : B,
                   in ? 16 : 0);
      return;
    }
    __nv_bfloat16* As = smem + s * (A_TILE + B_TILE);
    __nv_bfloat16* Bs = As + A_TILE;
#pragma unroll
    for (int i = 0; i < BM * CPR / THREADS; ++i) {
      const int e = tid + i * THREADS, r = e / CPR, ch = e % CPR;
      load_chunk_scalar(As + swz(r, ch), A, M, K, bm + r, k0 + ch * 8);
    }
#pragma unroll
    for (int i = 0; i < BN * CPR / THREADS; ++i) {
      const int e = tid + i * THREADS, r = e / CPR, ch = e % CPR;
      load_chunk_scalar(Bs + swz(r, ch), B, N, K, bn + r, k0 + ch * 8);
    }
  };

  float acc[MI][NJ][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  // ldmatrix.x4 row addresses: for A, lane l points at row l % 16 of the 16 x 16 fragment, chunk
  // l / 16 (matrices: rows 0-7 | 8-15 at k 0-7, then at k 8-15: a[0..3] of the mma). For B, at
  // row (l / 16) * 8 + l % 8 of a 16-row pair of n-tiles, chunk (l / 8) % 2 (matrices: n-tile j
  // at k 0-7 | k 8-15, then n-tile j + 1: b0, b1 of each). Fragment i (j) lies 16 rows below
  // fragment 0, which keeps the swizzle: only the 16-of-k step kk changes it (the chunk is
  // 2 kk + a_ch, XORed with the row's pattern), so one shared address per kk and operand, and
  // the rest (stage, fragment) are compile-time offsets that ldmatrix takes as immediates.
  const int a_row = wm * WM + (lane % 16), a_ch = lane / 16;
  const int b_row = wn * WN + (lane / 16) * 8 + (lane % 8), b_ch = (lane / 8) % 2;
  unsigned a_addr[BK / 16], b_addr[BK / 16];
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) {
    a_addr[kk] = sbase + 2 * swz(a_row, kk * 2 + a_ch);
    b_addr[kk] = sbase + A_TILE * 2 + 2 * swz(b_row, kk * 2 + b_ch);
  }
  // One BK-deep step of the warp's 64 x 64 tile from stage buffer `soff` (bytes).
  auto mma_step = [&](unsigned soff) {
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      unsigned a[MI][4], b[NJ][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) ldmatrix_x4(a[i], a_addr[kk] + soff + i * 16 * BK * 2);
#pragma unroll
      for (int j = 0; j < NJ; j += 2) {
        unsigned d[4];
        ldmatrix_x4(d, b_addr[kk] + soff + j * 8 * BK * 2);
        b[j][0] = d[0];
        b[j][1] = d[1];
        b[j + 1][0] = d[2];
        b[j + 1][1] = d[3];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) mma_bf16(acc[i][j], a[i], b[j][0], b[j][1]);
    }
  };

  const int ktiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();
  }

  // The steady state: STAGES k-steps per trip, unrolled, so that the stage read (s) and the stage
  // written (s - 1 mod STAGES) are compile-time constants, and every tile loaded in the trip lies
  // wholly inside K (no bounds tests, no source sizes). The copies' pointers stay put over a
  // trip (the tile's k is an immediate offset) and move by STAGES * BK after it.
  int kt = 0;
  if (vec) {
    const int kfull = K / BK;        // tiles wholly inside K
    constexpr int TRIP = 2 * STAGES; // k-steps per trip: the pointers move once per TRIP
    for (; kt + TRIP + STAGES - 2 < kfull; kt += TRIP) {
#pragma unroll
      for (int s = 0; s < TRIP; ++s) {
        cp_async_wait<STAGES - 2>(); // this thread's copies of tile kt + s have landed
        __syncthreads();             // everyone's have; everyone is done with tile kt + s - 1
        const int w = (s + STAGES - 1) % STAGES; // tile kt + s + STAGES - 1, into that slot
        const int koff = (s + STAGES - 1) * BK;
#pragma unroll
        for (int i = 0; i < NA; ++i)
          cp_async16(sa + w * STAGE_BYTES + 2 * i * RSTEP * BK, pa[i] + koff, 16);
#pragma unroll
        for (int i = 0; i < NB; ++i)
          cp_async16(sa + w * STAGE_BYTES + A_TILE * 2 + 2 * i * RSTEP * BK, pb[i] + koff, 16);
        cp_async_commit();
        mma_step((s % STAGES) * STAGE_BYTES);
      }
#pragma unroll
      for (int i = 0; i < NA; ++i) pa[i] += TRIP * BK;
#pragma unroll
      for (int i = 0; i < NB; ++i) pb[i] += TRIP * BK;
    }
    kbase = kt; // pa / pb now stand kt * BK further on
  }
  // The rest (and everything when K % 8 != 0): one k-step a trip, the stage a run-time value.
  for (; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1; // into the slot tile kt - 1 used
    if (next < ktiles) load_tile(next, next % STAGES);
    cp_async_commit(); // even when empty: the group count stays right
    mma_step((kt % STAGES) * STAGE_BYTES);
  }
  cp_async_wait<0>(); // the last groups are empty: the ring is idle once everyone is here
  __syncthreads();    // and its memory becomes the epilogue's staging area
  if (!warp_busy) return;

  // Epilogue, in registers: lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each
  // m16n8 tile. Add the bias (two values per n-tile, loaded once), apply GELU, round to bf16 and
  // park the pair as one 32-bit word in this warp's WM x WN staging tile (rows of WN + 8 bf16:
  // the 8 rows g of one store fall 4 banks apart, the 4 lanes t next to each other: no conflict).
  const int g = lane / 4, t = lane % 4;
  constexpr int YS = WN + 8;
  __nv_bfloat16* Ys = smem + warp * (WM * YS);
#pragma unroll
  for (int j = 0; j < NJ; ++j) {
    const int c = bn + wn * WN + j * 8 + 2 * t;
    const float b0 = c < N ? __bfloat162float(bias[c]) : 0.0f;
    const float b1 = c + 1 < N ? __bfloat162float(bias[c + 1]) : 0.0f;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const __nv_bfloat162 y =
            __floats2bfloat162_rn(gelu(acc[i][j][2 * h] + b0), gelu(acc[i][j][2 * h + 1] + b1));
        *reinterpret_cast<__nv_bfloat162*>(Ys + (i * 16 + g + 8 * h) * YS + j * 8 + 2 * t) = y;
      }
  }
  __syncwarp();
  // Then out, row by row: a lane per 8 bf16 (16 bytes), WN / 8 lanes per row of the warp tile.
  const int r0 = bm + wm * WM, c0 = bn + wn * WN;
  constexpr int V = WN / 8;
#pragma unroll 4
  for (int e = lane; e < WM * V; e += 32) {
    const int r = e / V, c = (e % V) * 8;
    if (r0 + r >= M) continue;
    __nv_bfloat16* out = Y + (long long)(r0 + r) * N + c0 + c;
    const __nv_bfloat16* in = Ys + r * YS + c;
    if ((N % 8) == 0) { // 16-byte aligned; the 8 columns are wholly inside or wholly outside
      if (c0 + c < N) *reinterpret_cast<uint4*>(out) = *reinterpret_cast<const uint4*>(in);
    } else {
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (c0 + c + q < N) out[q] = in[q];
    }
  }
}
