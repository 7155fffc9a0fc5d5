// Perf-model kernel · 34 MoE grouped GEMM on mma.sync
//
// Count, scatter, a grouped mma.sync GEMM on 128 x 128 tiles gathering its A rows, and the combine;
// BK 32 x 4 (BK and STAGES give the other rings; BK 64 x 3 is its fastest). Solution 34 runs the
// GEMM on wgmma: 2082 against 3488-3501 us.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
// measured: 3746.53 us on NVIDIA H200
// @tune BM=128
// @tune BN=128
// @tune WARPS=4
// @tune SMEM=81920
// @tune CCOLS=2048
#include <cuda_bf16.h>


#define BK 32
#define STAGES 4
#define WM 64
#define WN 64
#define THREADS (WARPS * 32)
#define WARPS_N (BN / WN)
#define MI (WM / 16) // 16-row mma tiles per warp
#define NJ (WN / 8)  // 8-column mma tiles per warp
#define AS (BK + 8)  // bf16 per shared row: 80 bytes
#define TILE_A (BM * AS)
#define TILE_B (BN * AS)
#define RING_BYTES (STAGES * (TILE_A + TILE_B) * 2)
#if SMEM < RING_BYTES
#error "SMEM is too small for the ring (see the @tune lines)"
#endif
#if (BM / WM) * (BN / WN) != WARPS || (BM * BK / 8) % THREADS != 0 || (BN * BK / 8) % THREADS != 0
#error "the warp tiles must cover the block tile, and the copies split evenly over the threads"
#endif
#if CCOLS != 2048
#error "moe_combine gives each of its 256 threads 8 columns: CCOLS = 2048"
#endif

#define MOE_ARGS                                                                                  \
  const __nv_bfloat16 *X, const int *topk_ids, const float *topk_weights, const __nv_bfloat16 *W, \
      int *meta, int *rows, float *part, __nv_bfloat16 *Y, int T, int k, int E, int H, int N

// meta: offsets[E + 1] (rows before expert e), tiles[E + 1] (row tiles before e), cursor[E].
extern "C" __global__ void __launch_bounds__(1024) moe_count(MOE_ARGS) {
  __shared__ int cnt[1024];
  __shared__ int wsum[2][32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int e = tid; e < E; e += 1024) cnt[e] = 0;
  __syncthreads();
  const int total = T * k, n4 = total / 4;
  const int4* ids4 = reinterpret_cast<const int4*>(topk_ids); // 256-byte aligned
  for (int i = tid; i < n4; i += 4 * 1024) {
    int4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = i + u * 1024 < n4 ? ids4[i + u * 1024] : make_int4(-1, -1, -1, -1);
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (v[u].x >= 0) {
        atomicAdd(&cnt[v[u].x], 1);
        atomicAdd(&cnt[v[u].y], 1);
        atomicAdd(&cnt[v[u].z], 1);
        atomicAdd(&cnt[v[u].w], 1);
      }
  }
  for (int f = 4 * n4 + tid; f < total; f += 1024) atomicAdd(&cnt[topk_ids[f]], 1);
  __syncthreads();
  // Exclusive scans of the counts and of the row tiles, one expert per thread.
  const int c = tid < E ? cnt[tid] : 0, m = (c + BM - 1) / BM;
  int ic = c, im = m;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int a = __shfl_up_sync(0xffffffffu, ic, d), b = __shfl_up_sync(0xffffffffu, im, d);
    if (lane >= d) ic += a, im += b;
  }
  if (lane == 31) wsum[0][warp] = ic, wsum[1][warp] = im;
  __syncthreads();
  if (warp == 0) {
    const int a0 = wsum[0][lane], b0 = wsum[1][lane];
    int a = a0, b = b0;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const int x = __shfl_up_sync(0xffffffffu, a, d), y = __shfl_up_sync(0xffffffffu, b, d);
      if (lane >= d) a += x, b += y;
    }
    wsum[0][lane] = a - a0, wsum[1][lane] = b - b0; // the warps before this one
  }
  __syncthreads();
  ic += wsum[0][warp], im += wsum[1][warp];
  int *offsets = meta, *tiles = meta + E + 1, *cursor = meta + 2 * E + 2;
  if (tid < E) offsets[tid] = cursor[tid] = ic - c, tiles[tid] = im - m;
  if (tid == E - 1) offsets[E] = ic, tiles[E] = im;
}

