// Experiment · puzzle 20 with stream-K: slower than the solution on the H200
//
// What: solutions/20-mma-bf16-gemm.cu's kernel (same mainloop, same 128 x 128 tiles, two blocks an
// SM), with the work re-cut so that no block slot idles in the last, part-filled round. At 4096^3
// the grid's 1024 tiles fill 264 slots (132 SMs x 2) 3.88 times, and the H200 takes as long for
// 1056 tiles as for 1024 or 992 (see README.md): the part-filled round costs a whole one, ~3%.
//   - SKALL 0 (as written): the first 528 blocks (two rounds) take one whole tile each, as in the
//     solution. The next 264 (one round) cut the remaining 496 tiles' (tile, k-tile) pairs into 264
//     equal ranges, 120.2 pairs (1.88 tiles) each; the last 232 blocks return at once.
//   - SKALL 1: every block's share is cut along K: the first 792 blocks (3 rounds of the slots)
//     each take 1/792 of the 1024 x 64 (tile, k-tile) pairs, 82.7 pairs, touching two or three
//     tiles; the other 232 blocks return at once.
//   - A block whose range ends inside a tile leaves its sums in g_part[its range] (module memory)
//     and raises g_flag; the block whose range ends the tile waits for those flags (lower block
//     numbers: dispatched earlier, so resident), adds the parts, lowers the flags for the next
//     launch and stores C. A block does the tiles of its range from the last, so the part that
//     another block waits for is written first.
//   - When the tiles fill whole rounds (or less than one), or on the simulator (%nsmid is 1 there:
//     2 slots, so the cases of 3 tiles run the split), the grid runs as launched.
// Run:  warpbook check 20-mma-bf16-gemm bench/perfmodel/experiments/stream-k/stream-k.cu
// Measured beside the 128 x 128 GEMM's 306.7 us (H200; README.md): SKALL 0 316.7 and
// 318.1 us, SKALL 1 326.5 and 326.2 us.
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

