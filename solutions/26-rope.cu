// Solution · 26 RoPE (rotary position embedding), bf16, NeoX and GPT-J layouts
//
// What: each block owns TOK = 2 tokens. First its threads compute, once per block, inv_freq[i] =
// 10000^(-2i/dim) in double rounded to f32 (dim/2 values), then, once per (token, pair), the f32
// angle float(pos) * inv_freq and its accurate sincosf, into shared memory (cosines and sines in
// two arrays, so a unit reads its 8 of each as two float4s). Every head of the token reuses them:
// with 32 heads, sincos runs once per 32 pairs rotated.
// Then the block streams its 2 x heads x dim elements as units of 8 pairs, two 16-byte loads and
// two 16-byte stores per unit: for NeoX the unit is 8 elements from the first half of a head and
// the 8 partners dim/2 further; for GPT-J it is 16 consecutive elements (bf16x2 = one pair).
// Each thread loads U = 2 units (4 x 16 bytes) before it computes any; __launch_bounds__(256, 4)
// holds it to 64 registers, so 4 blocks (1024 threads, 64 KiB of loads) are in flight per SM.
// dim not a multiple of 16 (2, 6 here) takes a scalar path.
// Run:  warpbook check 26-rope solutions/26-rope.cu
//       warpbook predict 26-rope solutions/26-rope.cu
//
// Why: RoPE is a stream: 2 bytes in and 2 out per element, 3 FLOPs. The only real compute is the
// sine and cosine, and the accurate sincosf costs some 40 instructions (more past |x| = 105615,
// where it switches to a slower exact reduction), so it must not run once per element: once per
// (token, pair) and shared across heads makes it free. __sinf would be cheaper still, but its
// range reduction rounds x / (2 pi) to f32, off by up to 0.012 rad at position 131071, and bf16
// can see that. The double pow for inv_freq runs dim/2 times per block, once per 256 elements.
// Bigger TOK (4, 8) shares more but leaves a ragged last wave; U = 4 costs registers: both
// predict 1-2 points lower. Blocks of 128 threads (`@tune BLOCK=128`): `warpbook tune` on the
// H200 ranked BLOCK=128 TOK=2 first, 69.8 us against 76.5 us for BLOCK=256 (the model had 256:
// the smaller blocks share the SMs more evenly over the 8192 blocks of the perf size).
//
// Napkin maths: 16384 x 32 x 128 elements x 4 bytes = 268 MB: 56 us at 4.8 TB/s on the H200,
// 132 us on an A100 80 GB (2.04 TB/s), 266 us on an RTX 4090 (1.01 TB/s); gold is 75%.
// Predicted by `warpbook predict` for the H200: 70.1 us, 3.83 TB/s (80% of the datasheet; the
// tool's speed of light, against the measured DRAM ceiling, calls it 84%).
// Measured on the H200 (`warpbook check`): 67.38 us, 3.99 TB/s, about 83% of the speed of light
// against the ceilings `warpbook probe` measures; gold. With the L2 flushed by writing instead of
// reading, the flush's dirty lines drain during the timed kernel and it takes 69.8 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 67.38 us on NVIDIA H200
// measured: 91.20 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=128
// @tune TOK=2

#include <cuda_bf16.h>

#define MAXHALF 128 // dim <= 256
#define U 2         // units of 8 pairs per thread per round

__device__ __forceinline__ float2 rot(float2 v, float2 cs) { // cs = (cos, sin)
  return make_float2(v.x * cs.x - v.y * cs.y, v.x * cs.y + v.y * cs.x);
}
__device__ __forceinline__ unsigned pack(float a, float b) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<unsigned*>(&h);
}
__device__ __forceinline__ float2 unpack(unsigned u) {
  return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&u));
}