extern "C" __global__ void moe_scatter(MOE_ARGS) {
  const int f = blockIdx.x * 256 + threadIdx.x;
  if (f >= T * k) return;
  rows[atomicAdd(&meta[2 * E + 2 + topk_ids[f]], 1)] = f;
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N_> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N_) : "memory");
}
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* p) {
  unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
__device__ __forceinline__ void mma_bf16(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// 8 bf16 of row `src` (nullptr: outside) from column c on, zeros past H; element by element.
__device__ __forceinline__ void load_chunk_slow(__nv_bfloat16* dst, const __nv_bfloat16* src, int c, int H) {
  __align__(16) __nv_bfloat16 v[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = (src && c + j < H) ? src[c + j] : __float2bfloat16(0.0f);
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2) moe_gemm(MOE_ARGS) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ int asg[BM]; // the assignment f of each tile row, -1 past the group
  __nv_bfloat16* smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  const int *offsets = meta, *tiles = meta + E + 1;
  const int y = blockIdx.y;
  if (y >= tiles[E]) return; // the grid allows for a partial tile per expert; most have fewer
  int lo = 0, hi = E - 1;    // the last expert whose tiles start at or before y: a nonempty one
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (tiles[mid] <= y) lo = mid;
    else hi = mid - 1;
  }
  const int e = lo, g0 = offsets[e], rows_left = offsets[e + 1] - g0 - (y - tiles[e]) * BM;
  const int m0 = g0 + (y - tiles[e]) * BM, n0 = blockIdx.x * BN;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  for (int r = tid; r < BM; r += THREADS) asg[r] = r < rows_left ? rows[m0 + r] : -1;
  __syncthreads();

  // Each thread copies the same chunks of every k slice: rows cr + i * RPP, columns cc .. cc + 7.
  // Their source rows are fixed for the whole loop: X[f / k] (gathered) and W[e][n0 + r].
  constexpr int RPP = THREADS / (BK / 8), CA = BM / RPP, CB = BN / RPP;
  const int cr = tid / (BK / 8), cc = (tid % (BK / 8)) * 8;
  const __nv_bfloat16* srcA[CA];
  const __nv_bfloat16* srcB[CB];
#pragma unroll
  for (int i = 0; i < CA; ++i) {
    const int f = asg[cr + i * RPP];
    srcA[i] = f >= 0 ? X + (long long)(f / k) * H : nullptr;
  }
#pragma unroll
  for (int i = 0; i < CB; ++i) {
    const int n = n0 + cr + i * RPP;
    srcB[i] = n < N ? W + ((long long)e * N + n) * H : nullptr;
  }
  const bool vec = (H % 8) == 0;
  auto load_tile = [&](int kt, int s) {
    __nv_bfloat16* As = smem + s * (TILE_A + TILE_B);
    __nv_bfloat16* Bs = As + TILE_A;
    const int c = kt * BK + cc;
    if (vec) {
#pragma unroll
      for (int i = 0; i < CA; ++i) {
        const bool in = srcA[i] && c < H;
        cp_async16(As + (cr + i * RPP) * AS + cc, in ? srcA[i] + c : X, in ? 16 : 0);
      }
#pragma unroll
      for (int i = 0; i < CB; ++i) {
        const bool in = srcB[i] && c < H;
        cp_async16(Bs + (cr + i * RPP) * AS + cc, in ? srcB[i] + c : W, in ? 16 : 0);
      }
    } else {
#pragma unroll
      for (int i = 0; i < CA; ++i) load_chunk_slow(As + (cr + i * RPP) * AS + cc, srcA[i], c, H);
#pragma unroll
      for (int i = 0; i < CB; ++i) load_chunk_slow(Bs + (cr + i * RPP) * AS + cc, srcB[i], c, H);
    }
  };

  float acc[MI][NJ][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;
  // A warp whose rows all lie past the group (or columns past N) skips the mma.
  const bool busy = wm * WM < rows_left && n0 + wn * WN < N;

  const int ktiles = (H + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>(); // this thread's copies of slice kt have landed
    __syncthreads();             // everyone's have; everyone is done with slice kt - 1
    {
      const int next = kt + STAGES - 1; // into the slot slice kt - 1 used
      if (next < ktiles) load_tile(next, next % STAGES);
      cp_async_commit();
    }
    if (!busy) continue;
    const __nv_bfloat16* As = smem + (kt % STAGES) * (TILE_A + TILE_B);
    const __nv_bfloat16* Bs = As + TILE_A;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a[MI][4], b[NJ][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) // matrices: rows 0-7 | 8-15 at k 0-7, then at k 8-15
        ldmatrix_x4(a[i], As + (wm * WM + i * 16 + lane % 16) * AS + kk + (lane / 16) * 8);
#pragma unroll
      for (int j = 0; j < NJ; j += 2) { // matrices: n 0-7 at k 0-7 | k 8-15, then n 8-15
        unsigned r[4];
        ldmatrix_x4(r, Bs + (wn * WN + j * 8 + lane % 8 + (lane / 16) * 8) * AS + kk + ((lane / 8) % 2) * 8);
        b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j) mma_bf16(acc[i][j], a[i], b[j][0], b[j][1]);
    }
  }
  cp_async_wait<0>();
  if (!busy) return;

  // Epilogue: lane holds rows lane / 4 and lane / 4 + 8 of each 16 x 8 tile, columns 2 (lane % 4)
  // and the next. Each row is assignment f's row of part.
  const bool pair = (N % 2) == 0;
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int f = asg[wm * WM + i * 16 + lane / 4 + h * 8];
      if (f < 0) continue;
      float* out = part + (long long)f * N;
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const int n = n0 + wn * WN + j * 8 + (lane % 4) * 2;
        if (pair && n < N) {
          *reinterpret_cast<float2*>(out + n) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (n < N) out[n] = acc[i][j][2 * h];
          if (n + 1 < N) out[n + 1] = acc[i][j][2 * h + 1];
        }
      }
    }
}

