// Solution · 09 argmax of each row
//
// What: one block of 512 threads per row. Each thread scans its float4 vectors (t, t + 512, ...)
// when rows are 16-byte aligned (cols % 4 == 0), else single floats, keeping the first strict
// maximum. Then a (value, column) reduction: 5 shuffle steps per warp, one 16-entry shared
// exchange, 5 more steps in warp 0. The rule "larger value, else lower column" is associative
// and commutative, so the tree gives exactly the reference's answer.
// Run:  warpbook check 09-argmax-rows solutions/09-argmax-rows.cu
//
// Why it is fast: argmax reads every byte once and does one compare per element, so DRAM
// bandwidth sets the time. float4 loads give each thread 16 bytes per instruction, and a row of
// 8192 is 4 vectors per thread, all independent, so all in flight at once. The pair reduction
// costs one barrier.
//
// Napkin maths: 537 MB at 4.8 TB/s = 112 us on the H200 (gold is 80%: 140 us).
// Measured on the H200: 129.17 us, 4157 GB/s: 87% of the 4.8 TB/s datasheet, 91% of the 4.56 TB/s
// DRAM read ceiling `warpbook probe` measures; gold. With the L2 flushed by writing instead of
// reading, the flush's dirty lines drain during the timed kernel and it takes 135.46 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 129.17 us on NVIDIA H200
// measured: 174.72 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=512

__device__ __forceinline__ void take(float& best, int& col, float v, int c) {
  if (v > best || (v == best && c < col)) best = v, col = c;
}

extern "C" __global__ void argmax_rows(const float* __restrict__ x, int* __restrict__ idx, int rows,
                                       int cols) {
  const float* row = x + (long long)blockIdx.x * cols;
  float best = -INFINITY;
  int col = 0x7fffffff;

  if ((cols & 3) == 0) {
    const float4* row4 = reinterpret_cast<const float4*>(row);
    int n4 = cols >> 2;
#pragma unroll 4
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
      float4 v = row4[i];
      int c = 4 * i;
      // Columns increase within the thread, so a strict > keeps the first of equal values.
      if (v.x > best) best = v.x, col = c;
      if (v.y > best) best = v.y, col = c + 1;
      if (v.z > best) best = v.z, col = c + 2;
      if (v.w > best) best = v.w, col = c + 3;
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      float v = row[c];
      if (v > best) best = v, col = c;
    }
  }

#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float v = __shfl_down_sync(0xffffffffu, best, o);
    int c = __shfl_down_sync(0xffffffffu, col, o);
    take(best, col, v, c);
  }
  __shared__ float wv[32];
  __shared__ int wc[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) wv[warp] = best, wc[warp] = col;
  __syncthreads();
  if (warp == 0) {
    bool has = lane < (int)(blockDim.x >> 5);
    best = has ? wv[lane] : -INFINITY;
    col = has ? wc[lane] : 0x7fffffff;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      float v = __shfl_down_sync(0xffffffffu, best, o);
      int c = __shfl_down_sync(0xffffffffu, col, o);
      take(best, col, v, c);
    }
    if (lane == 0) idx[blockIdx.x] = col;
  }
}
