// Perf-model kernel · 20 bf16 GEMM, rolled loop
//
// mma.sync bf16 on 128 x 128 tiles, a cp.async ring of BK 32 x 4 stages walked by a rolled loop
// (the stage a run-time value in every ldmatrix and copy address), copy addresses worked out once.
// 343 us on the H200 against the unrolled loop's 307.
// COPY_ADDRESS_PER_KSTEP 1 (-D, a row of the manifest, at BK 64 x 3) works each chunk's copy
// address (row, chunk, swizzle, bounds, a 64-bit multiply) out every k-step instead: 465 us on the
// H200, the tensor cores waiting on instruction issue. A kernel of
// bench/perfmodel/curriculum2.toml, the set the performance model is checked against: the rows that
// name this file say what each timing measured, and their tune/define values make the versions.
// measured: 343.12 us on NVIDIA H200
// @tune BM=128
// @tune BN=128
// @tune WM=64
// @tune WN=64
// @tune BK=32
// @tune STAGES=4
#define COPY_ADDRESS_PER_KSTEP 0
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

// Chunk (r, k .. k+7) of X (`rows` x K, row-major) into shared memory at dst, zeros outside X.
// vec: K % 8 == 0, so the chunk is 16-byte aligned and wholly inside or wholly outside.
__device__ __forceinline__ void load_chunk(__nv_bfloat16* dst, const __nv_bfloat16* X, int rows,
                                           int K, int r, int k, bool vec) {
  if (vec) {
    const bool in = r < rows && k < K;
    cp_async16(smem_addr(dst), in ? X + (long long)r * K + k : X, in ? 16 : 0);
  } else {
    __align__(16) unsigned short v[8];
    const unsigned short* Xs = reinterpret_cast<const unsigned short*>(X);
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = (r < rows && k + j < K) ? Xs[(long long)r * K + k + j] : 0;
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
  }
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

#if COPY_ADDRESS_PER_KSTEP
#else
  // Copies: thread tid always takes chunk tid % CPR of rows tid / CPR + i * (THREADS / CPR), and
  // the swizzle of those rows is the same (the row step is a multiple of RPL * CPR), so each
  // chunk's shared offset is a fixed stride apart and its global address moves by BK a step:
  // the pointers are computed once, not per chunk per step.
  constexpr int RSTEP = THREADS / CPR;
  constexpr int NA = BM / RSTEP, NB = BN / RSTEP;
  const int cr = tid / CPR, cc = tid % CPR;
  const int soff = swz(cr, cc); // + i * RSTEP * BK for chunk i
  const __nv_bfloat16* pa = A + (long long)min(bm + cr, M - 1) * K + cc * 8;
  const __nv_bfloat16* pb = B + (long long)min(bn + cr, N - 1) * K + cc * 8;
  const long long rstride = (long long)RSTEP * K;
  unsigned amask = 0, bmask = 0; // chunk i's row is inside A (B)
#pragma unroll
  for (int i = 0; i < NA; ++i) amask |= (bm + cr + i * RSTEP < M ? 1u : 0u) << i;
#pragma unroll
  for (int i = 0; i < NB; ++i) bmask |= (bn + cr + i * RSTEP < N ? 1u : 0u) << i;
  static_assert(RSTEP % (RPL * CPR) == 0, "the row step must keep each chunk's swizzle");

#endif
  auto load_tile = [&](int kt, int s) {
    __nv_bfloat16* As = smem + s * (A_TILE + B_TILE);
    __nv_bfloat16* Bs = As + A_TILE;
    const int k0 = kt * BK;
#if COPY_ADDRESS_PER_KSTEP
#else
    if (vec) {
      const bool kin = k0 + cc * 8 < K;
      const unsigned sa = smem_addr(As + soff), sb = smem_addr(Bs + soff);
#pragma unroll
      for (int i = 0; i < NA; ++i) {
        const bool in = kin && ((amask >> i) & 1);
        cp_async16(sa + 2 * i * RSTEP * BK, in ? pa + i * rstride + k0 : A, in ? 16 : 0);
      }
#pragma unroll
      for (int i = 0; i < NB; ++i) {
        const bool in = kin && ((bmask >> i) & 1);
        cp_async16(sb + 2 * i * RSTEP * BK, in ? pb + i * rstride + k0 : B, in ? 16 : 0);
      }
      return;
    }
#endif
#pragma unroll
    for (int i = 0; i < BM * CPR / THREADS; ++i) {
      const int e = tid + i * THREADS, r = e / CPR, ch = e % CPR;
      load_chunk(As + swz(r, ch), A, M, K, bm + r, k0 + ch * 8, vec);
    }
#pragma unroll
    for (int i = 0; i < BN * CPR / THREADS; ++i) {
      const int e = tid + i * THREADS, r = e / CPR, ch = e % CPR;
      load_chunk(Bs + swz(r, ch), B, N, K, bn + r, k0 + ch * 8, vec);
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
  // at k 0-7 | k 8-15, then n-tile j + 1: b0, b1 of each).
  const int a_row = wm * WM + (lane % 16), a_ch = lane / 16;
  const int b_row = wn * WN + (lane / 16) * 8 + (lane % 8), b_ch = (lane / 8) % 2;

  const int ktiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();
  }

  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>(); // this thread's copies of tile kt have landed
    __syncthreads();             // everyone's have; everyone is done with tile kt - 1
    {
      const int next = kt + STAGES - 1; // into the slot tile kt - 1 used
      if (next < ktiles) load_tile(next, next % STAGES);
      cp_async_commit(); // even when empty: the group count stays right
    }
    if (!warp_busy) continue;
    const unsigned As = smem_addr(smem + (kt % STAGES) * (A_TILE + B_TILE));
    const unsigned Bs = As + A_TILE * 2;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      unsigned a[MI][4], b[NJ][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) ldmatrix_x4(a[i], As + 2 * swz(a_row + i * 16, kk * 2 + a_ch));
#pragma unroll
      for (int j = 0; j < NJ; j += 2) {
        unsigned d[4];
        ldmatrix_x4(d, Bs + 2 * swz(b_row + j * 8, kk * 2 + b_ch));
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
          *reinterpret_cast<float2*>(out) = make_float2(v0, v1);
        } else {
          if (c < N) out[0] = v0;
          if (c + 1 < N) out[1] = v1;
        }
      }
    }
}
