// Solution · 19 WMMA GEMM (f16 inputs, f32 accumulation, tensor cores through nvcuda::wmma)
//
// What: C[M x N] (f32) = A[M x K] (f16) x B[K x N] (f16), all row-major. A block of 256 threads
// (8 warps) computes a 128 x 256 tile of C; each warp a 64 x 64 tile: 4 x 4 WMMA accumulator
// fragments of 16 x 16 f32, 128 registers. K is walked in steps of BK = 32.
//   - Per step the block stages A[128 x 32] and B[32 x 256] (24 KB of f16) in shared memory with
//     cp.async: 16-byte copies from global straight into shared memory, no registers on the way.
//     Thread t copies chunks t and t + 256 of A's 512 and t + 256 i of B's 1024 (8 halves each).
//   - The staging is a ring of 3 buffers (double buffering plus one): while the warps multiply
//     tile k, the copies of tiles k + 1 and k + 2 are in flight. Each step commits one cp.async
//     group; cp.async.wait_group 1 waits until only the newest group is still in flight, then one
//     __syncthreads() makes tile k visible to every warp and says that everyone is done with the
//     buffer the next copy overwrites.
//   - Per 16-wide slice of k, a warp loads 4 A fragments and 4 B fragments from shared memory and
//     issues 16 mma_sync, each fragment reused 4 times from registers.
//   - Shared rows are padded by 8 halves (A: 40 halves = 80 B, B: 264 halves = 528 B), so the 8
//     rows of 16 bytes that one ldmatrix phase reads fall in 8 different groups of 4 banks.
//   - Edges: a chunk of 8 halves lies wholly inside or wholly outside A (or B) when K (or N) is a
//     multiple of 8; outside chunks are cp.async'ed with a source size of 0, which fills zeros.
//     When K or N is not a multiple of 8, rows are not 16-byte aligned and a chunk may straddle
//     the edge: those chunks are copied element by element, zeros past the edge. Zeros in the
//     padding make the extra k terms vanish and the extra rows and columns harmless.
//     A warp whose whole 64 x 64 tile lies past M or N (in edge blocks) skips its mma.
//   - C: a fragment wholly inside C (and N a multiple of 4) is stored straight to global memory by
//     store_matrix_sync; an edge fragment goes through 1 KB of shared memory per warp and only
//     its elements inside C are written.
// Run:  warpbook check 19-wmma-gemm solutions/19-wmma-gemm.cu
//
// Why: at 4096^3 the kernel must do 137 GFLOP; the least DRAM traffic is 134 MB, so everything is
// about feeding the tensor cores from shared memory. A 64 x 64 warp tile reads 8 fragments
// (4 KB) for 16 mma of 16 x 16 x 16 (131 kFLOP): 32 FLOP per shared byte. An SM's shared memory
// gives 128 B/clk, 4096 FLOP/clk at that ratio, above the ~2450 FLOP/clk/SM that mma.sync
// reaches on the H200 (646 TFLOP/s / 132 SMs / 1.98 GHz): the shared-memory reads keep up. A
// 64 x 32 warp tile (6 fragments for 8 mma, 21 FLOP/B) would sit near the limit. The block tile
// 128 x 256 reads 8 + 16 KB from L2 per 32 of k for 2 MFLOP: 85 FLOP per L2 byte. 16 accumulator
// fragments take 128 registers, so one block of 256 threads fills an SM's register file
// (__launch_bounds__(256, 1)); 8 warps with 16 independent mma each hide the tensor-core latency,
// and the three-stage ring hides the global latency (under a microsecond) behind two steps of
// mma (0.43 us each at the mma.sync ceiling).
// Shared memory: 3 x (128 x 40 + 32 x 264) x 2 B = 81408 B, dynamic (// @tune SMEM=81408).
// Grid at 4096^3: 16 x 32 = 512 blocks on 132 SMs, 3.9 waves.
//
// Napkin maths: 137.4 GFLOP at 989 TFLOP/s (datasheet, dense f16) = 139 us on the H200; the
// mma.sync path that WMMA compiles to peaks near 646 TFLOP/s (213 us). Gold (33% of the datasheet,
// half of the mma.sync ceiling) is 421 us, 326 TFLOP/s. DRAM: 134 MB at 4.8 TB/s is 28 us.
// Predicted by `warpbook predict` for the H200 (not measured): 626 us, 220 TFLOP/s, 22% of speed
// of light. The model charges each wmma.load from shared memory 8 wavefronts (ptxas makes it one
// ldmatrix.x4, 4 wavefronts) and so finds the load/store unit the limit.
// Measured on the H200 (`warpbook check`, 2026-11-24): 584.5 us, 235 TFLOP/s, 24.1% of
// the speed of light against the ceilings `warpbook probe` measured; silver.
// measured: 584.45 us on NVIDIA H200
// @tune BM=128
// @tune BN=256
// @tune WM=64
// @tune WN=64
// @tune SMEM=81408
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

