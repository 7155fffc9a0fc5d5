// Solution · 20 bf16 GEMM with mma.sync (inline PTX), ldmatrix and a cp.async ring
//
// What: C[M x N] (f32) = A[M x K] (bf16) x B^T, with B given as [N x K] (bf16), both row-major:
// C[r][c] = sum over k of A[r][k] * B[c][k], products exact, sums in f32. A block of 256 threads
// (8 warps, 4 x 2) computes a 256 x 128 tile of C, one block per SM; each warp a 64 x 64 tile:
// 4 x 8 mma tiles of m16n8, 128 f32 accumulator registers per lane.
//   - K is walked in steps of BK = 64. Per step the block stages A[256 x 64] and B[128 x 64]
//     (48 KB of bf16) in shared memory with cp.async.cg: 16 bytes from global straight into
//     shared memory, no registers on the way, L1 skipped.
//   - A ring of STAGES = 4 slots, synchronised per slot with mbarriers, not per block with
//     __syncthreads(): full[s] completes when every thread's copies into slot s have landed (each
//     thread arrives through cp.async.mbarrier.arrive.noinc, which fires when its own copies are
//     done), empty[s] when every thread has read slot s. In step k a thread waits on empty for the
//     slot of tile k + 2 (tile k - 2 left it, which every warp finished at least a step ago),
//     copies tile k + 2 into it, waits on full for tile k, multiplies, and arrives on empty. A warp
//     waits for its data, not for the slowest warp: two tiles in flight, no block-wide barrier.
//   - The copies' addresses are worked out once, before the loop: a thread always copies the
//     same chunk column (tid % 8) of rows a fixed step apart (tid / 8 + 32 i), so each step it
//     only adds BK to a pointer. Per copy instruction a warp covers 4 whole rows (4 x 128 bytes):
//     a form whose instruction covered 8 half rows (the same bytes) took 11% longer (2 blocks of
//     128 x 128, 346.6 and 342.7 us beside 310.0 and 309.1): the L2 counts requests.
//     Computed per chunk per step (row, chunk, swizzle, bounds, a 64-bit multiply: ~20 integer
//     instructions for each of 16 chunks a step) the 128 x 128 kernel took 465 us instead of 343
//     on the H200: the tensor cores waited on instruction issue, not on memory.
//   - The steady state runs STAGES k-steps per trip, unrolled, so that the slot each step reads
//     and writes is a compile-time constant; every tile it copies lies wholly inside K, so the
//     copies need no bounds test and no source size. All that is left to run time is one register
//     per operand and 16 of k for ldmatrix (fragment, slot: immediate offsets), one register for
//     the cp.async destinations, one global pointer per copied row (the tile's k within the trip:
//     an immediate offset), moved once per trip, and the trip's phase parity. The last tiles (and
//     everything when K % 8 != 0) go through a plain one-step loop with the bounds tests.
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
//     through registers, zeros past the edge (and that thread arrives on full with a plain
//     mbarrier.arrive: its stores are done).
//   - C goes through shared memory (the ring, free once the loop is done): each warp writes 16 of
//     its rows at a time from the accumulators, then stores whole rows, a float4 a lane, 2 rows of
//     256 bytes an instruction. Straight from the accumulators each store instruction would write
//     a 32-byte sector in each of 8 rows' lines, four times the L2 requests for the same bytes.
//     The staging rows are swizzled too (chunk c of row r at c ^ 2 (r % 4)): no bank conflicts.
//     The stores are streaming (__stcs, st.global.cs): C is written once and never read back,
//     so it should not push A and B panels out of the L2.
// Run:  warpbook check 20-mma-bf16-gemm solutions/20-mma-bf16-gemm.cu
//       warpbook predict 20-mma-bf16-gemm solutions/20-mma-bf16-gemm.cu
//
// Why: 4096^3 is 137.4 GFLOP over at least 134 MB (2 MK + 2 NK + 4 MN bytes): 1024 FLOP per
// byte, five times right of the tensor cores' ridge (989 / 4.8 = 206). Everything is feeding the
// tensor cores. A 64 x 64 warp tile reads 4 KB of shared memory per 16 of k (8 ldmatrix.x4) for
// 32 mma of 4096 FLOP: 32 FLOP per shared byte, so the SM's 128 B/clk of shared memory carries
// 4096 FLOP/clk, above the ~2700 FLOP/clk/SM that mma.sync peaks at on the H200.
// The L2 is what sets the pace. A 128 x 128 block tile does 64 FLOP per byte it copies (2 x 128 x
// 128 x 64 FLOP per 32 KB): 2.1 GB of L2 reads at 4096^3, 7.0 TB/s at 308 us, 79% of the 8.8
// TB/s `warpbook probe` measured for the L2. A 256 x 128 tile does 85 FLOP per byte: 1.6 GB,
// 5.4 TB/s at 298 us. Taken out of the 128 x 128 kernel one at a time (timed with
// `warpbook run --time-wrong` beside it at 307.3-310.0 us): the copies in the loop 255.7/256.2
// us (-17%), every mma's operands but a quarter loaded by ldmatrix 300.4/300.3 (-3%), the
// barrier and wait 297.0/295.9 (-4%), the stores of C 297.2/296.9 (-4%), copies, barrier and
// wait together 251.1/252.6.
// One block of 8 warps per SM, not two of 4 (puzzle 19's lesson on the H200): the larger tile
// cuts the L2 reads by a quarter. With one barrier a k-step that gain went to the tensor cores
// idling at every barrier (no other block to fill in); synchronised per slot it stays.
// Shared memory: 4 x (256 + 128) x 64 x 2 B = 196608 B per block (and 64 B of mbarriers), one
// block per SM. Grid at 4096^3: 32 x 16 = 512 blocks over 132 SMs (3.9 waves). That much shared
// memory is a Hopper's (227 KB a block); the code is Ampere's (cp.async, ldmatrix, mma.sync and
// mbarriers all run on sm_80), so on an A100 (163 KB) take STAGES = 3, on an RTX 4090 (99 KB)
// STAGES = 2. On sm_90 the file compiles to the same machine code as the one timed.
//
// Napkin maths (H200): 137.4 GFLOP at 989 TFLOP/s (datasheet, dense bf16) = 139 us; at the
// mma.sync ceiling `warpbook probe` measured (646 TFLOP/s) 213 us; the gold bar (0.45 x 989 =
// 445 TFLOP/s) is 309 us, 70% of the mma.sync ceiling 304 us. DRAM: 134 MB at 4.8
// TB/s is 28 us, hidden under the math. cuBLAS (torch.matmul, on wgmma) takes 178 us at this size.
//
// What loses, and by how much (H200, 4096^3, medians of `warpbook check` or `warpbook run
// --time-wrong`, each version timed side by side with the one it changes):
//   - The loop's instructions. With the ring stage and the ldmatrix and copy addresses worked out
//     at run time (a rolled loop, 128 x 128 tiles, BK 32 x 4) the kernel took 343 us. In machine
//     code (sm_90, nvcc 13.0 -O3, 247 to 249 registers, no spills) its mainloop ran, per warp and
//     32-deep k-step, 64 HMMA.16816, 16 LDSM.x4 and 8 LDGSTS.128 and 87 other instructions: 16 IMAD
//     for the ldmatrix addresses, ~45 for the copies (a 64-bit multiply, a row test and a select of
//     the source per chunk), ~15 of branches over K % 8, the last tiles and idle warps. Unrolled so
//     the slots are constants, the same step has 15 others (the wait, the barrier, the commit, 3
//     no-op LDS that ptxas puts before cp.async, 8 for the pointers and the loop's test): STAGES
//     k-steps a trip 326 us, 2 x STAGES 319-321 us, 4 x STAGES 310.2 beside 308.5 (the pointers
//     moved half as often, nothing gained).
//   - The ring's shape (128 x 128, one barrier a k-step, 2 x STAGES steps a trip): BK 64 x 2 307.1
//     us, x 3 311.2, x 4 348.0 (one block per SM); BK 32 x 3 327.3, x 4 320.5, x 5 321.4. On the
//     rolled loop: BK 64 x 3 349, BK 64 x 4 496; ldmatrix of step k + 1 issued before the mma of
//     step k 349 (ptxas already interleaves them); 8 warps of 64 x 32 or 32 x 64 warp tiles, two
//     blocks per SM, 417 and 424; blocks grouped 8 tile rows at a time for the L2 352 beside 346.
//   - Larger tiles behind one barrier a k-step, beside the 128 x 128 form's 307-309 us: 256 x 128 x
//     3 stages 308.5, x 4 309.6; 128 x 256 x 3 310.1, x 4 311.6, at BK 32 x 5 317.6. A quarter
//     fewer bytes copied per FLOP buys nothing while every k-step ends at a block-wide barrier:
//     with one block an SM the tensor cores idle at each one.
//   - Synchronisation, beside the 128 x 128 form's 307.6-309.6 us (two rounds each): 256 x 128 with
//     one barrier a step, 3 stages, 308.8/307.8, with C through shared memory 305.2/304.8 (the same
//     staging in the 128 x 128 form 309.3/309.3: there the other block's mma hides the stores);
//     synchronised per slot with one arrival per warp on empty (lane 0 after __syncwarp) 4 stages
//     301.0/301.2, 3 stages 302.9/303.0, 128 x 256 303.6/304.1, three tiles in flight instead of
//     two 305.6/306.4, waiting on full before the copies 316.3/316.3, C stored straight from the
//     accumulators 303.6/305.1; the 128 x 128 form synchronised per slot (two blocks an SM)
//     315.1/316.3. Every thread arriving on empty (this file) 298.0/298.0 us, 461 TFLOP/s. Without
//     its barriers the 256 x 128 form ran 291.7/290.9 us, without its copies 271.2/271.2.
//   - Streaming C stores (__stcs) against plain ones: 306.2/307.9 against 308.0/307.4 at BK 64 x 2,
//     307.3/308.0 against 310.1/310.2 at BK 64 x 3.
//   - The last, part-filled round of blocks: M = 3968, 4096 and 4224 (992, 1024, 1056 tiles of 128
//     x 128) all take 307-309 us, so it costs this size ~3%. Cutting the work differently
//     (stream-K: the last round's tiles split along K, partial sums handed over through global
//     memory) ran 317-343 us in every form tried, and blocks that computed more than one tile lost
//     ~20 us even with nothing split; a persistent form whose ring runs on from tile to tile,
//     launched as exactly the 256 blocks it needs, took 321.6 us beside 312.2 and 310.9 on an H100
//     (bench/perfmodel/experiments/stream-k/).
//   - The order of the mma of a 16-k step (H100, beside 312.8 and 309.1 us): serpentine (n-tiles
//     reversed on odd m-tiles, for operand reuse) 313.5 us, n-tiles outside and m-tiles inside
//     318.3: ptxas schedules them well enough as written.
// The model (`warpbook predict`) says 272 us for this file: 0.91 of the H200. It misses the L2's
// request rate, the limit above.
// measured: 298.0 us on NVIDIA H200
// measured: 297.82 us on NVIDIA H100 80GB HBM3
// @tune BM=256
// @tune BN=128
// @tune WM=64
// @tune WN=64
// @tune BK=64
// @tune STAGES=4
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

