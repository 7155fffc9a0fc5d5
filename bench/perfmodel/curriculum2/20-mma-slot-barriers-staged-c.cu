// Perf-model kernel · 20 bf16 GEMM, ring synchronised per slot
//
// Solution 20's design: 256 x 128 tiles of 8 warps, one block an SM, a cp.async ring synchronised
// per slot with mbarriers (every thread arrives on full through cp.async.mbarrier.arrive.noinc and
// on empty after its reads), C staged through shared memory.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
// measured: 295.4 us on NVIDIA H200 (beside the versions in the manifest)
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

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// One arrival on bar once every cp.async this thread has issued so far has landed.
__device__ __forceinline__ void mbar_arrive_copies(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned ok;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                 "selp.u32 %0, 1, 0, p; }"
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
  constexpr int WARPS = THREADS / 32, CCH = WN / 4; // 16-byte chunks of a warp tile row
  // Chunk c of row r sits at c ^ 2 (r % CSW): the 4 rows of a half-warp's float2 stores fall in
  // different bank groups, and the 8 chunks a quarter-warp's float4 reads are a permutation.
  constexpr int CSW = CCH < 8 ? CCH / 2 : 4;
  constexpr bool STAGED = WARPS * 16 * WN * 4 <= STAGES * (A_TILE + B_TILE) * 2;
  if constexpr (STAGED) {
    float* cs = reinterpret_cast<float*>(smem_raw) + warp * 16 * WN;
    constexpr int RPI = 32 / CCH < 1 ? 1 : 32 / CCH; // rows per store instruction
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
        if (r < 16 && gr < M) {
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
