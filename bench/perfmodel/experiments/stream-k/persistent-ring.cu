// Experiment · puzzle 20 as a persistent kernel whose cp.async ring runs on from tile to tile
//
// What: solution 20's mainloop and 128 x 128 tiles (4 warps of 64 x 64, BK 64, 2 stages), but the
// launch is shaped by the @tune lines below to 16 x 16 = 256 blocks of 128 threads with 64 KB of
// shared memory: at 4096^3 every block is resident at once (264 slots), none waits and none exits
// idle. Block b takes tiles b, b + 256, b + 512, b + 768. When K is a whole number of trips
// (K % 256 == 0) the last trip of a tile issues the next tile's first copies, so they are in
// flight while this tile's C is stored; otherwise the ring starts again for each tile.
// Run:  warpbook check 20-mma-bf16-gemm bench/perfmodel/experiments/stream-k/persistent-ring.cu
//
// Measured (`warpbook check`, NVIDIA H100 80GB HBM3, run 2, side by side):
// 321.58 us, against solution 20's 312.21 and 310.94 in the same run. README.md says what this
// and the 1024-block form (run 1) tell.
// @tune BM=256
// @tune BN=256
// @tune WM=128
// @tune WN=128
// @tune BK=32
// @tune STAGES=2
#include <cuda_bf16.h>

// The tunables shape the launch: 16 x 16 = 256 blocks of 128 threads with 64 KB of shared memory
// at 4096^3, all resident at once on 132 SMs. The kernel works in its own 128 x 128 tiles.
#undef BM
#undef BN
#undef WM
#undef WN
#undef BK
#undef STAGES
#define BM 128
#define BN 128
#define WM 64
#define WN 64
#define BK 64
#define STAGES 2

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