// The mbarriers in their sm_80 forms (Ampere has them), but for the wait: sm_90's try_wait lets
// the hardware suspend the thread until the phase completes (or a time limit passes); sm_80's
// test_wait only looks, so there the loop polls.
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%0]; }" ::"r"(bar) : "memory");
}
// One arrival on bar once every cp.async this thread has issued so far has landed.
__device__ __forceinline__ void mbar_arrive_copies(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(bar) : "memory");
}
#if __CUDA_ARCH__ >= 900
#define MBAR_WAIT_PARITY "mbarrier.try_wait.parity.shared::cta.b64"
#else
#define MBAR_WAIT_PARITY "mbarrier.test_wait.parity.shared.b64"
#endif
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned ok;
  do {
    asm volatile("{ .reg .pred p; " MBAR_WAIT_PARITY " p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(ok)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!ok);
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

  // The ring is synchronised per slot, not per block (see the header): full[s] completes when
  // every thread's copies into slot s have landed, empty[s] when every thread has read it.
  __shared__ unsigned long long bars[2 * STAGES];
  const unsigned full0 = smem_addr(&bars[0]), empty0 = smem_addr(&bars[STAGES]);
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full0 + 8 * s, THREADS);
      mbar_init(empty0 + 8 * s, THREADS);
    }
  }
  __syncthreads();
  const int ktiles = (K + BK - 1) / BK;
  // Tiles in flight beyond the one being read. With two slots only one: its slot is the one tile
  // k - 1 left, so the copies wait for every warp to finish the step before (a barrier, in effect).
  constexpr int AHEAD = STAGES > 2 ? STAGES - 2 : 1;
  // Tile u into its slot: wait for the slot to be empty (tile u - STAGES read by every warp),
  // copy, and arrive on full once the copies land.
  auto refill = [&](int u) {
    if (u >= ktiles) return;
    const int slot = u % STAGES;
    if (u >= STAGES) mbar_wait(empty0 + 8 * slot, (u / STAGES - 1) & 1);
    load_tile(u, slot);
    if (vec) {
      mbar_arrive_copies(full0 + 8 * slot);
    } else {
      mbar_arrive(full0 + 8 * slot); // the scalar copies are plain stores, already done
    }
  };
  for (int u = 0; u < AHEAD; ++u) refill(u);
  int kt = 0;
  if (vec) {
    // The steady state: a trip of STAGES k-steps, unrolled, so that every slot is a compile-time
    // constant; every tile copied in it lies wholly inside K (no bounds tests), and the copies'
    // pointers move once a trip (the tile's k is an immediate offset).
    const int kfull = K / BK;
    unsigned ph = 0; // parity of the trip's phase: (kt / STAGES) & 1
    for (; kt + STAGES + AHEAD <= kfull; kt += STAGES, ph ^= 1) {
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        const int w = (s + AHEAD) % STAGES, koff = (s + AHEAD) * BK;
        if (kt + s + AHEAD >= STAGES)
          mbar_wait(empty0 + 8 * w, ph ^ (((s + AHEAD) / STAGES + 1) & 1));
#pragma unroll
        for (int i = 0; i < NA; ++i)
          cp_async16(sa + w * STAGE_BYTES + 2 * i * RSTEP * BK, pa[i] + koff, 16);
#pragma unroll
        for (int i = 0; i < NB; ++i)
          cp_async16(sa + w * STAGE_BYTES + A_TILE * 2 + 2 * i * RSTEP * BK, pb[i] + koff, 16);
        mbar_arrive_copies(full0 + 8 * w);
        mbar_wait(full0 + 8 * s, ph);
        mma_step(s * STAGE_BYTES);
        mbar_arrive(empty0 + 8 * s);
      }
#pragma unroll
      for (int i = 0; i < NA; ++i) pa[i] += STAGES * BK;
#pragma unroll
      for (int i = 0; i < NB; ++i) pb[i] += STAGES * BK;
    }
    kbase = kt; // pa / pb now stand kt * BK further on
  }
  for (; kt < ktiles; ++kt) {
    refill(kt + AHEAD);
    const int slot = kt % STAGES;
    mbar_wait(full0 + 8 * slot, (kt / STAGES) & 1);
    mma_step(slot * STAGE_BYTES);
    mbar_arrive(empty0 + 8 * slot);
  }
  // Epilogue. Lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each m16n8 tile: a
  // store straight from there writes 8 rows x 32 bytes, a sector in each of 8 lines. Instead each
  // warp passes its tile through shared memory 16 rows at a time and stores whole rows: 2 rows x
  // 256 bytes an instruction, whole 128-byte lines. Every copy has landed (each was waited for
  // through full[]); the barrier makes sure every warp is done reading the ring before any warp
  // writes C into it.
  __syncthreads();
  if (!warp_busy) return;
  const int g = lane / 4, t = lane % 4;
  constexpr int NWARPS = THREADS / 32, CCH = WN / 4; // 16-byte chunks of a warp tile row
  // Chunk c of row r sits at c ^ 2 (r % CSW): the 4 rows of a half-warp's float2 stores fall in
  // different bank groups, and the 8 chunks a quarter-warp's float4 reads are a permutation.
  constexpr int CSW = CCH < 8 ? CCH / 2 : 4;
  constexpr bool STAGED = NWARPS * 16 * WN * 4 <= STAGES * (A_TILE + B_TILE) * 2;
  if constexpr (STAGED) {
    float* cs = reinterpret_cast<float*>(smem_raw) + warp * 16 * WN;
    constexpr int RPI = 32 / CCH; // rows per store instruction (CCH <= 32)
    const int rr = lane / CCH, cc4 = lane % CCH;
    const int c = bn + wn * WN + cc4 * 4;
    const bool quad = (N % 4) == 0 && c + 3 < N;
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = g + 8 * h, ch = (j * 8 + 2 * t) / 4;
          *reinterpret_cast<float2*>(cs + r * WN + ((ch ^ ((r % CSW) << 1)) << 2) + (2 * t) % 4) =
              make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        }
      __syncwarp();
#pragma unroll
      for (int q = 0; q < 16; q += RPI) {
        const int r = q + rr, gr = bm + wm * WM + i * 16 + r;
        if (gr < M) {
          const float4 v =
              *reinterpret_cast<const float4*>(cs + r * WN + ((cc4 ^ ((r % CSW) << 1)) << 2));
          float* out = C + (long long)gr * N + c;
          if (quad) {
            __stcs(reinterpret_cast<float4*>(out), v);
          } else {
            if (c < N) out[0] = v.x;
            if (c + 1 < N) out[1] = v.y;
            if (c + 2 < N) out[2] = v.z;
            if (c + 3 < N) out[3] = v.w;
          }
        }
      }
      __syncwarp();
    }
    return;
  }
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
          __stcs(reinterpret_cast<float2*>(out), make_float2(v0, v1));
        } else {
          if (c < N) out[0] = v0;
          if (c + 1 < N) out[1] = v1;
        }
      }
    }
}
