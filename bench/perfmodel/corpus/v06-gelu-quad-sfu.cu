// Corpus · v06-gelu-quad-sfu · designed limiter: sfu
//
// What: the exact GELU, x * Phi(x), on f16 data (VEC = 1, 256-thread blocks), with the normal CDF
// computed by 16-point Gauss-Legendre quadrature of the Gaussian density:
//   Phi(a) = 1/2 + a * sum_i w'_i * 2^(c_i a^2),  a = clamp(x, -6, 6),
// where c_i = -log2(e) / 2 * ((1 + xi_i) / 2)^2 and w'_i = w_i / (2 sqrt(2 pi)) for the nodes xi_i
// and weights w_i on [-1, 1]. Each node costs one FMUL, one ex2.approx.ftz (a single MUFU.EX2)
// and one FFMA. Checked against the reference over every f16 input: within 45% of the f16 tolerance
// (the erf form's own distance from the puzzle's tanh form). Run:  warpbook check 06-gelu-half2
// bench/perfmodel/corpus/v06-gelu-quad-sfu.cu
//
// Why it is slow: 16 MUFU.EX2 per element. The SFU does 16 lanes per clock per SM (a quarter of a
// warp per scheduler per clock), against 128 lanes per clock of FP32 and of issue: 2^28 x 16 =
// 4.3 G transcendental lane-operations / (132 x 16 x 1.98 GHz = 4.2 T/s) ~ 1.0 ms, while the
// whole instruction stream (~63 per element in SASS terms: 3 per node plus ~15) needs ~0.5 ms of
// issue and the 1.07 GB ~0.25 ms of DRAM.
// Expected: ~20-25% of speed of light, the MUFU pipe saturated.
// @tune BLOCK=256
// @tune VEC=1
#include <cuda_fp16.h>

// {c_i, w'_i} for the 16 Gauss-Legendre nodes, smallest node first.
__constant__ float2 kNodes[16] = {
    {-2.025907740e-05f, 5.416132038e-03f}, {-5.539819236e-04f, 1.241778140e-02f},
    {-3.255977640e-03f, 1.898137683e-02f}, {-1.078901515e-02f, 2.485988300e-02f},
    {-2.633253238e-02f, 2.984008246e-02f}, {-5.297320352e-02f, 3.374184380e-02f},
    {-9.307068411e-02f, 3.642411140e-02f}, {-1.476963299e-01f, 3.778992928e-02f},
    {-2.162333683e-01f, 3.778992928e-02f}, {-2.962047072e-01f, 3.642411140e-02f},
    {-3.833624704e-01f, 3.374184380e-02f}, {-4.720360292e-01f, 2.984008246e-02f},
    {-5.556981120e-01f, 2.485988300e-02f}, {-6.276768991e-01f, 1.898137683e-02f},
    {-6.819208327e-01f, 1.241778140e-02f}, {-7.137221703e-01f, 5.416132038e-03f}};

// 2^x on the SFU: one MUFU.EX2, flushing subnormal results to 0 (all that is lost is < 2^-126).
__device__ __forceinline__ float ex2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

extern "C" __global__ void gelu(const __half* x, __half* y, int n) {
  const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  const float a = fminf(fmaxf(v, -6.0f), 6.0f);
  const float a2 = a * a;
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < 16; ++k) s = fmaf(kNodes[k].y, ex2(a2 * kNodes[k].x), s);
  y[i] = __float2half(v * fmaf(a, s, 0.5f));
}