// Block b of the P in the grid takes tiles b, b + P, b + 2P, ... When every tile's k-steps are
// whole trips the ring runs on from one tile into the next, so the next tile's first copies are in
// flight while this tile's C is stored; otherwise it starts again for each tile.
extern "C" __global__ void __launch_bounds__(THREADS, MINB)
    mma_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
             float* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16* smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const bool vec = (K % 8) == 0;
  constexpr int STAGE_BYTES = (A_TILE + B_TILE) * 2;
  constexpr int TRIP = 2 * STAGES; // k-steps per trip: the pointers move once per TRIP
  const unsigned sbase = smem_addr(smem);
  const int tiles_n = (N + BN - 1) / BN, ntiles = tiles_n * ((M + BM - 1) / BM);
  const bool persist = vec && K % (TRIP * BK) == 0;
  const int P = gridDim.x * gridDim.y;
  int tile = blockIdx.y * gridDim.x + blockIdx.x;
  if (tile >= ntiles) return;

  constexpr int RSTEP = THREADS / CPR;
  constexpr int NA = BM / RSTEP, NB = BN / RSTEP;
  static_assert(RSTEP % (RPL * CPR) == 0, "the row step must keep each chunk's swizzle");
  const int cr = tid / CPR, cc = tid % CPR;
  const unsigned sa = sbase + 2 * swz(cr, cc); // + 2 * i * RSTEP * BK for chunk i
  const __nv_bfloat16* pa[NA];
  const __nv_bfloat16* pb[NB];
  int bm, bn; // the tile the copies are for
  auto point = [&](int t) {
    bm = (t / tiles_n) * BM, bn = (t % tiles_n) * BN;
#pragma unroll
    for (int i = 0; i < NA; ++i)
      pa[i] = A + (long long)min(bm + cr + i * RSTEP, M - 1) * K + cc * 8;
#pragma unroll
    for (int i = 0; i < NB; ++i)
      pb[i] = B + (long long)min(bn + cr + i * RSTEP, N - 1) * K + cc * 8;
  };
  point(tile);

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
  auto copy_step = [&](int w, int koff) {
#pragma unroll
    for (int i = 0; i < NA; ++i)
      cp_async16(sa + w * STAGE_BYTES + 2 * i * RSTEP * BK, pa[i] + koff, 16);
#pragma unroll
    for (int i = 0; i < NB; ++i)
      cp_async16(sa + w * STAGE_BYTES + A_TILE * 2 + 2 * i * RSTEP * BK, pb[i] + koff, 16);
  };

  float acc[MI][NJ][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  const int a_row = wm * WM + (lane % 16), a_ch = lane / 16;
  const int b_row = wn * WN + (lane / 16) * 8 + (lane % 8), b_ch = (lane / 8) % 2;
  unsigned a_addr[BK / 16], b_addr[BK / 16];
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) {
    a_addr[kk] = sbase + 2 * swz(a_row, kk * 2 + a_ch);
    b_addr[kk] = sbase + A_TILE * 2 + 2 * swz(b_row, kk * 2 + b_ch);
  }
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
  auto prologue = [&]() {
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < ktiles) load_tile(s, s);
      cp_async_commit();
    }
  };
  prologue();

  for (;;) {
    const int cbm = bm, cbn = bn; // the tile the accumulators are for
    const int next = tile + P;
    const bool more = next < ntiles;
    int kt = 0;
    if (vec) {
      const int kfull = K / BK;
      // Whole trips whose copies all fall inside this tile (when persistent, all but the last).
      for (; kt + TRIP + STAGES - 2 < kfull && (!persist || kt + TRIP < kfull); kt += TRIP) {
#pragma unroll
        for (int s = 0; s < TRIP; ++s) {
          cp_async_wait<STAGES - 2>();
          __syncthreads();
          copy_step((s + STAGES - 1) % STAGES, (s + STAGES - 1) * BK);
          cp_async_commit();
          mma_step((s % STAGES) * STAGE_BYTES);
        }
#pragma unroll
        for (int i = 0; i < NA; ++i) pa[i] += TRIP * BK;
#pragma unroll
        for (int i = 0; i < NB; ++i) pb[i] += TRIP * BK;
      }
      if (persist) {
        // The last trip: its last STAGES - 1 copies are the next tile's first k-steps.
#pragma unroll
        for (int s = 0; s < TRIP; ++s) {
          cp_async_wait<STAGES - 2>();
          __syncthreads();
          if (s + STAGES - 1 < TRIP) {
            copy_step((s + STAGES - 1) % STAGES, (s + STAGES - 1) * BK);
          } else if (more) {
            if (s + STAGES - 1 == TRIP) point(next); // the pointers now stand at its k = 0
            copy_step((s + STAGES - 1) % STAGES, (s + STAGES - 1 - TRIP) * BK);
          }
          cp_async_commit();
          mma_step((s % STAGES) * STAGE_BYTES);
        }
        kt = kfull;
      }
      kbase = kt;
    }
    for (; kt < ktiles; ++kt) {
      cp_async_wait<STAGES - 2>();
      __syncthreads();
      const int nk = kt + STAGES - 1;
      if (nk < ktiles) load_tile(nk, nk % STAGES);
      cp_async_commit();
      mma_step((kt % STAGES) * STAGE_BYTES);
    }

    // Epilogue: lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each m16n8 tile.
    if (cbm + wm * WM < M && cbn + wn * WN < N) {
      const int g = lane / 4, t = lane % 4;
      const bool pairs = (N % 2) == 0;
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
          const int c = cbn + wn * WN + j * 8 + 2 * t;
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = cbm + wm * WM + i * 16 + g + 8 * h;
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
    if (!more) break;
    tile = next;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;
    if (!persist) { // the ring starts again for the next tile
      cp_async_wait<0>();
      __syncthreads();
      point(tile);
      kbase = 0;
      prologue();
    }
  }
  cp_async_wait<0>(); // the last groups are empty; nothing may be in flight at exit
}
