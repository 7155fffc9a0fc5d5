// Diagnostic · puzzle 32's weights read a row at a time per warp: no arithmetic.
//
// What: each warp reads its 4 rows one after another, each row's 4608 contiguous bytes with
// coalesced 16-byte loads (9 a lane, all in flight), and XORs them: wrong answer, bare read.
// Run:  warpbook run 32-w4a16-gemv bench/perfmodel/experiments/w4a16-bare-reads/warp-rows.cu \
//         --size M=57344 --size K=8192 --time-wrong        (on a GPU)
// Measured on the H200 with the L2 flushed by reading: 62.7 and 62.9 us (71.7 with a flush that
// writes). See README.md.
// @tune THREADS=128
// @tune ROWS=16
#include <cuda_fp16.h>
extern "C" __global__ void __launch_bounds__(THREADS)
    w4a16_gemv(const unsigned char* __restrict__ W, const __half* __restrict__ x,
               __half* __restrict__ y, int M, int K) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long rowbytes = (long long)(K >> 5) * 18;
  const int R = ROWS / (THREADS / 32);
  const long long r0 = (long long)blockIdx.x * ROWS + warp * R;
  const int n = (int)(rowbytes / 16);
  for (int r = 0; r < R; ++r) {
    const long long row = min(r0 + r, (long long)M - 1);
    const uint4* p = reinterpret_cast<const uint4*>(W + row * rowbytes);
    unsigned acc = 0;
    uint4 v[9];
#pragma unroll
    for (int u = 0; u < 9; ++u)
      v[u] = lane + 32 * u < n ? __ldg(p + lane + 32 * u) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < 9; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    if (lane == 0 && r0 + r < M) y[r0 + r] = __float2half((float)(acc & 255));
  }
}
