// Solution · 37 split-K GEMM: puzzle 20's mainloop over slices of K, f32 partials in a workspace,
// a second kernel (or, FUSED, the tile's last block) that adds them in a fixed order and rounds
// once
//
// What: C[M x N] (bf16) = A[M x K] (bf16) x B^T, B given as [N x K] (bf16): C[r][c] = bf16(sum
// over k of A[r][k] * B[c][k]), products exact, sums in f32, one rounding at the end.
//   - splitk_gemm, grid [N / 128, M / 128, S]: block (x, y, z) computes the 128 x 128 tile (y, x)
//     of C over slice z of K and stores its f32 partial tile in slice z of the workspace. K is
//     cut into whole BK = 64 k-tiles, shared out as evenly as they go: slice z takes tiles
//     z T / S .. (z + 1) T / S - 1 of the T = cdiv(K, 64), so slices differ by one k-tile at most
//     and no slice is left with the crumbs. S (puzzle.toml) is WAVE / tiles, at least one and no
//     more than cdiv(K, KMIN): at 512 x 512 x 16384, 16 tiles and S = 8 slices of 2048, 128
//     blocks, one on each of 128 of the 132 SMs, 32 k-steps apiece.
//   - The mainloop is solution 20's, unchanged: warps of 64 x 64 (4 here), ldmatrix.x4 from
//     XOR-swizzled tiles, mma.sync.m16n8k16, a cp.async ring (4 slots) synchronised per slot with
//     mbarriers, the steady state unrolled over the ring so that every slot is a constant. Only
//     the pointers start kb = t0 x 64 further on, and the bounds tests compare with K from there.
//     Solution 20's header explains each of those choices and what they are worth at 4096^3.
//   - The partial tile leaves through shared memory as whole 512-byte rows of f32 (solution 20's
//     epilogue), with plain stores, not streaming ones: the reduction reads these bytes next, and
//     they should still be in the L2 (8 slices of 1 MB, against the H100's 50 MB).
//   - splitk_reduce: a thread per 4 outputs adds their S partials with float4 loads, four slices'
//     loads in flight before their adds, in the order z = 0 .. S - 1, and writes 4 bf16. The fixed
//     order makes the result bit-identical from run to run: f32 addition is not associative, and
//     atomicAdd into an f32 copy of C adds the slices in whatever order they finish. CUTLASS's
//     "parallel" split-K is this (a workspace and a reduction kernel); its "serial" split-K lets
//     the blocks of one tile take turns under a semaphore instead, also in a fixed order, without
//     the second launch but with the blocks of a tile waiting on one another.
//   - FUSED = 1 (tunable; this file: 0, the form measured below) folds the reduction into
//     splitk_gemm with lesson 0005's last-block pattern: each block stores its partial, fences,
//     and takes a ticket from its tile's counter in `tickets`; the block that draws S - 1 adds the
//     tile's S partials through the L2 in the order z = 0 .. S - 1 (the same bits as FUSED = 0,
//     whichever block it is), writes C, and puts the counter back to zero for the next launch.
//     The partials are read once, straight after they are written, and splitk_reduce returns at
//     once (the puzzle launches it all the same). What it costs: 16 blocks, one per tile, each
//     read 8 x 64 KB alone while the other SMs are done: a tail at one SM's L2 bandwidth, where
//     splitk_reduce spreads the 8 MB over every SM but pays a launch. Which one wins is the
//     H100's to say (`warpbook tune --only FUSED=0,1`).
// Run:  warpbook check 37-split-k-gemm solutions/37-split-k-gemm.cu
//       warpbook predict 37-split-k-gemm solutions/37-split-k-gemm.cu --gpu h100-sxm
//
// Why: 512 x 512 x 16384 is 8.6 GFLOP over 34 MB (2 MK + 2 NK + 2 MN bytes): 252 FLOP per byte,
// just under the H100's ridge (989 TFLOP/s / 3.35 TB/s = 295): the DRAM's 10.2 us and the tensor
// cores' 8.7 us (13 us at the mma.sync rate) are close. C has only 16 tiles of 128 x 128: puzzle
// 20's grid would put 16 blocks on 132 SMs, each walking all of K, and leave 88% of the GPU idle.
// Cutting K into 8 slices gives 128 blocks of 2048-deep work; the price is the partials' round
// trip (S x M x N x 4 bytes: 8 MB written and read back) and a second launch.
// The partials cost S x 4 bytes per output, and S = WAVE / tiles: one block per SM, whatever the
// tile, leaves one f32 tile per SM, so the partials are WAVE x BM x BN x 4 bytes. Smaller tiles
// cost fewer partials but more L2 reads in the mainloop (each element of A is read once per
// column of tiles: 2 M N K (1 / BM + 1 / BN) bytes, 134 MB at 128 x 128, 101 MB at 256 x 128).
//
// Measured on an NVIDIA H100 80GB HBM3 (`warpbook tune`, medians, the launch pair): 128 x 128
// tiles, 4 warps, S = 8, at 4 stages (this file) 31.4 us, at 3 stages 34.0; 256 x 128 tiles, 8
// warps, S = 16, at 3 stages 32.7, at 4 32.9. Beside it in the same run: cuBLAS (torch.matmul,
// wgmma) 21.0 us; the two-pass Triton form of the README (128 x 128 tiles on tl.dot) 30.2 us.
//
// The alternatives, and how they compare (predicted for the H100 SXM by `warpbook predict`, the
// whole launch pair; the model reads the partials back from DRAM, so it overstates the reduction):
//   - 128 x 128 tiles, 4 warps, S = 8: 29.4 us at 3 stages (gemm 23.8, reduce 5.6), 29.9 at 4
//     (this file: the model ranks the stages the other way round from the H100).
//     2 stages as 3; 5 stages 31.0 us; BK = 32 at 4 or 5 stages 34.2 us. 8 warps
//     of 64 x 32 or 32 x 64 instead of 4 of 64 x 64: 32.7 and 33.0 us.
//   - 256 x 128 tiles, 8 warps (solution 20's shape), S = 16: 34.4 us at 4 stages (gemm 26.0,
//     reduce 8.5 for twice the partials), 33.0 us at 3; 128 x 256 at 4 stages 34.3.
//   - Fewer or more slices with 256 x 128: S = 8 (64 blocks, half the SMs idle) 43.8 us; S = 33
//     (two blocks an SM's worth, 264 blocks in two rounds) 46.2 us.
//   - 128 x 128 with two blocks an SM (WAVE = 264, S = 16): 37.7 us, twice the partials.
//   - The reduction: 1, 2, 4 or 8 outputs a thread, 128 to 512 threads a block: within 0.4 us.
//   - No split (S = 1): 144 us with 16 blocks of 128 x 128, 254 us with 8 of 256 x 128.
//   - FUSED = 1, 128 x 128 at 4 stages: 27.2 us (gemm 24.5, and 2.7 for splitk_reduce's empty
//     launch) against this file's 29.9; at 3 stages 26.8; 256 x 128 at 3 stages (S = 16) 27.7,
//     against 33.2 unfused. The model leaves out the fused form's tail (one block per tile reading
//     the other slices' partials alone, 448 KB at 128 x 128): only the H100 can rank the two.
// measured: 31.4 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=128
// @tune WM=64
// @tune WN=64
// @tune BK=64
// @tune STAGES=3
// @tune WAVE=132
// @tune KMIN=256
// @tune RBLOCK=256
// @tune RPER=4
// @tune FUSED=1
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

