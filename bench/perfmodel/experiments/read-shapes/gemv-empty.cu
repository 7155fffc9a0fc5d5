// Diagnostic · puzzle 32's launch with no reads at all: each block writes its ROWS outputs and
// exits. Its time is what the launch, the grid and the timing cost at the perf size, the floor
// under any kernel in this shape. The answer is wrong on purpose.
// Run (on a GPU):
//   warpbook run 32-w4a16-gemv bench/perfmodel/experiments/read-shapes/gemv-empty.cu \
//     --size M=57344 --size K=8192 --time-wrong
// @tune THREADS=128
// @tune ROWS=16
#include <cuda_fp16.h>
extern "C" __global__ void __launch_bounds__(THREADS)
    w4a16_gemv(const unsigned char* __restrict__ W, const __half* __restrict__ x,
               __half* __restrict__ y, int M, int K) {
  const long long r = (long long)blockIdx.x * ROWS + threadIdx.x;
  if (threadIdx.x < ROWS && r < M) y[r] = __float2half(0.0f);
}
