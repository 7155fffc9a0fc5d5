// Solution · 19 WMMA GEMM (f16 inputs, f32 accumulation, tensor cores through nvcuda::wmma)
//
// What: C[M x N] (f32) = A[M x K] (f16) x B[K x N] (f16), all row-major. A block of 128 threads
// (4 warps) computes a 128 x 128 tile of C; each warp a 64 x 64 tile: 4 x 4 WMMA accumulator
// fragments of 16 x 16 f32, 128 registers. __launch_bounds__(128, 2): two blocks share each SM.
// K is walked in steps of BK = 64.
//   - Per step the block stages A[128 x 64] and B[64 x 128] (32 KB of f16) in shared memory with
//     cp.async: 16-byte copies from global straight into shared memory, no registers on the way.
//   - The staging is a ring of STAGES = 2 buffers: while the warps multiply tile k, tile k + 1 is
//     in flight (the other block on the SM covers the rest of the latency). Each step commits one
//     cp.async group; cp.async.wait_group STAGES - 2 waits until this thread's copies of tile k
//     have landed, then one __syncthreads() makes tile k visible to every warp and says that
//     everyone is done with the buffer the next copy overwrites.
//   - Per 16-wide slice of k, a warp loads 4 A fragments and 4 B fragments from shared memory and
//     issues 16 mma_sync, each fragment reused 4 times from registers.
//   - The steady state runs 2 x STAGES k-steps per trip, unrolled (puzzle 20's loop, kept in
//     WMMA): the slot each step reads and the slot it refills are compile-time constants, so
//     every load_matrix_sync pointer is the warp's base plus a constant and every cp.async
//     destination the thread's base plus a constant. Every tile copied in the trip lies wholly
//     inside K: no bounds tests, no source sizes. A's source pointers stand at the trip's first k
//     (each tile's k is an immediate offset) and move once per trip; B's rows are N apart, a
//     run-time stride, so each B copy's address is one multiply-add (IMAD.WIDE) from the trip's
//     row pointer. Rows of A past M are copied from row M - 1 and chunks of B past N from the
//     row's last chunk: they only reach rows and columns of C that are never stored, so they
//     need no test, and warps whose tile lies past M or N run their mma like the others.
//     The last tiles (and everything when K or N is not a multiple of 8) go through a plain
//     one-step loop with a bounds test on every copy.
//   - Shared rows are padded by 8 halves (A: 72 halves = 144 B, B: 136 halves = 272 B), so the 8
//     rows of 16 bytes that one ldmatrix phase reads fall in 8 different groups of 4 banks.
//   - Edges (the one-step loop): a chunk of 8 halves lies wholly inside or wholly outside A (or
//     B) when K (or N) is a multiple of 8; outside chunks are cp.async'ed with a source size of
//     0, which fills zeros. When K or N is not a multiple of 8, rows are not 16-byte aligned and
//     a chunk may straddle the edge: those chunks are copied element by element, zeros past the
//     edge. Zeros in the padding make the extra k terms vanish and the extra rows and columns
//     harmless. There a warp whose whole 64 x 64 tile lies past M or N skips its mma.
//   - C: once the ring is idle, each warp parks its 64 x 64 tile in shared memory and writes it
//     out row by row with 16-byte stores (whole 128-byte lines per instruction); edge elements
//     one by one.
// Run:  warpbook check 19-wmma-gemm solutions/19-wmma-gemm.cu
//       warpbook predict 19-wmma-gemm solutions/19-wmma-gemm.cu
//
// Why: at 4096^3 the kernel must do 137 GFLOP; the least DRAM traffic is 134 MB, so everything is
// about feeding the tensor cores from shared memory. A 64 x 64 warp tile reads 8 fragments
// (4 KB) for 16 mma of 16 x 16 x 16 (131 kFLOP): 32 FLOP per shared byte, which an SM's 128 B/clk
// of shared memory sustains above the ~2450 FLOP/clk/SM mma.sync reaches on the H200. One block of
// 8 warps per SM (128 x 256 tiles, 3 stages) loses: at every __syncthreads, while its ring filled
// and during its epilogue, the whole SM's tensor cores waited. Two blocks of 4 warps per SM keep
// the same 8 warps and the same warp tile, but one block's barrier or epilogue overlaps the other's
// mma; the price is 1.5x the L2 bytes per FLOP (64 against 85 FLOP per L2 byte), which the L2
// absorbs. Why the unrolled loop: the rolled loop ran ~180 other instructions per warp and 32-deep
// k-step beside its 64 HMMA, 16 LDSM and 8 LDGSTS (sm_90, nvcc 13.0 -O3, the path K % 8 == 0
// takes): a run-time ring slot in every fragment and copy address, a 64-bit multiply, a bounds test
// and a select per copied chunk. The unrolled loop runs ~56 per 64-deep step (28 per 32 of k;
// 29 at BK 32 x 4): the wait, the barrier, the commit, 3 no-op LDS ptxas puts before
// cp.async, 8 IMAD.WIDE for the B copies, and ~36 for fragment addresses. That last part WMMA
// cannot shed: ptxas lowers each wmma.load to an ldmatrix at (lane offset x 2 + pointer) and
// folds no constant into the instruction's immediate (puzzle 20's ldmatrix, in inline PTX,
// does), so it keeps as many of the loop-invariant addresses in registers as fit (255
// registers; its few spills lie outside the loop) and recomputes the rest each trip.
// Shared memory: 2 x (128 x 72 + 64 x 136) x 2 B = 71680 B of ring, 73728 B for the epilogue's
// C staging: 73728 B per block, dynamic (@tune SMEM), two blocks per SM. Grid at 4096^3:
// 32 x 32 = 1024 blocks on 132 SMs x 2.
//
// Napkin maths: 137.4 GFLOP at 989 TFLOP/s (datasheet, dense f16) = 139 us on the H200; the
// mma.sync path that WMMA compiles to peaks near 646 TFLOP/s (213 us), wgmma near 895 (154 us,
// what `warpbook probe` measures with random data; WMMA cannot use it). DRAM: 134 MB at 4.8
// TB/s is 28 us.
// Measured on the H200 (`warpbook check`): 397.4 us, 346 TFLOP/s, 53% of the mma.sync ceiling
// `warpbook probe` measures (647-653 TFLOP/s), clear of the 50% bar. `warpbook predict` says 415 us
// for this file and 525 us for BK 32 x 4: the model is no guide between K steps here (puzzle 20's
// loops show the same).
// What loses, and by how much (H200, `warpbook check`, medians):
//   - The loop rolled (K step 32, 4 stages, a run-time ring slot, every copy with its bounds test):
//     424.3 and 425.2 us beside this file's 397.4 and 397.8 (324 TFLOP/s: half the mma.sync
//     ceiling, on the gold bar's edge). `warpbook predict` says ~455 us for it and names the
//     load/store unit: it charges each wmma.load 8 shared-memory wavefronts where ptxas emits one
//     ldmatrix.x4 (4).
//   - The unrolled loop at other ring shapes, side by side: BK 32 x 2 stages 514.1 and 513.1 us, BK
//     32 x 4 410.2 and 410.1.
//   - On the rolled loop, against the same file with other settings:
//       128 x 256 tile, 8 warps, 3 stages                        584 us  235 TFLOP/s
//       128 x 128 tile, 4 warps, 2 blocks per SM, 4 stages       430 us  319 TFLOP/s
//       ... and C through shared memory with 16-byte stores      424 us  324 TFLOP/s
//       ... with a K step of 64 instead                          445 us
//       ... with blocks grouped 8 rows at a time for the L2      480 us
//       a software pipeline of fragments in registers (255 regs) 477-480 us
// On the H100 (`warpbook check`, two runs each) this file takes 438.3-439.4 us, 313 TFLOP/s: 48%
// of the 647 TFLOP/s mma.sync ceiling `warpbook probe` measures there; 50% is 424.7 us. Nothing
// tried closes the gap. BK 64 x 3 stages: 431.4-432.1 us (49.3%); the same with the grid taken in
// groups of 2, 4, 8 or 16 rows of tiles: 427.5-432.7 (49.7% at best; the blocks on the GPU at
// once already share their B panels); the same with a k-slice's B fragments all loaded before
// its mma: 431.3-432.1. BK 32 x 3: 448.3-450.1, x 4: 445.1-445.5, x 6: 456.8-457.6. 16 warps an
// SM (warp tiles of 64 x 32 or 32 x 64, 2 or 3 stages, one run each): 439.8-446.1. The two
// GPUs' ceilings are the same (647 against 646-653 TFLOP/s); why this kernel is 10% slower on
// the H100 is not found yet.
// measured: 397.41 us on NVIDIA H200
// measured: 438.42 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=128
// @tune WM=64
// @tune WN=64
// @tune SMEM=73728
#define BK 64
#define STAGES 2
#define MINB 2
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

