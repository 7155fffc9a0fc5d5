// variant: 33 on wgmma (m64n128k32 e4m3, 128B-swizzled K-major tiles by cp.async, promotion)
// @tune BM=128
// @tune BN=128
// @tune WM=32
// @tune WN=64
// @tune BK=128
// @tune STAGES=5
// @tune SMEM=164864
#include <cuda_bf16.h>
#include <cuda_fp8.h>

// Two warpgroups of 4 warps (WM and WN only size the block: 8 warps); warpgroup g owns rows
// 64g .. 64g + 63 of the block's 128 x 128 tile of C.
#define NT 256
#define CPR 8                  // 16-byte chunks per 128-byte tile row
#define A_TILE (128 * 128)
#define B_TILE (128 * 128)
#define STAGE_BYTES (A_TILE + B_TILE)
#if BM != 128 || BN != 128 || BK != 128 || (BM / WM) * (BN / WN) != 8
#error "this kernel is written for 128 x 128 x 128 tiles and 256 threads"
#endif
#if SMEM < STAGES * STAGE_BYTES + 1024
#error "SMEM: STAGES x 32 KB + 1 KB for the 1024-byte alignment"
#endif
#if STAGES < 3
#error "the ring needs three stages (two in flight while one is read)"
#endif

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
// Chunk c of row r of a 128-byte-row tile: the 128B swizzle (address bits 4-6 ^= bits 7-9 in a
// 1024-byte aligned tile), which is what wgmma's descriptor mode 1 reads.
__device__ __forceinline__ int swz(int r, int c) { return r * 128 + ((c ^ (r % 8)) << 4); }

// A K-major, 128B-swizzled operand: start >> 4, leading offset 16 B (unused), stride 1024 B
// (one 8-row group), swizzle mode 1.
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3ffffu) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

template <int SCALE_D>
__device__ __forceinline__ void wgmma128(float (&d)[64], unsigned long long da, unsigned long long db) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "l"(da), "l"(db), "n"(SCALE_D));
}

__device__ __forceinline__ void load_chunk_scalar(unsigned char* dst, const unsigned char* X,
                                                  int rows, int K, int r, int k) {
  __align__(16) unsigned char v[16];
#pragma unroll
  for (int j = 0; j < 16; ++j) v[j] = (r < rows && k + j < K) ? X[(long long)r * K + k + j] : 0;
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

extern "C" __global__ void __launch_bounds__(NT, 1)
    fp8_gemm(const __nv_fp8_e4m3* __restrict__ A8, const __nv_fp8_e4m3* __restrict__ B8,
             const float* __restrict__ a_scale, const float* __restrict__ b_scale,
             __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned raw = smem_addr(smem_raw);
  const unsigned sbase = (raw + 1023u) & ~1023u;
  unsigned char* smem = smem_raw + (sbase - raw);
  const unsigned char* A = reinterpret_cast<const unsigned char*>(A8);
  const unsigned char* B = reinterpret_cast<const unsigned char*>(B8);
  const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, wq = (tid / 32) % 4;
  const int bm = blockIdx.y * 128, bn = blockIdx.x * 128;
  const bool vec = (K % 16) == 0;

  // Copies: thread tid takes chunk tid % 8 of rows tid / 8 + 32 i (i < 4) of A's and B's tiles.
  const int cr = tid / CPR, cc = tid % CPR;
  const unsigned sa = sbase + swz(cr, cc); // + i * 32 * 128 for row cr + 32 i: same swizzle
  const unsigned char* pa[4];
  const unsigned char* pb[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    pa[i] = A + (long long)min(bm + cr + 32 * i, M - 1) * K + cc * 16;
    pb[i] = B + (long long)min(bn + cr + 32 * i, N - 1) * K + cc * 16;
  }
  auto load_tile = [&](int kt, int s) {
    const int k0 = kt * 128;
    if (vec) {
      const bool in = k0 + cc * 16 < K;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        cp_async16(sa + s * STAGE_BYTES + i * 32 * 128, in ? pa[i] + k0 : A, in ? 16 : 0);
        cp_async16(sa + s * STAGE_BYTES + A_TILE + i * 32 * 128, in ? pb[i] + k0 : B, in ? 16 : 0);
      }
      return;
    }
    unsigned char* As = smem + s * STAGE_BYTES;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = cr + 32 * i;
      load_chunk_scalar(As + swz(r, cc), A, M, K, bm + r, k0 + cc * 16);
      load_chunk_scalar(As + A_TILE + swz(r, cc), B, N, K, bn + r, k0 + cc * 16);
    }
  };

  float acc[64], t0[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.f;
  const unsigned long long da0 = desc(sbase + wg * 64 * 128), db0 = desc(sbase + A_TILE);

  const int ktiles = (K + 127) / 128;
#pragma unroll
  for (int s = 0; s < STAGES - 2; ++s) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();
  }
  // Step kt: tile kt is read from slot kt % STAGES by 4 wgmma, each into the fresh accumulator t,
  // waited for and added to acc in f32 at once: FP8 wgmma sums in fewer bits than f32, so no
  // partial sum longer than 32 products stays in the tensor cores. The two warpgroups take turns
  // on the tensor cores: warpgroup 1 adds its last product of a step at the start of the next,
  // so while one waits for its wgmma the other adds. Tile kt + STAGES - 2 is copied into the
  // slot of tile kt - 2, whose wgmma are done.
  auto mma = [&](unsigned long long da, unsigned long long db) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    wgmma128<0>(t0, da, db);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  };
  auto add = [&]() {
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += t0[i];
  };
#pragma unroll
  for (int i = 0; i < 64; ++i) t0[i] = 0.f;
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 3>();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // cp.async writes, wgmma reads
    __syncthreads();
    const int next = kt + STAGES - 2;
    if (next < ktiles) load_tile(next, next % STAGES);
    cp_async_commit();
    const unsigned long long off = (unsigned long long)((kt % STAGES) * STAGE_BYTES) >> 4;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      if (wg == 1) add(); // the previous product (zeros before the first)
      mma(da0 + off + 2 * q, db0 + off + 2 * q);
      if (wg == 0) add();
    }
  }
  if (wg == 1) add();
  cp_async_wait<0>();

  // Epilogue: lane (g, t) of warp wq holds rows 16 wq + g and + 8 of its warpgroup's 64, and
  // columns 8j + 2t, + 1 for j < 16.
  const int g = lane / 4, tq = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = bm + wg * 64 + wq * 16 + g + 8 * h;
    if (r >= M) continue;
    const float sar = a_scale[r];
    __nv_bfloat16* row = C + (long long)r * N;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int c = bn + 8 * j + 2 * tq;
      if (c >= N) continue;
      const float x = acc[4 * j + 2 * h] * sar * b_scale[c];
      if ((N % 2) == 0) {
        const float y = acc[4 * j + 2 * h + 1] * sar * b_scale[c + 1];
        *reinterpret_cast<__nv_bfloat162*>(row + c) = __floats2bfloat162_rn(x, y);
      } else {
        row[c] = __float2bfloat16(x);
        if (c + 1 < N) row[c + 1] = __float2bfloat16(acc[4 * j + 2 * h + 1] * sar * b_scale[c + 1]);
      }
    }
  }
}
