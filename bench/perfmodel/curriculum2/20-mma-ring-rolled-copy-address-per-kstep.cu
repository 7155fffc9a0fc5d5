// Solution · 20 bf16 GEMM with mma.sync (inline PTX), ldmatrix and a cp.async ring
//
// What: C[M x N] (f32) = A[M x K] (bf16) x B^T, with B given as [N x K] (bf16), both row-major:
// C[r][c] = sum over k of A[r][k] * B[c][k], products exact, sums in f32. A block of 128 threads
// (4 warps) computes a 128 x 128 tile of C; each warp a 64 x 64 tile: 4 x 8 mma tiles of
// m16n8, 128 f32 accumulator registers per lane. __launch_bounds__(128, 2): two blocks per SM.
//   - K is walked in steps of BK = 64. Per step the block stages A[128 x 64] and B[128 x 64]
//     (32 KB of bf16) in shared memory with cp.async.cg: 16 bytes from global straight into
//     shared memory, no registers on the way, L1 skipped.
//   - A ring of STAGES = 3 buffers: while the warps multiply tile k, tiles k + 1 and k + 2 are
//     in flight. Each step commits one group; cp.async.wait_group STAGES - 2 says this thread's
//     copies of tile k have landed, and one __syncthreads() makes them everyone's and frees the
//     slot the next copy overwrites. One barrier per k-step.
//   - Per 16 of k a warp issues 4 ldmatrix.x4 for A (one 16 x 16 fragment each) and 4 for B
//     (two 8-column n-tiles each: B is [N, K], so its rows are the "col" operand as they lie, no
//     .trans), then 32 mma.sync.m16n8k16: every fragment register is used 4 or 8 times.
//   - Shared tiles are unpadded [rows][BK] with the 16-byte chunks of each row XOR-swizzled:
//     chunk c of row r lives at c ^ (r % 8) (BK = 64: a row is 8 chunks, one 128-byte line; with
//     BK = 32 it is c ^ ((r / 2) % 4), two rows to a line).
//     The 8 rows one ldmatrix phase reads, and the 8 chunks 8 consecutive threads cp.async, then
//     fall into the 8 different 16-byte bank groups: no conflicts, and no padding bytes.
//   - Edges: when K is a multiple of 8, a chunk of 8 bf16 lies wholly inside or wholly outside
//     A (or B); chunks outside are cp.async'ed with a source size of 0, which writes zeros. When
//     K is not, rows are not 16-byte aligned: those tiles are copied element by element through
//     registers, zeros past the edge. A warp whose whole tile lies past M or N skips its mma.
//   - C: straight from the accumulators, a float2 per lane (columns 2t, 2t + 1): each store
//     instruction writes 8 rows x 32 contiguous bytes, whole 32-byte sectors, nothing wasted.
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
// Shared memory: 3 x (128 + 128) x 64 x 2 B = 98304 B per block, two blocks per SM (192 of the
// 228 KB). BK = 64 rather than 32 halves the barriers per FLOP; 3 stages of 64 hold as much k in
// flight as 6 of 32. Grid at
// 4096^3: 32 x 32 = 1024 blocks over 264 resident (3.9 waves).
//
// Napkin maths (H200): 137.4 GFLOP at 989 TFLOP/s (datasheet, dense bf16) = 139 us; at the
// mma.sync ceiling `warpbook probe` measured (646 TFLOP/s) 213 us; the gold bar (0.45 x 989 =
// 445 TFLOP/s) is 309 us. DRAM: 134 MB at 4.8 TB/s is 28 us, hidden under the math.
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

  auto load_tile = [&](int kt, int s) {
    __nv_bfloat16* As = smem + s * (A_TILE + B_TILE);
    __nv_bfloat16* Bs = As + A_TILE;
    const int k0 = kt * BK;
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
