// Solution 20 as it stood until 2026-12-03 (session 19): 128 x 128 blocks, two an SM, one barrier a k-step
//
// What: C[M x N] (f32) = A[M x K] (bf16) x B^T, with B given as [N x K] (bf16), both row-major:
// C[r][c] = sum over k of A[r][k] * B[c][k], products exact, sums in f32. A block of 128 threads
// (4 warps) computes a 128 x 128 tile of C; each warp a 64 x 64 tile: 4 x 8 mma tiles of
// m16n8, 128 f32 accumulator registers per lane. __launch_bounds__(128, 2): two blocks per SM.
//   - K is walked in steps of BK = 64. Per step the block stages A[128 x 64] and B[128 x 64]
//     (32 KB of bf16) in shared memory with cp.async.cg: 16 bytes from global straight into
//     shared memory, no registers on the way, L1 skipped.
//   - A ring of STAGES = 2 buffers: while the warps multiply tile k, tile k + 1 is in flight
//     (the other block on the SM covers the rest of the latency). Each step commits one group;
//     cp.async.wait_group STAGES - 2 says this thread's copies of tile k have landed, and one
//     __syncthreads() makes them everyone's and frees the slot the next copy overwrites. One
//     barrier per k-step.
//   - The copies' addresses are worked out once, before the loop: a thread always copies the
//     same chunk column (tid % 8) of rows a fixed step apart (tid / 8 + 16 i), so each step it
//     only adds BK to a pointer.
//     Computed per chunk per step (row, chunk, swizzle, bounds, a 64-bit multiply: ~20 integer
//     instructions for each of 16 chunks a step) the same kernel took 465 us instead of 343 on
//     the H200: the tensor cores waited on instruction issue, not on memory.
//   - The steady state runs 2 x STAGES k-steps per trip, unrolled, so that the stage each
//     step reads and writes is a compile-time constant; every tile it copies lies wholly
//     inside K, so the copies need no bounds test and no source size. All that is left to run time
//     is one register per operand and 16 of k for ldmatrix (fragment, stage: immediate offsets),
//     one register per chunk column for the cp.async destinations, one global pointer per copied
//     row (the tile's k within the trip: an immediate offset), moved once per trip. The last tiles
//     (and everything when K % 8 != 0) go through a plain one-step loop with the bounds tests.
//   - Per 16 of k a warp issues 4 ldmatrix.x4 for A (one 16 x 16 fragment each) and 4 for B
//     (two 8-column n-tiles each: B is [N, K], so its rows are the "col" operand as they lie, no
//     .trans), then 32 mma.sync.m16n8k16: every fragment register is used 4 or 8 times.
//   - Shared tiles are unpadded [rows][BK] with the 16-byte chunks of each row XOR-swizzled:
//     chunk c of row r lives at c ^ ((r / 2) % 4) (BK = 32: a row is 4 chunks, two rows to a
//     128-byte line; with BK = 64 it is c ^ (r % 8)).
//     The 8 rows one ldmatrix phase reads, and the 8 chunks 8 consecutive threads cp.async, then
//     fall into the 8 different 16-byte bank groups: no conflicts, and no padding bytes.
//   - Edges: rows past M (N) are copied from the last row instead: they only reach rows
//     (columns) of C that are never stored, so they need no test and no zeros, and a warp whose
//     whole tile lies past M or N runs its mma like the others and stores nothing. Past K zeros
//     are needed: when K is a multiple of 8, a chunk of 8 bf16 lies wholly inside or wholly
//     outside, and chunks outside are cp.async'ed with a source size of 0, which writes zeros.
//     When K is not, rows are not 16-byte aligned: those tiles are copied element by element
//     through registers, zeros past the edge.
//   - C: straight from the accumulators, a float2 per lane (columns 2t, 2t + 1): each store
//     instruction writes 8 rows x 32 contiguous bytes, whole 32-byte sectors, nothing wasted.
//     The stores are streaming (__stcs, st.global.cs): C is written once and never read back,
//     so it should not push A and B panels out of the L2.
// Run:  warpbook check 20-mma-bf16-gemm solutions/20-mma-bf16-gemm.cu
//       warpbook predict 20-mma-bf16-gemm solutions/20-mma-bf16-gemm.cu
//
// Why: 4096^3 is 137.4 GFLOP over at least 134 MB (2 MK + 2 NK + 4 MN bytes): 1024 FLOP per
// byte, five times right of the tensor cores' ridge (989 / 4.8 = 206). Everything is feeding the
// tensor cores. A 64 x 64 warp tile reads 4 KB of shared memory per 16 of k (8 ldmatrix.x4) for
// 32 mma of 4096 FLOP: 32 FLOP per shared byte, so the SM's 128 B/clk of shared memory carries
// 4096 FLOP/clk, above the ~2450 FLOP/clk/SM that mma.sync peaks at on the H200 (646 TFLOP/s /
// 132 SMs / 1.98 GHz). A 128 x 128 block tile does 64 FLOP per byte it copies from the L2
// (2 x 128 x 128 x 64 FLOP per 32 KB): 2.1 GB of L2 reads in all at 4096^3, about 7 TB/s at
// 300 us. That is the L2's heaviest load here; 128 x 256 tiles (BN=256, 8 warps, one block per
// SM) cut it by a quarter, at the price of idle tensor cores at every barrier.
// Two blocks of 4 warps per SM rather than one of 8 (puzzle 19's lesson on the H200): one
// block's barrier and epilogue overlap the other's mma.
// Shared memory: 2 x (128 + 128) x 64 x 2 B = 65536 B per block, two blocks per SM. Grid at
// 4096^3: 32 x 32 = 1024 blocks over 264 resident (3.9 waves).
// Timed on the H200 (`warpbook check`, 2026-11-25), all with the copies computed once:
// BK 32 x 4 stages 343 us, BK 64 x 3 stages 349 us, BK 64 x 4 stages 496 us (one block per SM);
// 256 x 128 or 128 x 256 block tiles of 8 warps 382 us; ldmatrix of step k + 1 issued before
// the mma of step k (fragments double-buffered in registers) 349 us: no gain, ptxas already
// interleaves them. Later, side by side with this file (346 us that run): 8 warps of 64 x 32 or
// 32 x 64 warp tiles, two blocks per SM (128 registers each), 417 and 424 us (406 with 5 stages);
// 5 stages 356 us; blocks grouped 8 tile rows at a time for the L2 352 us.
//
// Napkin maths (H200): 137.4 GFLOP at 989 TFLOP/s (datasheet, dense bf16) = 139 us; at the
// mma.sync ceiling `warpbook probe` measured (646 TFLOP/s) 213 us; the gold bar (0.45 x 989 =
// 445 TFLOP/s) is 309 us. DRAM: 134 MB at 4.8 TB/s is 28 us, hidden under the math.
// Measured on the H200 (`warpbook check`, 2026-11-25), before the loop below was unrolled:
// 343.1 us, 401 TFLOP/s: 62% of the measured mma.sync ceiling. cuBLAS (torch.matmul, wgmma)
// takes 178 us at this size.
// The mainloop in machine code (sm_90, nvcc 13.0 -O3, counted on its BK 32 x 4 form: 247 to 249
// registers, no spills), per warp and 32-deep k-step: 64 HMMA.16816, 16 LDSM.x4 (4 mma per
// ldmatrix) and 8 LDGSTS.128, and 15 other instructions (the wait, the barrier, the commit, 3 no-op
// LDS that ptxas puts before cp.async, 8 for moving the pointers and the loop's test, spread over
// the trip). The version timed above (343 us) ran 87 others a step: 16 IMAD for the ldmatrix
// addresses (16 offsets in registers plus a run-time stage), ~45 for the copies (a 64-bit multiply,
// a row test and a select of the source per chunk, the run-time stage), ~15 of branches over K % 8,
// the last tiles and idle warps.
// Timed on the H200 (`warpbook check`, 2026-11-25, median; side by side within each run):
//   - run 5: the 343 us kernel 342.6 us; the unrolled loop (BK 32 x 4, 4 threads a tile row)
//     326.1 us; with 8 steps a trip and 4 threads a row as before 319.1 us.
//   - run 7: those two 326.2 and 320.5 us; the 8-step trip at BK 64 x 3 307.0 us (at BK 32 x 5,
//     321.4; x 3, 327.3); the 4-threads-a-row loop at BK 64 x 3 359.3 us.
//   - run 8: BK 64 x 2 307.1 us, x 3 311.2, x 4 348.0 (one block per SM).
//   - run 9, twice each: BK 64 x 2 308.0 and 307.4 us, with streaming C stores 306.2 and 307.9
//     (this file); BK 64 x 3 310.1 and 310.2, with streaming stores 307.3 and 308.0.
// This file: 307.1 us, 448 TFLOP/s, 69% of the mma.sync ceiling `warpbook probe` measured that day
// (647 TFLOP/s): 1% short of issue 12's 70% (303.5 us). The model (`warpbook predict`) said 306.8
// us for BK 64 x 3 but 452 us for BK 32: it is not yet a guide for these loops.
// Later the same day (session 3): 4 x STAGES k-steps a trip (the pointers moved half as often)
// 310.2 us beside this file's 308.5; its hot loop in machine code has 512 HMMA, 128 LDSM, 64 LDGSTS
// and about 40 other instructions a trip, and spills only outside it.
// Session 6 (2026-11-25): M = 3968, 4096 and 4224 (992, 1024, 1056 tiles) all take 307-309 us,
// four rounds of the 264 block slots. So the mainloop runs at 71% of the ceiling, and the
// part-filled last round costs this size ~3%. Cutting the work differently (stream-K: the last
// round's tiles split along K, partial sums handed over through global memory) ran 317-343 us
// in every form tried. Blocks that computed more than one tile lost ~20 us even with nothing
// split. See bench/perfmodel/experiments/stream-k/. Session 8 (2026-11-27, on an H100): a
// persistent form whose cp.async ring runs on from tile to tile, launched as exactly the 256
// blocks it needs, 321.6 us beside this file's 312.2 and 310.9: still slower (same README).
// Session 9 (2026-11-28, an H100, beside this file's 312.8 and 309.1 us): the mma of a 16-k step
// issued in a serpentine order (n-tiles reversed on odd m-tiles, for operand reuse) 313.5 us,
// n-tiles outside and m-tiles inside 318.3 us: ptxas schedules them well enough as written.
// Larger blocks of 8 warps (64 x 64 warp tiles, one block an SM), this loop, beside this file's
// 309.2 (session 6) and 307.3-308.7 us (session 18, two rounds): 256 x 128 with 3 stages 308.5 and
// 308.5-308.8; 256 x 128 x 4 309.6 and 309.5-309.8; 128 x 256 x 3 310.1 and 309.7-310.6; 128 x 256
// x 4 311.6 and 311.1; 128 x 256 at BK 32 x 5 317.6. A quarter fewer bytes copied per FLOP buys
// nothing: the copies into shared memory are not what holds the tensor cores back.
// measured: 308.4 us on NVIDIA H200 (2026-12-03, beside the file that replaced it)
// @tune BM=128
// @tune BN=128
// @tune WM=64
// @tune WN=64
// @tune BK=64
// @tune STAGES=2
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
#define TRIP_STAGES 2 // k-steps per trip: TRIP_STAGES x STAGES
#define STREAM_C 1    // 1: C stored with __stcs (streaming), 0: plain stores
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

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    mma_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
             float* __restrict__ C, int M, int N, int K) {
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
    constexpr int TRIP = TRIP_STAGES * STAGES; // k-steps per trip: the pointers move once per TRIP
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
  cp_async_wait<0>(); // the last groups are empty; nothing may be in flight at exit

  // Epilogue: lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each m16n8 tile.
  if (!warp_busy) return;
  const int g = lane / 4, t = lane % 4;
  const bool pairs = (N % 2) == 0; // then (r * N + c) is even: a float2 is 8-byte aligned
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      const int c = bn + wn * WN + j * 8 + 2 * t;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = bm + wm * WM + i * 16 + g + 8 * h;
        if (r >= M) continue;
        float* out = C + (long long)r * N + c;
        const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
        if (pairs && c + 1 < N) {
#if STREAM_C
          __stcs(reinterpret_cast<float2*>(out), make_float2(v0, v1));
#else
          *reinterpret_cast<float2*>(out) = make_float2(v0, v1);
#endif
        } else {
          if (c < N) out[0] = v0;
          if (c + 1 < N) out[1] = v1;
        }
      }
    }
}
