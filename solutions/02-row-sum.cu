// Solution · 02 row sum
//
// What: one block per row. Each thread accumulates a strided slice of the row with float4 loads
// where the row is 16-byte aligned, then the block reduces: warp shuffles inside each warp, one
// shared-memory exchange of the per-warp sums, and a final shuffle in warp 0.
// Run:  warpbook check 02-row-sum solutions/02-row-sum.cu
//
// Why: the row sum reads every byte once, so its speed is DRAM bandwidth. Two things keep a
// block from reaching it: too few loads in flight per thread, and a reduction tail that
// serialises. float4 loads bring 16 bytes per instruction and unrolling by 4 keeps four loads
// in flight; the shuffle tree needs 5 steps per warp and a single __syncthreads().
// Rows start at r * cols floats, which is 16-byte aligned only when cols % 4 == 0, so other
// widths fall back to scalar loads (still coalesced).
// Measured on the H200: 61.95 us, 4334 GB/s: 90% of the 4.8 TB/s datasheet, 95% of the 4.56 TB/s
// DRAM read ceiling `warpbook probe` measures; gold. With the L2 flushed by writing instead of
// reading, the flush's dirty lines drain during the timed kernel and it takes 70.91 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 61.95 us on NVIDIA H200
// measured: 87.90 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=512

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  const float* row = x + (long long)blockIdx.x * cols;
  float s = 0.0f;
  if ((cols & 3) == 0) {
    const float4* row4 = reinterpret_cast<const float4*>(row);
    int n4 = cols >> 2;
    int i = threadIdx.x;
    int bd = blockDim.x;
    // Four independent 16-byte loads in flight per thread before the first add.
    for (; i + 3 * bd < n4; i += 4 * bd) {
      float4 a = row4[i], b = row4[i + bd], c = row4[i + 2 * bd], d = row4[i + 3 * bd];
      s += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w)) + ((c.x + c.y) + (c.z + c.w)) +
           ((d.x + d.y) + (d.z + d.w));
    }
    for (; i < n4; i += bd) {
      float4 a = row4[i];
      s += (a.x + a.y) + (a.z + a.w);
    }
  } else {
    for (int i = threadIdx.x; i < cols; i += blockDim.x) s += row[i];
  }

  __shared__ float warp_sums[32];
  s = warp_sum(s);
  int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) warp_sums[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
    s = warp_sum(s);
    if (lane == 0) y[blockIdx.x] = s;
  }
}
