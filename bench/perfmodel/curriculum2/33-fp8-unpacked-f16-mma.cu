// Perf-model kernel · 33 FP8 GEMM, fragments unpacked to f16
//
// Puzzle 20's unrolled loop with each fragment unpacked once (cvt.rn.f16x2.e4m3x2) into f16
// m16n8k16, BK 64 x 3: solution 33's design.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions. Its times: `warpbook check` of this file at the perf size (bench/perfmodel/data/
// h200-curriculum2 and h100-curriculum2).
// measured: 284.45 us on NVIDIA H200
// measured: 282.37 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=128
// @tune WM=64
// @tune WN=64
// @tune BK=64
// @tune STAGES=3
// @tune SMEM=49152
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#define THREADS ((BM / WM) * (BN / WN) * 32)
#define WARPS_N (BN / WN)
#define MI (WM / 16)  // m16 tiles per warp
#define NJ (WN / 8)   // n8 tiles per warp
#define CPR (BK / 16) // 16-byte chunks per tile row (BK in bytes)
#define RPL (8 / CPR) // tile rows per 128-byte line of banks
#define A_TILE (BM * BK)
#define B_TILE (BN * BK)
#define MINB (THREADS >= 256 ? 1 : 2)
#if BM % WM != 0 || BN % WN != 0 || WM % 16 != 0 || WN % 16 != 0
#error "the warp tiles must split the block tile, in multiples of 16"
#endif
#if BK != 32 && BK != 64 && BK != 128
#error "BK must be 32, 64 or 128 bytes"
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
  return r * BK + ((ch ^ ((r / RPL) % CPR)) << 4);
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
__device__ __forceinline__ void mma_fp8(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two e4m3 codes to an f16 pair, exactly (every e4m3 value is an f16): the low 16 bits of v
// (unpack_lo) or the high 16 (unpack_hi). On sm_90 each is one F2FP.F16.E4M3.UNPACK_B.
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

// Chunk (r, k .. k+15) of X (rows x K bytes, K % 16 != 0) through registers, zeros outside.
__device__ __forceinline__ void load_chunk_scalar(unsigned char* dst, const unsigned char* X,
                                                  int rows, int K, int r, int k) {
  __align__(16) unsigned char v[16];
#pragma unroll
  for (int j = 0; j < 16; ++j) v[j] = (r < rows && k + j < K) ? X[(long long)r * K + k + j] : 0;
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    fp8_gemm(const __nv_fp8_e4m3* __restrict__ A8, const __nv_fp8_e4m3* __restrict__ B8,
             const float* __restrict__ a_scale, const float* __restrict__ b_scale,
             __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned char* A = reinterpret_cast<const unsigned char*>(A8);
  const unsigned char* B = reinterpret_cast<const unsigned char*>(B8);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool vec = (K % 16) == 0;
  const bool warp_busy = bm + wm * WM < M && bn + wn * WN < N;
  constexpr int STAGE_BYTES = A_TILE + B_TILE;
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
  const unsigned sa = sbase + swz(cr, cc); // + i * RSTEP * BK for chunk i
  const unsigned char* pa[NA];
  const unsigned char* pb[NB];
#pragma unroll
  for (int i = 0; i < NA; ++i) pa[i] = A + (long long)min(bm + cr + i * RSTEP, M - 1) * K + cc * 16;
#pragma unroll
  for (int i = 0; i < NB; ++i) pb[i] = B + (long long)min(bn + cr + i * RSTEP, N - 1) * K + cc * 16;

  // Tile kt (k0 = kt * BK) into stage s, any tile, K % 8 == 0 or not: zeros past K. The
  // pointers stand at k = kbase * BK (the steady-state loop below moves them).
  int kbase = 0;
  auto load_tile = [&](int kt, int s) {
    const int k0 = kt * BK;
    if (vec) {
      const bool in = k0 + cc * 16 < K;
      const int dk = k0 - kbase * BK;
#pragma unroll
      for (int i = 0; i < NA; ++i)
        cp_async16(sa + s * STAGE_BYTES + i * RSTEP * BK, in ? pa[i] + dk : A, in ? 16 : 0);
#pragma unroll
      for (int i = 0; i < NB; ++i)
        cp_async16(sa + s * STAGE_BYTES + A_TILE + i * RSTEP * BK, in ? pb[i] + dk : B,
                   in ? 16 : 0);
      return;
    }
    unsigned char* As = smem + s * STAGE_BYTES;
    unsigned char* Bs = As + A_TILE;
#pragma unroll
    for (int i = 0; i < BM * CPR / THREADS; ++i) {
      const int e = tid + i * THREADS, r = e / CPR, ch = e % CPR;
      load_chunk_scalar(As + swz(r, ch), A, M, K, bm + r, k0 + ch * 16);
    }
#pragma unroll
    for (int i = 0; i < BN * CPR / THREADS; ++i) {
      const int e = tid + i * THREADS, r = e / CPR, ch = e % CPR;
      load_chunk_scalar(Bs + swz(r, ch), B, N, K, bn + r, k0 + ch * 16);
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
  unsigned a_addr[BK / 32], b_addr[BK / 32];
#pragma unroll
  for (int kk = 0; kk < BK / 32; ++kk) {
    a_addr[kk] = sbase + swz(a_row, kk * 2 + a_ch);
    b_addr[kk] = sbase + A_TILE + swz(b_row, kk * 2 + b_ch);
  }
  // One BK-deep step of the warp's 64 x 64 tile from stage buffer `soff` (bytes).
  auto mma_step = [&](unsigned soff) {
#pragma unroll
    for (int kk = 0; kk < BK / 32; ++kk) {
      // The fp8 fragments of m16n8k32, as ldmatrix moves them, split into two m16n8k16 f16
      // fragments: bytes 0-1 of every register (k 4t, 4t + 1 and 16 + 4t, 16 + 4t + 1) make the
      // first, bytes 2-3 the second. A and B split alike, so the two mma cover the 32 k once.
      unsigned alo[MI][4], ahi[MI][4];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        unsigned a[4];
        ldmatrix_x4(a, a_addr[kk] + soff + i * 16 * BK);
#pragma unroll
        for (int q = 0; q < 4; ++q) alo[i][q] = unpack_lo(a[q]), ahi[i][q] = unpack_hi(a[q]);
      }
#pragma unroll
      for (int j = 0; j < NJ; j += 2) {
        unsigned d[4];
        ldmatrix_x4(d, b_addr[kk] + soff + j * 8 * BK);
        unsigned blo[4], bhi[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) blo[q] = unpack_lo(d[q]), bhi[q] = unpack_hi(d[q]);
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          mma_f16(acc[i][j], alo[i], blo[0], blo[1]);
          mma_f16(acc[i][j], ahi[i], bhi[0], bhi[1]);
          mma_f16(acc[i][j + 1], alo[i], blo[2], blo[3]);
          mma_f16(acc[i][j + 1], ahi[i], bhi[2], bhi[3]);
        }
      }
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
          cp_async16(sa + w * STAGE_BYTES + i * RSTEP * BK, pa[i] + koff, 16);
#pragma unroll
        for (int i = 0; i < NB; ++i)
          cp_async16(sa + w * STAGE_BYTES + A_TILE + i * RSTEP * BK, pb[i] + koff, 16);
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

  // Epilogue: scale in f32, round pairs to bf16, store 4 bytes per lane per row.
  if (!warp_busy) return;
  const int g = lane / 4, t = lane % 4;
  const int r0 = bm + wm * WM + g, c0 = bn + wn * WN + 2 * t;
  float sb[NJ][2];
#pragma unroll
  for (int j = 0; j < NJ; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int c = c0 + j * 8 + h;
      sb[j][h] = c < N ? b_scale[c] : 0.0f;
    }
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = r0 + i * 16 + 8 * half;
      if (r >= M) continue;
      const float sa = a_scale[r];
      __nv_bfloat16* row = C + (long long)r * N;
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const int c = c0 + j * 8;
        const float x = acc[i][j][2 * half] * sa * sb[j][0];
        const float y = acc[i][j][2 * half + 1] * sa * sb[j][1];
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
