// Held-out · h16-gemv-block-per-row · designed limiter: dram
//
// What: one 512-thread block per row of A (THREADS = 512, ROWS = 1): when K is a multiple of 4
// each thread walks the float4 vectors t, t + 512, ... of its row (4 of them at K = 8192,
// unrolled by 4) and of x, otherwise scalar floats; then warp shuffles, 16 warp sums in shared
// memory, and thread 0 writes y[row]. The block-per-row counterpart of a warp-per-row GEMV.
// Run:  warpbook check 18-gemv bench/perfmodel/heldout/h16-gemv-block-per-row.cu
//
// Why it should be DRAM-bound: A is 537 MB at the timed 16384 x 8192 and read once (~120 us at
// the measured read ceiling); x (32 KB) is re-read by every block but stays in L1/L2. A thread's
// 4 float4 loads of A are independent and issued together: 64 B in flight per thread, 4 blocks
// (2048 threads) per SM, ~128 KB per SM, far above the ~25 KB Little's law asks for. Each block
// ends with a barrier and a short serial tail (16 adds by thread 0), a few percent at most;
// 16384 blocks over 528 slots are ~31 waves. Expected: ~80-90% of the DRAM read ceiling.
// @tune THREADS=512
// @tune ROWS=1

extern "C" __global__ void gemv(const float* __restrict__ A, const float* __restrict__ x,
                                float* __restrict__ y, int M, int K) {
  __shared__ float warp_sums[THREADS / 32];
  const long long r = blockIdx.x; // ROWS = 1: one row per block
  if (r >= M) return;
  const float* row = A + r * K;
  float acc = 0.0f;
  if ((K & 3) == 0) {
    const float4* row4 = reinterpret_cast<const float4*>(row);
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const int k4 = K >> 2;
#pragma unroll 4
    for (int q = threadIdx.x; q < k4; q += THREADS) {
      const float4 a = row4[q], v = x4[q];
      acc = fmaf(a.x, v.x, acc);
      acc = fmaf(a.y, v.y, acc);
      acc = fmaf(a.z, v.z, acc);
      acc = fmaf(a.w, v.w, acc);
    }
  } else {
#pragma unroll 4
    for (int k = threadIdx.x; k < K; k += THREADS) acc = fmaf(row[k], x[k], acc);
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int w = 0; w < THREADS / 32; ++w) t += warp_sums[w];
    y[r] = t;
  }
}