#if BM != 128 || BN != 256 || WM != 64 || WN != 64
#error "this solution is written for BM = 128, BN = 256, WM = WN = 64"
#endif

#define BK 32
#define STAGES 3
#define AS (BK + 8)                 // halves per row of the A tile (80 B)
#define BS (BN + 8)                 // halves per row of the B tile (528 B)
#define A_TILE (BM * AS)            // halves
#define B_TILE (BK * BS)
#define THREADS ((BM / WM) * (BN / WN) * 32) // 256
#define FM (WM / 16)                // fragments per warp along M
#define FN (WN / 16)                // and along N

#if SMEM < STAGES * (A_TILE + B_TILE) * 2
#error "SMEM must hold STAGES * (A_TILE + B_TILE) halves: // @tune SMEM=81408"
#endif

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
// The "memory" clobbers keep the compiler from moving shared-memory accesses across them.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N_>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N_) : "memory"); }

// Copies the 8 halves at X[r][c .. c+7] (X has R rows of `cols` halves) to dst in shared memory,
// zeros where they lie outside X. `vec`: cols is a multiple of 8, so rows are 16-byte aligned and
// the chunk is wholly inside or wholly outside.
__device__ __forceinline__ void load_chunk(__half* dst, const __half* X, int R, int cols, int r, int c,
                                           bool vec) {
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

extern "C" __global__ void __launch_bounds__(THREADS, 1)
wmma_gemm(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __half* smem = reinterpret_cast<__half*>(smem_raw);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / (BN / WN), wn = warp % (BN / WN); // 2 x 4 warps
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool a_vec = (K % 8) == 0, b_vec = (N % 8) == 0;
  // A warp whose 64 x 64 tile lies wholly outside C (edge blocks only) skips its mma.
  const bool warp_busy = bm + wm * WM < M && bn + wn * WN < N;

  // Stage tile kt (k from kt * BK) into ring slot s: A's 512 chunks, then B's 1024.
  auto load_tile = [&](int kt, int s) {
    __half* As = smem + s * (A_TILE + B_TILE);
    __half* Bs = As + A_TILE;
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < (BM * BK / 8) / THREADS; ++i) {
      int ch = tid + i * THREADS, r = ch / (BK / 8), c = (ch % (BK / 8)) * 8;
      load_chunk(As + r * AS + c, A, M, K, bm + r, k0 + c, a_vec);
    }
#pragma unroll
    for (int i = 0; i < (BK * BN / 8) / THREADS; ++i) {
      int ch = tid + i * THREADS, r = ch / (BN / 8), c = (ch % (BN / 8)) * 8;
      load_chunk(Bs + r * BS + c, B, K, N, k0 + r, bn + c, b_vec);
    }
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const int ktiles = (K + BK - 1) / BK;
  // Prologue: tiles 0 .. STAGES-2 in flight, one group each (empty groups past the end keep the
  // count of groups per step the same, so wait_group's constant stays right).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();
  }

  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>(); // this thread's copies of tile kt have landed
    __syncthreads();             // everyone's have; and everyone is done with tile kt - 1
    {
      int next = kt + STAGES - 1; // into the slot tile kt - 1 used
      if (next < ktiles) load_tile(next, next % STAGES);
      cp_async_commit();
    }
    if (!warp_busy) continue; // copies and barriers still count on this warp
    const __half* As = smem + (kt % STAGES) * (A_TILE + B_TILE);
    const __half* Bs = As + A_TILE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[FM];
#pragma unroll
      for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(a[i], As + (wm * WM + i * 16) * AS + kk, AS);
#pragma unroll
      for (int j = 0; j < FN; ++j) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
        wmma::load_matrix_sync(b, Bs + kk * BS + wn * WN + j * 16, BS);
#pragma unroll
        for (int i = 0; i < FM; ++i) wmma::mma_sync(acc[i][j], a[i], b, acc[i][j]);
      }
    }
  }

  // Epilogue. The ring is idle (its last groups are empty) once every thread passes this barrier,
  // so its first 8 KB serve as 1 KB of scratch per warp for the edge fragments.
  cp_async_wait<0>();
  __syncthreads();
  float* scratch = reinterpret_cast<float*>(smem_raw) + warp * 256;
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) {
      const int r0 = bm + wm * WM + i * 16, c0 = bn + wn * WN + j * 16;
      if (r0 >= M || c0 >= N) continue; // warp-uniform: the whole fragment is outside C
      if (r0 + 16 <= M && c0 + 16 <= N && (N % 4) == 0) {
        wmma::store_matrix_sync(C + (long long)r0 * N + c0, acc[i][j], N, wmma::mem_row_major);
      } else {
        wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
        __syncwarp();
        for (int e = lane; e < 256; e += 32) {
          int r = r0 + e / 16, c = c0 + e % 16;
          if (r < M && c < N) C[(long long)r * N + c] = scratch[e];
        }
        __syncwarp();
      }
    }
}
