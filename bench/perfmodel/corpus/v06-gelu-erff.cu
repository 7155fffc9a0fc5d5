// Corpus · v06-gelu-erff · designed limiter: fp32
//
// What: the exact (erf) form of GELU on f16 data, one element per thread (VEC = 1, 256-thread
// blocks): y = 0.5 v (1 + erff(v / sqrt 2)) in float, rounded to half. It differs from the
// puzzle's tanh form by at most ~5e-4, inside the f16 tolerance (rtol 1e-2, atol 1e-3).
// Run:  warpbook check 06-gelu-half2 bench/perfmodel/corpus/v06-gelu-erff.cu
//
// Why: CUDA's erff branches on |x| < 1.003: a minimax polynomial on each side (the outer one
// ends in a MUFU.EX2). On uniform(-6, 6) inputs most warps hold both kinds of lanes, so they run
// both polynomials: the simulator counts ~47 PTX instructions per element (~20 FLOPs), ~35-40
// after ptxas, so ~9-10 G thread instructions at 2^28 elements: ~290-320 us of issue, mostly FP32
// FMAs, against ~245 us for the 1.07 GB of DRAM traffic. Expected: ~65-80% of speed of light,
// bound by instruction issue of FP32 work (the nearest label is fp32), not by the SFU (1 MUFU per
// element, ~65 us) and only just by more than DRAM.
// @tune BLOCK=256
// @tune VEC=1
#include <cuda_fp16.h>

extern "C" __global__ void gelu(const __half* x, __half* y, int n) {
  const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  y[i] = __float2half(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));
}