// Stream-K for the last round (see the header): module-scope state, zero when the module loads and
// put back to zero by the launch that used it.
#define SK_MAX 1024 // most ranges a launch splits its tiles into
#ifndef SKALL
#define SKALL 0 // 0: split only the last round of tiles; 1: split them all (see the header)
#endif
__device__ unsigned g_flag[SK_MAX]; // range i's partial tile is in g_part[i]
__device__ float4 g_part[SK_MAX][BM * BN / 4];

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    mma_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
             float* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  // The plan for this block's current work item (thread 0 writes it; see below).
  struct Seg {
    int bm, bn, kt0, kt1; // the tile's corner and the k-tiles to sum
    int slot;             // >= 0: leave the sums in g_part[slot] for the item that ends the tile
    int jlo, nparts;      // else add g_part[jlo .. jlo + nparts) first, then store C
  };
  __shared__ Seg s_seg[3]; // a range is under two tiles long: it touches three at most
  __shared__ int s_nseg;
  __nv_bfloat16* smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const bool vec = (K % 8) == 0;
  constexpr int STAGE_BYTES = (A_TILE + B_TILE) * 2;
  const unsigned sbase = smem_addr(smem);
  const int ktiles = (K + BK - 1) / BK;

  constexpr int RSTEP = THREADS / CPR;
  constexpr int NA = BM / RSTEP, NB = BN / RSTEP;
  static_assert(RSTEP % (RPL * CPR) == 0, "the row step must keep each chunk's swizzle");
  const int cr = tid / CPR, cc = tid % CPR;
  const unsigned sa = sbase + 2 * swz(cr, cc);

  const int a_row = wm * WM + (lane % 16), a_ch = lane / 16;
  const int b_row = wn * WN + (lane / 16) * 8 + (lane % 8), b_ch = (lane / 8) % 2;
  unsigned a_addr[BK / 16], b_addr[BK / 16];
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) {
    a_addr[kk] = sbase + 2 * swz(a_row, kk * 2 + a_ch);
    b_addr[kk] = sbase + A_TILE * 2 + 2 * swz(b_row, kk * 2 + b_ch);
  }
  float acc[MI][NJ][4];

  // acc = the tile at (bm, bn) over k-tiles [kt0, kt1); the ring is idle again when it returns.
  auto mma_tile = [&](int bm, int bn, int kt0, int kt1) {
    const __nv_bfloat16* pa[NA];
    const __nv_bfloat16* pb[NB];
#pragma unroll
    for (int i = 0; i < NA; ++i)
      pa[i] = A + (long long)min(bm + cr + i * RSTEP, M - 1) * K + kt0 * BK + cc * 8;
#pragma unroll
    for (int i = 0; i < NB; ++i)
      pb[i] = B + (long long)min(bn + cr + i * RSTEP, N - 1) * K + kt0 * BK + cc * 8;
    int kbase = 0; // the pointers stand at k-tile kt0 + kbase
    auto load_tile = [&](int kt, int s) {
      const int k0 = (kt0 + kt) * BK;
      if (vec) {
        const bool in = k0 + cc * 8 < K;
        const int dk = (kt - kbase) * BK;
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
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;
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
    const int nk = kt1 - kt0;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < nk) load_tile(s, s);
      cp_async_commit();
    }
    int kt = 0;
    if (vec) {
      const int kfull = min(kt1, K / BK) - kt0; // tiles of the range wholly inside K
      constexpr int TRIP = 2 * STAGES;
      for (; kt + TRIP + STAGES - 2 < kfull; kt += TRIP) {
#pragma unroll
        for (int s = 0; s < TRIP; ++s) {
          cp_async_wait<STAGES - 2>();
          __syncthreads();
          const int w = (s + STAGES - 1) % STAGES;
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
      kbase = kt;
    }
    for (; kt < nk; ++kt) {
      cp_async_wait<STAGES - 2>();
      __syncthreads();
      const int next = kt + STAGES - 1;
      if (next < nk) load_tile(next, next % STAGES);
      cp_async_commit();
      mma_step((kt % STAGES) * STAGE_BYTES);
    }
    cp_async_wait<0>();
    __syncthreads(); // every warp is done with the ring: the next tile may overwrite it
  };

  const int g = lane / 4, t = lane % 4;
  auto store_c = [&](int bm, int bn) {
    if (bm + wm * WM >= M || bn + wn * WN >= N) return;
    const bool pairs = (N % 2) == 0;
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
  };

  // Which work this block does. Every tile is one block's when the tiles fill whole rounds of the
  // GPU's block slots (or less than one round): the grid as launched. Otherwise the blocks that
  // start first take work items from a queue until it is empty: the whole rounds' tiles one at a
  // time, then the last, part-filled round's tiles cut along K into one equal range per slot
  // ("stream-K"), so that every slot finishes at about the same time. Thread 0 writes the plan
  // for the item into shared memory (a segment: a tile, a range of k-tiles and what to do with the
  // sums), so that no bookkeeping stays in registers beside the accumulators.
  unsigned nsm;
  asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
  const int tiles = gridDim.x * gridDim.y, slots = MINB * (int)nsm;
  const int tail =
      tiles > slots && (SKALL ? tiles - tiles % slots : slots) <= SK_MAX ? tiles % slots : 0;
  // Non-persistent stream-K: blocks [0, dpb) take one whole tile each; blocks [dpb, dpb + nsk)
  // split the remaining tiles' (tile, k-tile) units into nsk equal ranges; the rest return.
  const int ntail = tail ? tiles - tail : 0; // blocks that work: whole rounds of the slots
  const int dpb = tail ? (SKALL ? 0 : ntail - slots) : tiles;
  const int bid = (int)(blockIdx.y * gridDim.x + blockIdx.x);
  if (tail && bid >= ntail) return;
  for (;;) {
    if (tid == 0) {
      int nseg = 0;
      if (bid < dpb) {
        s_seg[0] = Seg{bid / (int)gridDim.x * BM, bid % (int)gridDim.x * BN, 0, ktiles, -1, 0, 0};
        nseg = 1;
      } else {
        const int nsk = ntail - dpb;
        const long long units = (long long)(tiles - dpb) * ktiles;
        auto begin_of = [&](int i) { return (int)(units * i / nsk); };
        const int i = bid - dpb;
        const int u0 = begin_of(i), u1 = begin_of(i + 1);
        for (int tl = (u1 - 1) / ktiles; tl >= u0 / ktiles; --tl) {
          const int ts = tl * ktiles, te = ts + ktiles, tile = dpb + tl;
          int jlo = i;
          while (jlo > 0 && begin_of(jlo) > ts) --jlo;
          s_seg[nseg++] =
              Seg{tile / (int)gridDim.x * BM, tile % (int)gridDim.x * BN, max(u0, ts) - ts,
                  min(u1, te) - ts,           u1 < te ? i : -1,           jlo,
                  u1 < te ? 0 : i - jlo};
        }
      }
      s_nseg = nseg;
    }
    __syncthreads();
    const int nseg = s_nseg;
    if (nseg == 0) break;
    for (int sg = 0; sg < nseg; ++sg) {
      mma_tile(s_seg[sg].bm, s_seg[sg].bn, s_seg[sg].kt0, s_seg[sg].kt1); // ends at a barrier
      const int slot = s_seg[sg].slot;
      if (slot >= 0) { // the tile's end is a later item's: leave this part for it
        float4* mine = g_part[slot];
#pragma unroll
        for (int q = 0; q < MI * NJ; ++q)
          __stcg(mine + q * THREADS + tid,
                 make_float4(acc[q / NJ][q % NJ][0], acc[q / NJ][q % NJ][1], acc[q / NJ][q % NJ][2],
                             acc[q / NJ][q % NJ][3]));
        __threadfence();
        __syncthreads();
        if (tid == 0) atomicExch(&g_flag[slot], 1u);
        continue;
      }
      // This block ends the tile: add the parts of the earlier items that cover its start.
      for (int e = 0; e < s_seg[sg].nparts; ++e) {
        const int j = s_seg[sg].jlo + e;
        if (tid == 0) {
          while (atomicAdd(&g_flag[j], 0u) == 0u) __nanosleep(64);
          g_flag[j] = 0u; // read once a launch: ready for the next one
          __threadfence();
        }
        __syncthreads();
        const float4* theirs = g_part[j];
#pragma unroll
        for (int q = 0; q < MI * NJ; ++q) {
          const float4 p = __ldcg(theirs + q * THREADS + tid);
          acc[q / NJ][q % NJ][0] += p.x;
          acc[q / NJ][q % NJ][1] += p.y;
          acc[q / NJ][q % NJ][2] += p.z;
          acc[q / NJ][q % NJ][3] += p.w;
        }
      }
      store_c(s_seg[sg].bm, s_seg[sg].bn);
    }
    break;
  }
}
