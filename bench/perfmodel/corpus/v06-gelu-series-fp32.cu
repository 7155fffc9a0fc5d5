// Corpus · v06-gelu-series-fp32 · designed limiter: fp32
//
// What: the exact GELU, 0.5 x (1 + erf(x / sqrt 2)), on f16 data (VEC = 1, 256-thread blocks),
// with erf from its everywhere-positive power series (no cancellation in f32):
//   erf(z) = 2 / sqrt(pi) * e^(-z^2) * z * (1 + (2 z^2 / 3) (1 + (2 z^2 / 5) (1 + ...))),
// 48 terms evaluated inside out, one FMUL and one FFMA per term, z = clamp(x, -5.5, 5.5) / sqrt 2
// (past 5.5, Phi(x) is within 2e-8 of 0 or 1). Checked against the reference over every f16
// input: within 45% of the f16 tolerance (the erf form's own distance from the tanh form).
// Run:  warpbook check 06-gelu-half2 bench/perfmodel/corpus/v06-gelu-series-fp32.cu
//
// Why it is slow: ~96 FP32 instructions per element (48 FMUL + 48 FFMA, a dependent chain per
// thread but 2048 independent threads per SM) plus ~15 others and a single MUFU.EX2. FP32 issue is
// 128 lanes per clock per SM: 2^28 x ~110 = 30 G lane-instructions / (132 x 128 x 1.98 GHz =
// 33.4 T/s) ~ 0.9 ms, against ~0.25 ms for the 1.07 GB of DRAM traffic and ~0.07 ms of SFU.
// The chain (4-cycle FMA latency, 16 warps per scheduler) does not limit issue. Expected: ~25-30%
// of speed of light, the FP32 pipe (and issue) saturated.
// @tune BLOCK=256
// @tune VEC=1
#include <cuda_fp16.h>

#define TERMS 48

extern "C" __global__ void gelu(const __half* x, __half* y, int n) {
  const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  const float z = fminf(fmaxf(v, -5.5f), 5.5f) * 0.70710678118654752f;
  const float z2 = z * z;
  float p = 1.0f;
#pragma unroll
  for (int k = TERMS; k >= 1; --k) p = fmaf(p * z2, 2.0f / (2 * k + 1), 1.0f);
  const float erf = 1.1283791670955126f * __expf(-z2) * z * p;
  y[i] = __float2half(0.5f * v * (1.0f + erf));
}
