// Corpus · v06-gelu-fp64 · designed limiter: fp64
//
// What: GELU (tanh form) on f16 data computed in double precision, as the reference does, but
// with the memory side of the solution: each thread owns VEC = 8 halves, read as one 16-byte uint4
// and written as one (a warp instruction covers 512 contiguous bytes); the math per element is
// 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))) in double, rounded once to half. Elements past
// the last whole 8-vector are done one at a time.
// Run:  warpbook check 06-gelu-half2 bench/perfmodel/corpus/v06-gelu-fp64.cu
//
// Why it is slow: double tanh is a polynomial for small |u| and otherwise an exp with range
// reduction and a reciprocal refined by Newton steps; a warp whose lanes disagree runs both. The
// simulator counts 42.5 FP64 FLOPs per element (FMA = 2) at an active-lane efficiency of 0.69,
// i.e. ~40 FP64 lane-slots per element. The H200 runs FP64 at 64 lanes per clock per SM (half of
// FP32; 34 TFLOP/s of FMA without tensor cores): 2^28 x ~40 = 10.7 G / (132 x 64 x 1.98 GHz =
// 16.7 T/s) ~ 0.65 ms, against ~0.25 ms for the 1.07 GB of DRAM traffic and ~0.5-0.6 ms of
// instruction issue. Expected: ~35-40% of speed of light, the FP64 pipe saturated.
// @tune BLOCK=256
// @tune VEC=8
#include <cuda_fp16.h>

__device__ __forceinline__ float gelu_d(float xf) {
  const double v = (double)xf;
  const double u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
  return (float)(0.5 * v * (1.0 + tanh(u)));
}

__device__ __forceinline__ unsigned int gelu_pair(unsigned int bits) {
  __half2 h = *reinterpret_cast<__half2*>(&bits);
  const float2 f = __half22float2(h);
  __half2 r = __halves2half2(__float2half(gelu_d(f.x)), __float2half(gelu_d(f.y)));
  return *reinterpret_cast<unsigned int*>(&r);
}

extern "C" __global__ void gelu(const __half* __restrict__ x, __half* __restrict__ y, int n) {
  const long long i = ((long long)blockIdx.x * BLOCK + threadIdx.x) * VEC;
  if (i + VEC <= n) {
    const uint4 in =
        *reinterpret_cast<const uint4*>(x + i); // 16-byte aligned: i is a multiple of 8
    *reinterpret_cast<uint4*>(y + i) =
        make_uint4(gelu_pair(in.x), gelu_pair(in.y), gelu_pair(in.z), gelu_pair(in.w));
  } else {
    for (long long k = i; k < n; ++k) y[k] = __float2half(gelu_d(__half2float(x[k])));
  }
}
