// Diagnostic · the least time to read puzzle 32's weights at its launch shape: no arithmetic.
//
// What: each block of 128 threads reads its 16 rows' 73,728 contiguous bytes of W with coalesced
// 16-byte loads, UNR in flight per thread, and XORs them: the answer is wrong, the time is a bare
// read of the 264 MB in the puzzle's grid of 3584 blocks.
// Run:  warpbook run 32-w4a16-gemv bench/perfmodel/experiments/w4a16-bare-reads/contiguous.cu \
//         --size M=57344 --size K=8192 --time-wrong        (on a GPU)
// Measured on the H200 with the L2 flushed by reading: 61.8 and 61.8 us, 4.28 TB/s (with a flush
// that writes, 70.7 us, UNR 8: 70.9). See README.md.
// measured: 61.8 us on NVIDIA H200
// @tune THREADS=128
// @tune ROWS=16
#include <cuda_fp16.h>
#ifndef UNR
#define UNR 4
#endif
extern "C" __global__ void __launch_bounds__(THREADS)
    w4a16_gemv(const unsigned char* __restrict__ W, const __half* __restrict__ x,
               __half* __restrict__ y, int M, int K) {
  const long long rowbytes = (long long)(K >> 5) * 18;
  const long long r0 = (long long)blockIdx.x * ROWS;
  const long long r1 = min((long long)M, r0 + ROWS);
  const uint4* p = reinterpret_cast<const uint4*>(W + r0 * rowbytes);
  const long long n = (r1 - r0) * rowbytes / 16;
  unsigned acc = 0;
  long long i = threadIdx.x;
  for (; i + (UNR - 1) * THREADS < n; i += UNR * THREADS) {
    uint4 v[UNR];
#pragma unroll
    for (int u = 0; u < UNR; ++u) v[u] = __ldg(p + i + u * THREADS);
#pragma unroll
    for (int u = 0; u < UNR; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += THREADS) {
    uint4 v = __ldg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (threadIdx.x < ROWS && r0 + threadIdx.x < M)
    y[r0 + threadIdx.x] = __float2half((float)(acc & 255));
}
