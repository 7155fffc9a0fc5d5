// Solution · 18 GEMV
//
// What: one warp per row (THREADS = 32, ROWS = 8 rows per 256-thread block). When K % 4 == 0 each
// lane reads float4s of its row of A and of x, unrolled by 4 so each lane has 4 independent
// 16-byte loads of A in flight; then 5 shuffle steps reduce the warp and lane 0 writes y[r].
// Other widths use scalar loads (still coalesced). With THREADS > 32 the warps of a row combine
// their sums through shared memory.
// Run:  warpbook check 18-gemv solutions/18-gemv.cu
//
// Why: A is read exactly once, so DRAM bandwidth sets the time (0.5 FLOP/byte). A warp reading a
// row moves 512 contiguous bytes per instruction. x (32 KiB at K = 8192) is reused by every row and
// lives in L1/L2, costing instructions but no DRAM traffic. A is read with __ldcs (evict-first):
// it streams through once, so it should not push x out of the caches (2 us less than plain loads:
// 138 against 140 us with the L2 flushed by writing). With 64 warps per SM and 4 x 16 B in flight
// per lane there are ~128 KB of loads in flight per SM, several times what the H200 needs.
//
// Napkin maths: 537 MB at 4.8 TB/s = 112 us on the H200 (gold is 80%: 140 us).
// Measured on the H200: 123.90 us, 4333 GB/s: 90% of the 4.8 TB/s datasheet, 95% of the 4.56 TB/s
// DRAM read ceiling `warpbook probe` measures; gold. With the L2 flushed by writing instead of
// reading, the flush's dirty lines drain during the timed kernel and it takes 139.2 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 123.90 us on NVIDIA H200
// measured: 178.66 us on NVIDIA H100 80GB HBM3
// @tune THREADS=32
// @tune ROWS=8

extern "C" __global__ void gemv(const float* __restrict__ A, const float* __restrict__ x,
                                float* __restrict__ y, int M, int K) {
  const long long r = (long long)blockIdx.x * ROWS + threadIdx.y;
  const int t = threadIdx.x;
  float acc = 0.0f;
  if (r < M) {
    const float* row = A + r * K;
    if ((K & 3) == 0) {
      const float4* a4 = reinterpret_cast<const float4*>(row);
      const float4* x4 = reinterpret_cast<const float4*>(x);
      const int n4 = K >> 2;
      float acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
      int i = t;
      for (; i + 3 * THREADS < n4; i += 4 * THREADS) {
        float4 a0 = __ldcs(a4 + i), a1 = __ldcs(a4 + i + THREADS),
               a2 = __ldcs(a4 + i + 2 * THREADS), a3 = __ldcs(a4 + i + 3 * THREADS);
        float4 v0 = x4[i], v1 = x4[i + THREADS], v2 = x4[i + 2 * THREADS], v3 = x4[i + 3 * THREADS];
        acc = fmaf(a0.x, v0.x, acc);
        acc = fmaf(a0.y, v0.y, acc);
        acc = fmaf(a0.z, v0.z, acc);
        acc = fmaf(a0.w, v0.w, acc);
        acc1 = fmaf(a1.x, v1.x, acc1);
        acc1 = fmaf(a1.y, v1.y, acc1);
        acc1 = fmaf(a1.z, v1.z, acc1);
        acc1 = fmaf(a1.w, v1.w, acc1);
        acc2 = fmaf(a2.x, v2.x, acc2);
        acc2 = fmaf(a2.y, v2.y, acc2);
        acc2 = fmaf(a2.z, v2.z, acc2);
        acc2 = fmaf(a2.w, v2.w, acc2);
        acc3 = fmaf(a3.x, v3.x, acc3);
        acc3 = fmaf(a3.y, v3.y, acc3);
        acc3 = fmaf(a3.z, v3.z, acc3);
        acc3 = fmaf(a3.w, v3.w, acc3);
      }
      for (; i < n4; i += THREADS) {
        float4 a0 = a4[i], v0 = x4[i];
        acc = fmaf(a0.x, v0.x, acc);
        acc = fmaf(a0.y, v0.y, acc);
        acc = fmaf(a0.z, v0.z, acc);
        acc = fmaf(a0.w, v0.w, acc);
      }
      acc += (acc1 + acc2) + acc3;
    } else {
      for (int k = t; k < K; k += THREADS) acc = fmaf(row[k], x[k], acc);
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if (THREADS == 32) {
    if (t == 0 && r < M) y[r] = acc;
  } else {
    __shared__ float part[ROWS][THREADS / 32 > 0 ? THREADS / 32 : 1];
    if ((t & 31) == 0) part[threadIdx.y][t >> 5] = acc;
    __syncthreads();
    if (t == 0 && r < M) {
      float s = 0.0f;
      for (int w = 0; w < THREADS / 32; ++w) s += part[threadIdx.y][w];
      y[r] = s;
    }
  }
}
