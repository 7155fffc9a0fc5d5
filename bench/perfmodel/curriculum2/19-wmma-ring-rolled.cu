// Solution · 19 WMMA GEMM (f16 inputs, f32 accumulation, tensor cores through nvcuda::wmma)
//
// What: C[M x N] (f32) = A[M x K] (f16) x B[K x N] (f16), all row-major. A block of 128 threads
// (4 warps) computes a 128 x 128 tile of C; each warp a 64 x 64 tile: 4 x 4 WMMA accumulator
// fragments of 16 x 16 f32, 128 registers. __launch_bounds__(128, 2): two blocks share each SM.
// K is walked in steps of BK = 32.
//   - Per step the block stages A[128 x 32] and B[32 x 128] (16 KB of f16) in shared memory with
//     cp.async: 16-byte copies from global straight into shared memory, no registers on the way.
//   - The staging is a ring of 4 buffers: while the warps multiply tile k, the copies of tiles
//     k + 1 .. k + 3 are in flight. Each step commits one cp.async group; cp.async.wait_group 2
//     waits until this thread's copies of tile k have landed, then one __syncthreads() makes tile
//     k visible to every warp and says that everyone is done with the buffer the next copy
//     overwrites.
//   - Per 16-wide slice of k, a warp loads 4 A fragments and 4 B fragments from shared memory and
//     issues 16 mma_sync, each fragment reused 4 times from registers.
//   - Shared rows are padded by 8 halves (A: 40 halves = 80 B, B: 136 halves = 272 B), so the 8
//     rows of 16 bytes that one ldmatrix phase reads fall in 8 different groups of 4 banks.
//   - Edges: a chunk of 8 halves lies wholly inside or wholly outside A (or B) when K (or N) is a
//     multiple of 8; outside chunks are cp.async'ed with a source size of 0, which fills zeros.
//     When K or N is not a multiple of 8, rows are not 16-byte aligned and a chunk may straddle
//     the edge: those chunks are copied element by element, zeros past the edge. Zeros in the
//     padding make the extra k terms vanish and the extra rows and columns harmless.
//     A warp whose whole 64 x 64 tile lies past M or N (in edge blocks) skips its mma.
//   - C: once the ring is idle, each warp parks its 64 x 64 tile in shared memory and writes it
//     out row by row with 16-byte stores (whole 128-byte lines per instruction); edge elements
//     one by one.
// Run:  warpbook check 19-wmma-gemm solutions/19-wmma-gemm.cu
//
// Why: at 4096^3 the kernel must do 137 GFLOP; the least DRAM traffic is 134 MB, so everything is
// about feeding the tensor cores from shared memory. A 64 x 64 warp tile reads 8 fragments
// (4 KB) for 16 mma of 16 x 16 x 16 (131 kFLOP): 32 FLOP per shared byte, which an SM's 128 B/clk
// of shared memory sustains above the ~2450 FLOP/clk/SM mma.sync reaches on the H200. The first
// version of this solution used one block of 8 warps per SM (128 x 256 tiles, 3 stages): at every
// __syncthreads, while its ring filled and during its epilogue, the whole SM's tensor cores
// waited. Two blocks of 4 warps per SM keep the same 8 warps and the same warp tile, but one
// block's barrier or epilogue overlaps the other's mma; the price is 1.5x the L2 bytes per FLOP
// (64 against 85 FLOP per L2 byte), which the 60 MB L2 absorbs.
// Shared memory: 4 x (128 x 40 + 32 x 136) x 2 B = 75776 B per block, dynamic (@tune SMEM), two
// blocks per SM. Grid at 4096^3: 32 x 32 = 1024 blocks on 132 SMs x 2.
//
// Napkin maths: 137.4 GFLOP at 989 TFLOP/s (datasheet, dense f16) = 139 us on the H200; the
// mma.sync path that WMMA compiles to peaks near 646 TFLOP/s (213 us), wgmma near 970 (142 us,
// what `warpbook probe` measured; WMMA cannot use it). DRAM: 134 MB at 4.8 TB/s is 28 us.
// On the H200 (`warpbook check`, median, 2026-11-24), against the same file with other settings:
//   128 x 256 tile, 8 warps, 3 stages (the first solution)     584 us  235 TFLOP/s
//   128 x 128 tile, 4 warps, 2 blocks per SM, 4 stages           430 us  319 TFLOP/s
//   ... and C through shared memory with 16-byte stores (this)   424 us  324 TFLOP/s
//   ... with a K step of 64 instead                              445 us
//   ... with blocks grouped 8 rows at a time for the L2          480 us
//   a software pipeline of fragments in registers (255 regs)     477-480 us
// This file reaches half the mma.sync ceiling (324 of 646 TFLOP/s), which is the gold bar; the
// medal sits on that edge (the probe's tensor ceiling moves by a per cent or two between runs).
// `warpbook predict` says ~455 us and names the load/store unit: it charges each wmma.load 8
// shared-memory wavefronts where ptxas emits one ldmatrix.x4 (4).
// Measured on the H200 (`warpbook check`, 2026-11-24): 424.2 us, 324 TFLOP/s, 32.8% of the speed
// of light against the tensor ceiling `warpbook probe` measured (wgmma's).
// measured: 424.19 us on NVIDIA H200
// @tune BM=128
// @tune BN=128
// @tune WM=64
// @tune WN=64
// @tune SMEM=75776
#define BK 32
#define STAGES 4
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

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N_> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N_) : "memory");
}