extern "C" __global__ void __launch_bounds__(256, 4)
    rope(const __nv_bfloat16* __restrict__ x, const int* __restrict__ pos,
         __nv_bfloat16* __restrict__ y, int tokens, int heads, int dim, int interleaved) {
  __shared__ float inv[MAXHALF];
  __shared__ __align__(16) float cos_s[TOK][MAXHALF], sin_s[TOK][MAXHALF];
  const int half = dim / 2;
  const int t0 = blockIdx.x * TOK;
  const int nt = min(TOK, tokens - t0);

  for (int i = threadIdx.x; i < half; i += blockDim.x) inv[i] = (float)pow(10000.0, -2.0 * i / dim);
  __syncthreads();
  for (int k = threadIdx.x; k < nt * half; k += blockDim.x) {
    const int tt = k / half, i = k - tt * half;
    float s, c;
    sincosf((float)pos[t0 + tt] * inv[i], &s, &c);
    cos_s[tt][i] = c;
    sin_s[tt][i] = s;
  }
  __syncthreads();

  const long long first = (long long)t0 * heads * dim; // the block's first element
  if ((dim & 15) == 0) {
    const int upr = half / 8;           // units per head
    const int units = nt * heads * upr; // units in the block
    const uint4* xv = reinterpret_cast<const uint4*>(x + first);
    uint4* yv = reinterpret_cast<uint4*>(y + first);
    const int vpr = dim / 8; // 16-byte vectors per head
    for (int base = threadIdx.x; base < units; base += U * blockDim.x) {
      uint4 a[U], b[U];
      int ia[U], ib[U], p0[U], tk[U];
#pragma unroll
      for (int q = 0; q < U; ++q) {
        const int u = base + q * blockDim.x;
        if (u < units) {
          const int r = u / upr, j = u - r * upr; // r: head row (token, head) in the block
          tk[q] = r / heads;
          p0[q] = 8 * j; // the unit's first pair
          ia[q] = r * vpr + (interleaved ? 2 * j : j);
          ib[q] = r * vpr + (interleaved ? 2 * j + 1 : upr + j);
          a[q] = xv[ia[q]];
          b[q] = xv[ib[q]];
        }
      }
#pragma unroll
      for (int q = 0; q < U; ++q) {
        if (base + q * blockDim.x < units) {
          // The unit's 8 cosines and 8 sines: four 16-byte shared loads.
          float co[8], si[8];
          *reinterpret_cast<float4*>(co) = *reinterpret_cast<const float4*>(&cos_s[tk[q]][p0[q]]);
          *reinterpret_cast<float4*>(co + 4) =
              *reinterpret_cast<const float4*>(&cos_s[tk[q]][p0[q] + 4]);
          *reinterpret_cast<float4*>(si) = *reinterpret_cast<const float4*>(&sin_s[tk[q]][p0[q]]);
          *reinterpret_cast<float4*>(si + 4) =
              *reinterpret_cast<const float4*>(&sin_s[tk[q]][p0[q] + 4]);
          const unsigned* av = &a[q].x;
          const unsigned* bv = &b[q].x;
          uint4 oa, ob;
          unsigned* ov = &oa.x;
          unsigned* pv = &ob.x;
          if (interleaved) { // a holds pairs p0..p0+3, b pairs p0+4..p0+7, one per bf16x2
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              float2 r0 = rot(unpack(av[e]), make_float2(co[e], si[e]));
              float2 r1 = rot(unpack(bv[e]), make_float2(co[4 + e], si[4 + e]));
              ov[e] = pack(r0.x, r0.y);
              pv[e] = pack(r1.x, r1.y);
            }
          } else { // a holds x0 of pairs p0..p0+7, b their partners x1
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              float2 lo = unpack(av[e]), hi = unpack(bv[e]);
              float2 r0 = rot(make_float2(lo.x, hi.x), make_float2(co[2 * e], si[2 * e]));
              float2 r1 = rot(make_float2(lo.y, hi.y), make_float2(co[2 * e + 1], si[2 * e + 1]));
              ov[e] = pack(r0.x, r1.x);
              pv[e] = pack(r0.y, r1.y);
            }
          }
          yv[ia[q]] = oa;
          yv[ib[q]] = ob;
        }
      }
    }
  } else {
    const int pairs = nt * heads * half;
    for (int k = threadIdx.x; k < pairs; k += blockDim.x) {
      const int r = k / half, i = k - r * half;
      const long long row = first + (long long)r * dim;
      const int ea = interleaved ? 2 * i : i, eb = interleaved ? 2 * i + 1 : i + half;
      float2 v = rot(make_float2(__bfloat162float(x[row + ea]), __bfloat162float(x[row + eb])),
                     make_float2(cos_s[r / heads][i], sin_s[r / heads][i]));
      y[row + ea] = __float2bfloat16(v.x);
      y[row + eb] = __float2bfloat16(v.y);
    }
  }
}
