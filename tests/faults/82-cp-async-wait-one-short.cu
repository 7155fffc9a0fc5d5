// fault: waits for one cp.async group too few: the warps multiply a tile whose copies may still be in flight
// puzzle: 19-wmma-gemm
// sim: wrong_answer | are wrong
// gpu: passed,wrong_answer |
// note: The simulator lands cp.async copies only at the wait that covers them, so the tile is still NaN-filled shared memory when it is read. On a GPU the copies often land in time: a race that passes or fails by timing.
// (from solutions/19-wmma-gemm.cu, with wait_group STAGES - 1 instead of STAGES - 2)
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
    cp_async_wait<STAGES - 1>(); /*HERE*/ // wrong: tile kt's group may still be in flight
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
