// Corpus · v06-gelu-tanhf · designed limiter: dram
//
// What: the plain GELU (tanh form) on f16 data, one element per thread (VEC = 1, 256-thread
// blocks): widen the half to float, y = 0.5 v (1 + tanhf(sqrt(2/pi) (v + 0.044715 v^3))) with the
// accurate tanhf, round back to half.
// Run:  warpbook check 06-gelu-half2 bench/perfmodel/corpus/v06-gelu-tanhf.cu
//
// Why: 4 bytes of DRAM traffic per element (2 in, 2 out): 1.07 GB, ~245 us at the 4.4 TB/s a
// read+write stream reaches. tanhf is a polynomial for |u| < 0.6 and 1 - 2 / (1 + e^2|u|)
// otherwise, both computed and selected (one MUFU.EX2, one MUFU.RCP, no branch): the simulator
// counts 50 PTX instructions per element, ~35-40 after ptxas folds the moves and parameter loads,
// i.e. ~9-10 G thread instructions, ~280-300 us of issue on 132 SMs (4 x 32 lanes per clock at
// 1.98 GHz). Designed as the DRAM-bound accurate-math GELU; on the H200 it sits right at the
// DRAM/issue boundary. Loads are 2 bytes per thread (64 B per warp request) with 2048 threads per
// SM. Expected: ~70-85% of speed of light; a boundary case for the model (DRAM vs issue).
// @tune BLOCK=256
// @tune VEC=1
#include <cuda_fp16.h>

extern "C" __global__ void gelu(const __half* x, __half* y, int n) {
  const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  const float u = 0.7978845608f * (v + 0.044715f * v * v * v);
  y[i] = __float2half(0.5f * v * (1.0f + tanhf(u)));
}
