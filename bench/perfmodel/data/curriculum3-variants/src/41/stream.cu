// Solution · 41 fused RMSNorm + FP8 quantisation with 1x128 block scales
//
// What: blocks of 128 threads, one token each (TOK = 1). Each thread loads
// its part of its token's row as 16-byte vectors of 8 bf16 (the vectors of thread j are j,
// j + 128, ...; up to 8192 channels in registers), adds their squares, and one reduction per
// token (xor shuffles + a shared exchange) gives rstd. Then, from the same registers,
// y = x * rstd * gamma: the 16 threads of a half-warp hold the 16 vectors of one 128-channel
// block, so the block's amax is 4 xor shuffles, with no shared memory and no barrier. Each thread
// writes its 8 codes as one 8-byte store (two cvt.rn.satfinite.e4m3x2.f32 per 4 values on sm_89
// and later); the block's scales are gathered in shared memory and written after one barrier
// (with TOK > 1, the tokens' scales of each channel block side by side). Rows wider than 8192
// channels read x a second time (from the L2) instead.
// Run:  warpbook check 41-rmsnorm-fp8-block-quant solutions/41-rmsnorm-fp8-block-quant.cu
//       warpbook predict 41-rmsnorm-fp8-block-quant solutions/41-rmsnorm-fp8-block-quant.cu
//
// Why: the least traffic is 3 bytes per element (read 2 of x, write 1 of q) plus 4 per 128 of
// scales, and this kernel moves that: the row waits in registers while the block agrees on its
// sum of squares, so x is read once, and y never leaves registers. gamma (14 KiB at H = 7168) is
// read by every row and stays in the L2. A half-warp's 8-byte stores cover 128 contiguous bytes
// of q: whole lines.
// The scales are [H / 128, T]: one token's 56 lie 4 T bytes apart. Stored one by one (TOK = 1)
// each is a lone 4-byte write into a 32-byte sector, and the model charges DRAM for more than
// the 4 bytes (412 MB in all instead of 356; predicted 129 us on the H200); two tokens a block
// write 8-byte pairs (383 MB, predicted 121 us). The H100 ranks them the other way (below): the
// L2 is write-back, so neighbouring blocks' scales meet in the same sector before it goes to
// DRAM, and the pairing only adds a gather and a barrier. TOK = 8 writes whole sectors but needs
// 1024-thread blocks, one per SM at 64 registers, each waiting for its slowest token.
// Instead of dividing every y by s (an IEEE division is a reciprocal, a few FMAs and a test, per
// element), each 128-channel block takes 1 / s once and multiplies: that can land a code one
// e4m3 step from the quotient's where y / s sits next to a rounding midpoint, which the puzzle's
// tolerance admits for the same reason it admits any order of the sum.
// What the time goes to (predicted, H200): DRAM 84%, instruction issue about 60%: each row's
// life is load, wait, reduce, then compute and store, and an SM needs several rows at different
// stages to keep DRAM busy. At 64 registers 32 warps fit an SM; WARPS = 48 (__launch_bounds__)
// squeezes a thread into 40 registers with 80 bytes of spills and is predicted at 108 us, but
// the model does not count the spills' traffic: the GPU decides that one too.
//
// Napkin maths: 16384 x 7168 x 3 B + 3.7 MB of scales = 356 MB: 106 us at the H100's 3.35 TB/s,
// 74 us at the H200's 4.8 TB/s (gold is 75% of the speed of light `warpbook probe` measures).
// Predicted (warpbook predict): 129 us on the H200, 184 us on the H100 SXM.
//
// What loses: the unfused pipeline (RMSNorm writes y in bf16, a second kernel reads it back for
// the block maxima and the codes) moves 2 + 2 + 2 + 1 = 7 bytes per element instead of 3, and
// rounds y to bf16 before quantising it. One thread per 128-channel block (the starter) reads
// 256 bytes alone: no coalescing. A reduction per 128 channels through shared memory costs a
// barrier each; the half-warp owns the block, so shuffles suffice. Staging the row in shared
// memory with cp.async (no registers held while the loads fly) was predicted no faster (114 us
// at best): the row still has to be reduced before anything is written. Recomputing y for the
// codes instead of keeping it (fewer registers, more instructions) was predicted slower.
// Measured on an H100 80GB HBM3: 155 us, 2.30 TB/s, 71.8% of the speed of light `warpbook probe`
// measures there: silver, short of the 75% gold bar. `warpbook tune` there, one run: TOK = 2
// 159 us, TOK = 4 166 us, WARPS = 48 169-172 us (the spills cost what the model leaves out). In
// one run of scripts/puzzles_vs_torch.sh (with TOK = 2), eager PyTorch took 3084 us, torch.compile
// 200 us and the Triton form 2193 us.
// measured: 155 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=32
// @tune TOK=8
// @tune WARPS=24
#define GREG 1
#include <cuda_bf16.h>
#include <cuda_fp8.h>

// Streaming form: a block of THREADS threads walks its TOK tokens one after another, all threads
// on each token, and loads the next token's row while it reduces and quantises this one.
#define THREADS (BLOCK * TOK)
#define NW (THREADS / 32)
#define MAXV ((8192 + 8 * THREADS - 1) / (8 * THREADS))
#define NBMAX 64