extern "C" __global__ void moe_combine(MOE_ARGS) {
  const int t = blockIdx.y, n = blockIdx.x * CCOLS + threadIdx.x * 8;
  if (n >= N) return;
  const float* p = part + (long long)t * k * N;
  const float* w = topk_weights + (long long)t * k;
  float y[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if ((N % 8) == 0) { // 8 columns wholly inside, 32-byte aligned rows
    for (int j0 = 0; j0 < k; j0 += 8) {
      float4 v[8][2];
      float wj[8];
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (j0 + j < k) {
          const float4* q = reinterpret_cast<const float4*>(p + (long long)(j0 + j) * N + n);
          v[j][0] = q[0], v[j][1] = q[1], wj[j] = w[j0 + j];
        }
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (j0 + j < k) {
          y[0] += wj[j] * v[j][0].x, y[1] += wj[j] * v[j][0].y, y[2] += wj[j] * v[j][0].z;
          y[3] += wj[j] * v[j][0].w, y[4] += wj[j] * v[j][1].x, y[5] += wj[j] * v[j][1].y;
          y[6] += wj[j] * v[j][1].z, y[7] += wj[j] * v[j][1].w;
        }
    }
    __align__(16) __nv_bfloat16 o[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) o[c] = __float2bfloat16(y[c]);
    *reinterpret_cast<uint4*>(Y + (long long)t * N + n) = *reinterpret_cast<const uint4*>(o);
  } else {
    for (int c = 0; c < 8 && n + c < N; ++c) {
      float s = 0.0f;
      for (int j = 0; j < k; ++j) s += w[j] * p[(long long)j * N + n + c];
      Y[(long long)t * N + n + c] = __float2bfloat16(s);
    }
  }
}