// The 8 halves X[r][c .. c+7] (X: R rows of `cols` halves) to dst, zeros outside X. `vec`: cols
// is a multiple of 8, so the chunk is 16-byte aligned and wholly inside or wholly outside.
__device__ __forceinline__ void load_chunk(__half* dst, const __half* X, int R, int cols, int r,
                                           int c, bool vec) {
  if (vec) {
    bool in = r < R && c < cols;
    cp_async16(dst, in ? X + (long long)r * cols + c : X, in ? 16 : 0);
  } else {
    __align__(16) __half v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      v[j] = (r < R && c + j < cols) ? X[(long long)r * cols + c + j] : __float2half(0.0f);
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
  }
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

  // Each thread copies the same chunk positions of every tile: A rows a_r + i * A_RPP at column
  // a_c, B rows b_r + i * B_RPP at column b_c. Only k0 moves from tile to tile.
  constexpr int A_RPP = THREADS / (BK / 8), B_RPP = THREADS / (BN / 8);
  const int a_r = tid / (BK / 8), a_c = (tid % (BK / 8)) * 8;
  const int b_r = tid / (BN / 8), b_c = (tid % (BN / 8)) * 8;
  auto load_tile = [&](int kt, int s) {
    __half* As = smem + s * (A_TILE + B_TILE);
    __half* Bs = As + A_TILE;
    const int k0 = kt * BK;
    if (a_vec) {
#pragma unroll
      for (int i = 0; i < (BM * BK / 8) / THREADS; ++i) {
        const int r = a_r + i * A_RPP;
        const bool in = bm + r < M && k0 + a_c < K;
        cp_async16(As + r * AS + a_c, in ? A + (long long)(bm + r) * K + k0 + a_c : A, in ? 16 : 0);
      }
    } else {
#pragma unroll
      for (int i = 0; i < (BM * BK / 8) / THREADS; ++i)
        load_chunk(As + (a_r + i * A_RPP) * AS + a_c, A, M, K, bm + a_r + i * A_RPP, k0 + a_c,
                   false);
    }
    if (b_vec) {
#pragma unroll
      for (int i = 0; i < (BK * BN / 8) / THREADS; ++i) {
        const int r = b_r + i * B_RPP;
        const bool in = k0 + r < K && bn + b_c < N;
        cp_async16(Bs + r * BS + b_c, in ? B + (long long)(k0 + r) * N + bn + b_c : B, in ? 16 : 0);
      }
    } else {
#pragma unroll
      for (int i = 0; i < (BK * BN / 8) / THREADS; ++i)
        load_chunk(Bs + (b_r + i * B_RPP) * BS + b_c, B, K, N, k0 + b_r + i * B_RPP, bn + b_c,
                   false);
    }
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

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
      int next = kt + STAGES - 1; // into the slot tile kt - 1 used
      if (next < ktiles) load_tile(next, next % STAGES);
      cp_async_commit();
    }
    if (!warp_busy) continue;
    const __half* As = smem + (kt % STAGES) * (A_TILE + B_TILE);
    const __half* Bs = As + A_TILE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[FM];
#pragma unroll
      for (int i = 0; i < FM; ++i)
        wmma::load_matrix_sync(a[i], As + (wm * WM + i * 16) * AS + kk, AS);
#pragma unroll
      for (int j = 0; j < FN; ++j) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
        wmma::load_matrix_sync(b, Bs + kk * BS + wn * WN + j * 16, BS);
#pragma unroll
        for (int i = 0; i < FM; ++i) wmma::mma_sync(acc[i][j], a[i], b, acc[i][j]);
      }
    }
  }

  // Epilogue: the ring is idle (its last groups are empty) once every thread passes this barrier.
  cp_async_wait<0>();
  __syncthreads();
  // Each warp parks its WM x WN tile in shared memory (rows of WN + 4 floats), then writes it out
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
