// Corpus · v06-gelu-divergent · designed limiter: divergence
//
// What: GELU on f16 data, one element per thread (VEC = 1, 256-thread blocks), where even lanes
// use the tanh form 0.5 v (1 + tanhf(...)) and odd lanes the erf form 0.5 v (1 + erff(v / sqrt 2))
// (both within the f16 tolerance of the reference).
// Run:  warpbook check 06-gelu-half2 bench/perfmodel/corpus/v06-gelu-divergent.cu
//
// Why it is slow: the branch splits every warp into two halves that run one after the other with
// 16 lanes each, and erff branches again inside (|x| < 1.003). The simulator counts 89 issued
// lane-slots per element (warp instructions x 32 / n) against 50 for the tanh form alone, with an
// active-lane efficiency of 0.62 and a divergent branch in every warp. At 2^28 elements that is
// ~24 G lane-slots in PTX, ~17-20 G after ptxas: ~500-600 us of issue against ~245 us of DRAM
// time, so half-empty warps, not memory or any single pipe's throughput, set the pace.
// Expected: ~2x slower than v06-gelu-tanhf, ~35-45% of speed of light.
// @tune BLOCK=256
// @tune VEC=1
#include <cuda_fp16.h>

extern "C" __global__ void gelu(const __half* x, __half* y, int n) {
  const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  float g;
  if ((threadIdx.x & 1) == 0) {
    const float u = 0.7978845608f * (v + 0.044715f * v * v * v);
    g = 0.5f * v * (1.0f + tanhf(u));
  } else {
    g = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
  y[i] = __float2half(g);
}
