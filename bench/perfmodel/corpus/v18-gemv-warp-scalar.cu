// Corpus · v18-gemv-warp-scalar · designed limiter: latency
//
// What: one warp per row (THREADS = 32, ROWS = 8 rows per 256-thread block). Lane l walks
// columns l, l + 32, ... of its row with scalar loads of A and x and one fmaf per element, in a
// loop that is not unrolled; 5 shuffle steps reduce the warp and lane 0 writes y[r].
// Run:  warpbook check 18-gemv bench/perfmodel/corpus/v18-gemv-warp-scalar.cu
//
// Why it is slow: each lane has one 4-byte load of A in flight (x, 32 KB, hits L1/L2), and the
// next iteration's load waits for the loop's fma chain. 2048 threads per SM x 4 B = 8 KB
// outstanding per SM against the ~25 KB Little's law wants. Compared with the float4 solution it
// issues 4x the load instructions per byte too, but those stay far below the LSU limit.
// Expected: about a third of the DRAM ceiling (537 MB of A).
// @tune THREADS=32
// @tune ROWS=8

extern "C" __global__ void gemv(const float* A, const float* x, float* y, int M, int K) {
  const long long r = (long long)blockIdx.x * ROWS + threadIdx.y;
  const int lane = threadIdx.x;
  float acc = 0.0f;
  if (r < M) {
    const float* row = A + r * K;
#pragma unroll 1
    for (int k = lane; k < K; k += 32) acc = fmaf(row[k], x[k], acc);
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if (lane == 0 && r < M) y[r] = acc;
}
