// Perf-model kernel · 19 WMMA GEMM, rolled loop
//
// WMMA 16x16x16 on 128 x 128 tiles, two 4-warp blocks an SM, a cp.async ring of BK 32 x 4 stages
// walked by a rolled loop: the ring slot and every copy's address and bounds test worked out at run
// time. Solution 19 runs the same tiles with the steady state unrolled over the ring
// (19-wmma-ring-unrolled.cu): 397 against 424 us on the H200.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
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