#define THREADS ((BM / WM) * (BN / WN) * 32)
#define WARPS_N (BN / WN)
#define FM (WM / 16) // fragments per warp along M
#define FN (WN / 16) // and along N
#define AS (BK + 8)  // halves per row of the A tile: 16-byte rows land on distinct bank groups
#define BS (BN + 8)  // halves per row of the B tile
#define A_TILE (BM * AS)
#define B_TILE (BK * BS)
#define RING_BYTES (STAGES * (A_TILE + B_TILE) * 2)
#define CS (WN + 8) // floats per row of a warp's C staging tile: 2 wavefronts per fragment store
#define EPI_BYTES ((THREADS / 32) * WM * CS * 4)
#if SMEM < RING_BYTES || SMEM < EPI_BYTES
#error "SMEM is too small for the ring (see the @tune line)"
#endif
#if BM % WM != 0 || BN % WN != 0 || WM % 16 != 0 || WN % 16 != 0 || BK % 16 != 0
#error "the warp tiles must split the block tile into 16 x 16 fragments"
#endif
#if (BM * BK / 8) % THREADS != 0 || (BK * BN / 8) % THREADS != 0
#error "the tile copies must split evenly over the threads"
#endif
#if STAGES < 2
#error "the ring needs two stages at least"
#endif

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