// The epilogue: this warp's part of the block's f32 partial tile into slice Cp of the workspace.
// Lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each m16n8 tile: a store straight
// from there writes 8 rows x 32 bytes, a sector in each of 8 lines. Instead each warp passes its
// tile through shared memory 16 rows at a time and stores whole rows: 2 rows x 256 bytes an
// instruction, whole 128-byte lines. The caller has made sure every warp is done with the ring.
__device__ __forceinline__ void store_partial(const float (&acc)[MI][NJ][4], float* __restrict__ Cp,
                                              int M, int N, int bm, int bn) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
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
          float* out = Cp + (long long)gr * N + c;
          if (quad) {
            *reinterpret_cast<float4*>(out) = v;
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
        float* out = Cp + (long long)r * N + c;
        const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
        if (pairs && c + 1 < N) {
          *reinterpret_cast<float2*>(out) = make_float2(v0, v1);
        } else {
          if (c < N) out[0] = v0;
          if (c + 1 < N) out[1] = v1;
        }
      }
    }
}

#if FUSED
// The last block of a tile to finish adds the tile's S partials, in the order z = 0 .. S - 1
// whichever block that is, and writes C. Every thread fences its own partial stores before the
// barrier, so the ticket cannot be seen before the partial is; the last block reads the others'
// partials through the L2 (__ldcg: the L1 is not kept coherent) and puts the counter back to
// zero for the next launch (every slice of the tile has counted by then).
__device__ __forceinline__ void add_slices(const float* __restrict__ part,
                                           unsigned* __restrict__ tickets,
                                           __nv_bfloat16* __restrict__ C, int M, int N, int S,
                                           int bm, int bn) {
  __shared__ unsigned last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned* tk = tickets + blockIdx.y * gridDim.x + blockIdx.x;
    last = atomicAdd(tk, 1u) == (unsigned)S - 1;
    if (last) *tk = 0;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const int tid = threadIdx.x;
  const long long total = (long long)M * N;
  if (N % 4 == 0) {
    // Thread tid takes chunks tid + i THREADS of 4 floats: U of them at once, so that each
    // slice's U loads are in flight together, and the adds stay in slice order per output.
    constexpr int Q = BN / 4, PER = BM * Q / THREADS, U = PER < 4 ? PER : 4;
    static_assert(PER % U == 0, "the tile's chunks must split evenly over the threads");
#pragma unroll 1
    for (int i0 = 0; i0 < PER; i0 += U) {
      float4 sum[U];
      long long off[U];
      bool ok[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int e = tid + (i0 + u) * THREADS, r = bm + e / Q, c = bn + (e % Q) * 4;
        ok[u] = r < M && c < N;
        off[u] = ok[u] ? (long long)r * N + c : 0;
        sum[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
      // ZU slices' loads issued before their adds: one block reads the whole tile's partials,
      // so it needs every byte it can keep in flight.
      constexpr int ZU = 4;
      auto add = [&](float4& a, const float4& b) {
        a.x += b.x;
        a.y += b.y;
        a.z += b.z;
        a.w += b.w;
      };
      int z = 0;
      for (; z + ZU <= S; z += ZU) {
        float4 v[ZU][U];
#pragma unroll
        for (int q = 0; q < ZU; ++q)
#pragma unroll
          for (int u = 0; u < U; ++u)
            v[q][u] = __ldcg(reinterpret_cast<const float4*>(part + (z + q) * total + off[u]));
#pragma unroll
        for (int q = 0; q < ZU; ++q)
#pragma unroll
          for (int u = 0; u < U; ++u) add(sum[u], v[q][u]);
      }
      for (; z < S; ++z)
#pragma unroll
        for (int u = 0; u < U; ++u)
          add(sum[u], __ldcg(reinterpret_cast<const float4*>(part + z * total + off[u])));
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (ok[u]) {
          __nv_bfloat162* out = reinterpret_cast<__nv_bfloat162*>(C + off[u]);
          out[0] = __floats2bfloat162_rn(sum[u].x, sum[u].y);
          out[1] = __floats2bfloat162_rn(sum[u].z, sum[u].w);
        }
    }
    return;
  }
  for (int e = tid; e < BM * BN; e += THREADS) {
    const int r = bm + e / BN, c = bn + e % BN;
    if (r >= M || c >= N) continue;
    const long long off = (long long)r * N + c;
    float sum = 0.0f;
    for (int z = 0; z < S; ++z) sum += __ldcg(part + z * total + off);
    C[off] = __float2bfloat16(sum);
  }
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    splitk_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                float* __restrict__ part, unsigned* __restrict__ tickets,
                __nv_bfloat16* __restrict__ C, int M, int N, int K, int S) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16* smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool vec = (K % 8) == 0;
  // This block's slice of K: k-tiles t0 .. t1 - 1 of the cdiv(K, BK), shared out as evenly as
  // whole tiles allow (slices differ by one tile at most; none is empty while S <= the tile
  // count, which KMIN >= BK guarantees). Its partial sums go to slice z of the workspace.
  const int ktotal = (K + BK - 1) / BK;
  const int t0 = (int)((long long)blockIdx.z * ktotal / S),
            t1 = (int)((long long)(blockIdx.z + 1) * ktotal / S);
  const int kb = t0 * BK; // the slice's first k
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
  for (int i = 0; i < NA; ++i)
    pa[i] = A + (long long)min(bm + cr + i * RSTEP, M - 1) * K + kb + cc * 8;
#pragma unroll
  for (int i = 0; i < NB; ++i)
    pb[i] = B + (long long)min(bn + cr + i * RSTEP, N - 1) * K + kb + cc * 8;

  // Tile kt (k0 = kt * BK) into stage s, any tile, K % 8 == 0 or not: zeros past K. The
  // pointers stand at k = kbase * BK (the steady-state loop below moves them).
  int kbase = 0;
  auto load_tile = [&](int kt, int s) {
    const int k0 = kt * BK;
    if (vec) {
      const bool in = kb + k0 + cc * 8 < K;
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
      load_chunk_scalar(As + swz(r, ch), A, M, K, bm + r, kb + k0 + ch * 8);
    }
#pragma unroll
    for (int i = 0; i < BN * CPR / THREADS; ++i) {
      const int e = tid + i * THREADS, r = e / CPR, ch = e % CPR;
      load_chunk_scalar(Bs + swz(r, ch), B, N, K, bn + r, kb + k0 + ch * 8);
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
  const int ktiles = t1 - t0;
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
    const int kfull = (min(K, t1 * BK) - kb) / BK; // whole tiles in the slice
    unsigned ph = 0;                               // parity of the trip's phase: (kt / STAGES) & 1
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
  // Every copy has landed (each was waited for through full[]); the barrier makes sure every warp
  // is done reading the ring before any warp stages its partial in it.
  __syncthreads();
  if (warp_busy) store_partial(acc, part + (long long)blockIdx.z * M * N, M, N, bm, bn);
#if FUSED
  add_slices(part, tickets, C, M, N, S, bm, bn);
#endif
}

// The combine: thread i adds the S partials of outputs RPER i .. RPER i + RPER - 1 in the order
// z = 0 .. S - 1 (one order, so the same bits every run) and rounds each sum once, to bf16. The
// partials were written a moment ago and are still in the L2. When M x N is a multiple of RPER
// every slice's run of RPER floats is aligned, and one vector load takes it.
#if RPER == 8 || RPER == 4
#define RVEC 4
typedef float4 rvec_t;
#elif RPER == 2
#define RVEC 2
typedef float2 rvec_t;
#else
#define RVEC 1
typedef float rvec_t;
#endif
extern "C" __global__ void __launch_bounds__(RBLOCK)
    splitk_reduce(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                  float* __restrict__ part, unsigned* __restrict__ tickets,
                  __nv_bfloat16* __restrict__ C, int M, int N, int K, int S) {
#if FUSED
  return; // splitk_gemm's last block of each tile has written C already
#endif
  const long long total = (long long)M * N,
                  i = (long long)RPER * (blockIdx.x * RBLOCK + threadIdx.x);
  if (i >= total) return;
  if (total % RPER == 0) {
    float s[RPER];
#pragma unroll
    for (int j = 0; j < RPER; ++j) s[j] = 0.0f;
    // Several slices' loads issued before their adds: more bytes in flight per thread.
    constexpr int U = RPER >= 4 ? 4 : 8 / RPER;
    int z = 0;
    for (; z + U <= S; z += U) {
      rvec_t v[U][RPER / RVEC];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int q = 0; q < RPER / RVEC; ++q)
          v[u][q] = *reinterpret_cast<const rvec_t*>(part + (z + u) * total + i + q * RVEC);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < RPER; ++j) s[j] += reinterpret_cast<const float*>(v[u])[j];
    }
    for (; z < S; ++z)
#pragma unroll
      for (int q = 0; q < RPER / RVEC; ++q) {
        const rvec_t v = *reinterpret_cast<const rvec_t*>(part + z * total + i + q * RVEC);
#pragma unroll
        for (int j = 0; j < RVEC; ++j) s[q * RVEC + j] += reinterpret_cast<const float*>(&v)[j];
      }
#pragma unroll
    for (int j = 0; j + 1 < RPER; j += 2)
      *reinterpret_cast<__nv_bfloat162*>(C + i + j) = __floats2bfloat162_rn(s[j], s[j + 1]);
    if (RPER == 1) C[i] = __float2bfloat16(s[0]);
    return;
  }
  for (long long e = i; e < min(total, i + RPER); ++e) {
    float s = 0.0f;
    for (int z = 0; z < S; ++z) s += part[z * total + e];
    C[e] = __float2bfloat16(s);
  }
}
