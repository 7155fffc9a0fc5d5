// Held-out · h05-gelu-h2-math · designed limiter: dram
//
// What: GELU done in half-precision arithmetic, two elements at a time: each thread loads one
// uint4 (8 halves = 4 __half2, VEC = 8) and computes y = x / (1 + 2^w) with
// w = x * (a + b * x^2) (the tanh form's -2u in base 2: a = -2 log2(e) sqrt(2/pi),
// b = 0.044715 a) using __hmul2 / __hfma2 / h2exp2 / h2rcp on __half2 values, then stores one
// uint4. 256-thread blocks; grid = cdiv(n, 2048): 131072 blocks at the timed n = 2^28. Elements
// of the last, partial chunk are done one at a time in f32.
// Run:  warpbook check 06-gelu-half2 bench/perfmodel/heldout/h05-gelu-h2-math.cu
//
// Why it should be DRAM-bound: 4 bytes of traffic per element (1.07 GB in all, ~280 us at the
// measured read+write ceiling). Per __half2: 3 HMUL2/HFMA2, one HADD2, a final HMUL2, and
// h2exp2 and h2rcp, each 2 f16->f32 conversions, 2 MUFU ops (ex2, rcp) and 2 conversions back:
// ~20 instructions per pair, ~11 per element with the load, store and index math, against the
// ~35 per element that would match DRAM time at 4 issues per clock. The 2 MUFU ops per element
// take ~130 us at 16 per clock per SM, under half the DRAM time. 16 B of loads in flight per
// thread and 2048 threads per SM: 32 KB per SM, a bit above the ~25 KB Little's law asks for.
// Every warp request covers 512 contiguous bytes. Half precision (2^-11) is enough for the
// check's rtol of 1e-2; x * (a + b x^2) avoids the x^3 overflow at |x| = 60.
// @tune BLOCK=256
// @tune VEC=8
#include <cuda_fp16.h>

__device__ __forceinline__ __half2 gelu2(__half2 v) {
  const float a = -2.0f * 1.4426950409f * 0.7978845608f; // -2 log2(e) sqrt(2 / pi)
  const __half2 ka = __float2half2_rn(a);
  const __half2 kb = __float2half2_rn(a * 0.044715f);
  const __half2 one = __float2half2_rn(1.0f);
  __half2 w = __hmul2(v, __hfma2(kb, __hmul2(v, v), ka)); // -2u / ln 2; no x^3 overflow
  __half2 e = h2exp2(w);                                  // Inf for very negative x
  return __hmul2(v, h2rcp(__hadd2(one, e)));              // x * (1 / Inf) = -0
}

__device__ __forceinline__ float gelu1(float v) {
  float u = v * (0.7978845608f + 0.7978845608f * 0.044715f * v * v);
  return v / (1.0f + expf(-2.0f * u));
}

extern "C" __global__ void gelu(const __half* __restrict__ x, __half* __restrict__ y, int n) {
  const long long i = ((long long)blockIdx.x * BLOCK + threadIdx.x) * VEC;
  if (i + VEC <= n) {
    uint4 in = *reinterpret_cast<const uint4*>(x + i);
    __half2* h = reinterpret_cast<__half2*>(&in);
#pragma unroll
    for (int k = 0; k < 4; ++k) h[k] = gelu2(h[k]);
    *reinterpret_cast<uint4*>(y + i) = in;
  } else {
    for (long long k = i; k < n; ++k) y[k] = __float2half(gelu1(__half2float(x[k])));
  }
}