__device__ __forceinline__ float block_sum(float v, float* buf) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  if (lane == 0) buf[w] = v;
  __syncthreads();
  v = lane < NW ? buf[lane] : 0.0f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float half_warp_max(float v) {
#pragma unroll
  for (int o = 8; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ void unpack8(uint4 u, float* f) {
  const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    f[2 * j] = __uint_as_float(w[j] << 16);
    f[2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
  }
}

__device__ __forceinline__ float sumsq8(uint4 u) {
  float f[8];
  unpack8(u, f);
  return ((f[0] * f[0] + f[1] * f[1]) + (f[2] * f[2] + f[3] * f[3])) +
         ((f[4] * f[4] + f[5] * f[5]) + (f[6] * f[6] + f[7] * f[7]));
}

__device__ __forceinline__ float quantise8(uint4 xv, uint4 gv, int i, bool in, float rstd,
                                           unsigned char* qrow) {
  float y[8];
  float amax = 0.0f;
  if (in) {
    float g[8];
    unpack8(xv, y);
    unpack8(gv, g);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      y[j] = y[j] * rstd * g[j];
      amax = fmaxf(amax, fabsf(y[j]));
    }
  }
  amax = half_warp_max(amax);
  const float s = fmaxf(amax, 1e-4f) / 448.0f;
  if (in) {
    const float inv = 1.0f / s;
    const __nv_fp8x4_e4m3 lo(make_float4(y[0] * inv, y[1] * inv, y[2] * inv, y[3] * inv));
    const __nv_fp8x4_e4m3 hi(make_float4(y[4] * inv, y[5] * inv, y[6] * inv, y[7] * inv));
    reinterpret_cast<uint2*>(qrow)[i] = make_uint2(lo.__x, hi.__x);
  }
  return s;
}

extern "C" __global__ void __launch_bounds__(THREADS, (WARPS / NW) > 0 ? (WARPS / NW) : 1)
    rmsnorm_fp8_quant(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ gamma,
                      __nv_fp8_e4m3* __restrict__ q, float* __restrict__ scales, int T, int H,
                      float eps) {
  __shared__ float sc[NBMAX][TOK];
  __shared__ float buf[2][NW];
  const int t = threadIdx.x;
  const int row0 = blockIdx.x * TOK;
  const int ntok = min(TOK, T - row0);
  const int n8 = H >> 3, nb = H >> 7;
  const uint4* g8 = reinterpret_cast<const uint4*>(gamma);

  if (n8 <= MAXV * THREADS) {
    uint4 cur[MAXV], nxt[MAXV];
#if GREG
    uint4 g[MAXV];
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
      const int i = t + k * THREADS;
      if (i < n8) g[k] = g8[i];
    }
#endif
    {
      const uint4* x8 = reinterpret_cast<const uint4*>(x + (long long)row0 * H);
#pragma unroll
      for (int k = 0; k < MAXV; ++k) {
        const int i = t + k * THREADS;
        if (i < n8) cur[k] = x8[i];
      }
    }
    for (int j = 0; j < ntok; ++j) {
      const int row = row0 + j;
      if (j + 1 < ntok) {
        const uint4* x8 = reinterpret_cast<const uint4*>(x + (long long)(row + 1) * H);
#pragma unroll
        for (int k = 0; k < MAXV; ++k) {
          const int i = t + k * THREADS;
          if (i < n8) nxt[k] = x8[i];
        }
      }
      float ss = 0.0f;
#pragma unroll
      for (int k = 0; k < MAXV; ++k)
        if (t + k * THREADS < n8) ss += sumsq8(cur[k]);
      const float rstd = rsqrtf(block_sum(ss, buf[j & 1]) / H + eps);
      unsigned char* qrow = reinterpret_cast<unsigned char*>(q + (long long)row * H);
#pragma unroll
      for (int k = 0; k < MAXV; ++k) {
        if (k * THREADS >= n8) break;
        const int i = t + k * THREADS;
#if GREG
        const uint4 gv = g[k];
#else
        const uint4 gv = i < n8 ? g8[i] : make_uint4(0, 0, 0, 0);
#endif
        const float s = quantise8(cur[k], gv, i, i < n8, rstd, qrow);
        if ((t & 15) == 0 && i < n8) sc[i >> 4][j] = s;
      }
#pragma unroll
      for (int k = 0; k < MAXV; ++k) cur[k] = nxt[k];
    }
    __syncthreads();
    for (int jj = t; jj < nb * TOK; jj += THREADS) {
      const int b = jj / TOK, k = jj % TOK;
      if (k < ntok) scales[(long long)b * T + row0 + k] = sc[b][k];
    }
  } else {
    for (int j = 0; j < ntok; ++j) {
      const int row = row0 + j;
      const uint4* x8 = reinterpret_cast<const uint4*>(x + (long long)row * H);
      unsigned char* qrow = reinterpret_cast<unsigned char*>(q + (long long)row * H);
      float ss = 0.0f;
      for (int i = t; i < n8; i += THREADS) ss += sumsq8(x8[i]);
      const float rstd = rsqrtf(block_sum(ss, buf[j & 1]) / H + eps);
      for (int i0 = 0; i0 < n8; i0 += THREADS) {
        const int i = i0 + t;
        const bool in = i < n8;
        const float s = quantise8(in ? x8[i] : make_uint4(0, 0, 0, 0),
                                  in ? g8[i] : make_uint4(0, 0, 0, 0), i, in, rstd, qrow);
        if ((t & 15) == 0 && in) scales[(long long)(i >> 4) * T + row] = s;
      }
    }
  }
}
