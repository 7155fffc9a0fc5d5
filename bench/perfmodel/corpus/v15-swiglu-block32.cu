// Corpus · v15-swiglu-block32 · designed limiter: latency
//
// What: the plain float SwiGLU, one output per thread: y = g / (1 + exp(-g)) * u with g and u
// the two halves of row r of gu; 32-thread blocks, VEC = 1. The grid is cdiv(cols, 32) x rows
// = 448 x 8192 = 3.7 M blocks at the timed size.
// Run:  warpbook check 15-swiglu bench/perfmodel/corpus/v15-swiglu-block32.cu
//
// Why it is slow: 32-thread blocks hit the 32-blocks-per-SM cap at 1024 threads per SM, and each
// thread has one load pair (8 B) in flight: ~8 KB outstanding per SM where Little's law wants ~25
// KB. expf and the IEEE division make ~48 PTX instructions per element (the simulator's count):
// ~170 us of issue at the timed size, about half the DRAM time, so not the limit either. The
// 3.7 M one-warp blocks also keep the block scheduler busy (some 4 K block launches per us).
// Expected: about a third of the DRAM ceiling (1.41 GB moved).
// @tune BLOCK=32
// @tune VEC=1

extern "C" __global__ void swiglu(const float* gu, float* y, int rows, int cols) {
  const long long r = blockIdx.y;
  const long long j = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (j >= cols) return;
  const float g = gu[r * 2 * cols + j];
  const float u = gu[r * 2 * cols + cols + j];
  y[r * cols + j] = g / (1.0f + expf(-g)) * u;
}