// The 8 halves X[r][c .. c+7] (X: R rows of `cols` halves, cols % 8 != 0, so rows are not
// 16-byte aligned) to dst through registers, element by element, zeros outside X.
__device__ __forceinline__ void load_chunk_scalar(__half* dst, const __half* X, int R, int cols,
                                                  int r, int c) {
  __align__(16) __half v[8];
#pragma unroll
  for (int j = 0; j < 8; ++j)
    v[j] = (r < R && c + j < cols) ? X[(long long)r * cols + c + j] : __float2half(0.0f);
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    wmma_gemm(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C,
              int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __half* smem = reinterpret_cast<__half*>(smem_raw);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool a_vec = (K % 8) == 0, b_vec = (N % 8) == 0;
  const bool warp_busy = bm + wm * WM < M && bn + wn * WN < N;
  constexpr int STAGE_H = A_TILE + B_TILE; // halves per ring slot
  const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);

  // Each thread copies the same chunk positions of every tile: A rows a_r + i * A_RPP at column
  // a_c, B rows b_r + i * B_RPP at column b_c. Only k0 moves from tile to tile.
  constexpr int A_RPP = THREADS / (BK / 8), B_RPP = THREADS / (BN / 8);
  constexpr int NA = BM / A_RPP, NB = BK / B_RPP; // chunks per thread and tile
  const int a_r = tid / (BK / 8), a_c = (tid % (BK / 8)) * 8;
  const int b_r = tid / (BN / 8), b_c = (tid % (BN / 8)) * 8;
  const unsigned sa = sbase + 2 * (a_r * AS + a_c);          // + stage, + i * A_RPP rows
  const unsigned sb = sbase + 2 * (A_TILE + b_r * BS + b_c); // + stage, + i * B_RPP rows

  // Any tile kt into slot s, with bounds: zeros past M, N and K (the prologue and the tail).
  auto load_tile = [&](int kt, int s) {
    const int k0 = kt * BK;
    if (a_vec) {
#pragma unroll
      for (int i = 0; i < NA; ++i) {
        const int r = a_r + i * A_RPP;
        const bool in = bm + r < M && k0 + a_c < K;
        cp_async16(sa + 2 * (s * STAGE_H + i * A_RPP * AS),
                   in ? A + (long long)(bm + r) * K + k0 + a_c : A, in ? 16 : 0);
      }
    } else {
      __half* As = smem + s * STAGE_H;
#pragma unroll
      for (int i = 0; i < NA; ++i)
        load_chunk_scalar(As + (a_r + i * A_RPP) * AS + a_c, A, M, K, bm + a_r + i * A_RPP,
                          k0 + a_c);
    }
    if (b_vec) {
#pragma unroll
      for (int i = 0; i < NB; ++i) {
        const int r = b_r + i * B_RPP;
        const bool in = k0 + r < K && bn + b_c < N;
        cp_async16(sb + 2 * (s * STAGE_H + i * B_RPP * BS),
                   in ? B + (long long)(k0 + r) * N + bn + b_c : B, in ? 16 : 0);
      }
    } else {
      __half* Bs = smem + s * STAGE_H + A_TILE;
#pragma unroll
      for (int i = 0; i < NB; ++i)
        load_chunk_scalar(Bs + (b_r + i * B_RPP) * BS + b_c, B, K, N, k0 + b_r + i * B_RPP,
                          bn + b_c);
    }
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  // One BK-deep step of the warp's tile from ring slot `s`. In the steady state s is a
  // compile-time constant, so every fragment's pointer is the warp's base plus a constant.
  const __half* Aw = smem + wm * WM * AS;
  const __half* Bw = smem + A_TILE + wn * WN;
  auto mma_step = [&](int s) {
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[FM];
#pragma unroll
      for (int i = 0; i < FM; ++i)
        wmma::load_matrix_sync(a[i], Aw + s * STAGE_H + i * 16 * AS + kk, AS);
#pragma unroll
      for (int j = 0; j < FN; ++j) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
        wmma::load_matrix_sync(b, Bw + s * STAGE_H + kk * BS + j * 16, BS);
#pragma unroll
        for (int i = 0; i < FM; ++i) wmma::mma_sync(acc[i][j], a[i], b, acc[i][j]);
      }
    }
  };

  const int ktiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();
  }

  // The steady state (K and N multiples of 8): TRIP = 2 x STAGES k-steps per trip, unrolled, so
  // the slot each step reads (s % STAGES) and writes ((s - 1) % STAGES) are compile-time
  // constants, and every tile copied in the trip lies wholly inside K: no bounds tests, no
  // source sizes. Rows of A past M are copied from row M - 1, and chunks of B past N from the
  // last chunk of the row: they only reach rows and columns of C that are never stored. A's
  // pointers stand at the trip's first k (each tile's k an immediate offset) and move once per
  // trip; B's rows are N apart (a run-time stride), so each copy's address is one multiply-add
  // from the trip's row pointer. Idle warps (past M or N) run the mma like the others.
  int kt = 0;
  if (a_vec && b_vec) {
    constexpr int TRIP = 2 * STAGES;
    const int kfull = K / BK; // tiles wholly inside K
    const __half* pa[NA];
#pragma unroll
    for (int i = 0; i < NA; ++i) pa[i] = A + (long long)min(bm + a_r + i * A_RPP, M - 1) * K + a_c;
    const __half* pb = B + (long long)b_r * N + min(bn + b_c, N - 8);
    const long long trip_b = (long long)TRIP * BK * N;
    for (; kt + TRIP + STAGES - 2 < kfull; kt += TRIP) {
#pragma unroll
      for (int s = 0; s < TRIP; ++s) {
        cp_async_wait<STAGES - 2>(); // this thread's copies of tile kt + s have landed
        __syncthreads();             // everyone's have; everyone is done with tile kt + s - 1
        const int w = (s + STAGES - 1) % STAGES; // tile kt + s + STAGES - 1, into that slot
        const int t = s + STAGES - 1;            // its place in the trip
#pragma unroll
        for (int i = 0; i < NA; ++i)
          cp_async16(sa + 2 * (w * STAGE_H + i * A_RPP * AS), pa[i] + t * BK, 16);
#pragma unroll
        for (int i = 0; i < NB; ++i)
          cp_async16(sb + 2 * (w * STAGE_H + i * B_RPP * BS),
                     pb + (long long)(t * BK + i * B_RPP) * N, 16);
        cp_async_commit();
        mma_step(s % STAGES);
      }
#pragma unroll
      for (int i = 0; i < NA; ++i) pa[i] += TRIP * BK;
      pb += trip_b;
    }
  }
  // The rest (and everything when K or N is not a multiple of 8): one k-step a trip, the slot a
  // run-time value, the copies with their bounds tests.
  for (; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1; // into the slot tile kt - 1 used
    if (next < ktiles) load_tile(next, next % STAGES);
    cp_async_commit(); // even when empty: the group count stays right
    if (warp_busy) mma_step(kt % STAGES);
  }

  // Epilogue: the ring is idle (its last groups are empty) once every thread passes this barrier.
  cp_async_wait<0>();
  __syncthreads();
  // Each warp parks its WM x WN tile in shared memory (rows of WN + 8 floats), then writes it out
  // row by row with 16-byte stores: a lane per 4 floats, whole 128-byte lines per instruction.
  if (!warp_busy) return;
  float* Cs = reinterpret_cast<float*>(smem_raw) + warp * (WM * CS);
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j)
      wmma::store_matrix_sync(Cs + i * 16 * CS + j * 16, acc[i][j], CS, wmma::mem_row_major);
  __syncwarp();
  const int r0 = bm + wm * WM, c0 = bn + wn * WN;
  if ((N % 4) == 0) {
    constexpr int V = WN / 4; // float4 per row
#pragma unroll 4
    for (int e = lane; e < WM * V; e += 32) {
      int r = e / V, c = (e % V) * 4;
      if (r0 + r < M && c0 + c < N) // N % 4 == 0: a float4 is wholly inside or outside
        *reinterpret_cast<float4*>(C + (long long)(r0 + r) * N + c0 + c) =
            *reinterpret_cast<const float4*>(Cs + r * CS + c);
    }
  } else {
    for (int e = lane; e < WM * WN; e += 32) {
      int r = e / WN, c = e % WN;
      if (r0 + r < M && c0 + c < N) C[(long long)(r0 + r) * N + c0 + c] = Cs[r * CS + c];
    }
  }
}
