// Held-out · h08-argmax-block32-float4 · designed limiter: latency (the 32-blocks-per-SM cap)
//
// What: argmax of each row with one 32-thread block (a single warp) per row. When cols is a
// multiple of 4 (rows then start 16-byte aligned) lane l scans the float4 vectors l, l + 32, ...
// in a rolled loop (#pragma unroll 1), keeping the first strict maximum it sees; otherwise the
// same with scalar loads. Five shuffle steps merge (value, index) pairs, the lower index winning
// ties, and lane 0 writes idx[row].
// Run:  warpbook check 09-argmax-rows bench/perfmodel/heldout/h08-argmax-block32-float4.cu
//
// Why it should be latency-bound: an SM holds at most 32 blocks, so 32-thread blocks stop at
// 1024 threads, and each lane has one 16-byte load in flight (the compares need it before the
// rolled loop moves on): 16 KB outstanding per SM against the ~25 KB Little's law asks for
// (4.8 TB/s x ~0.7 us / 132 SMs). At the timed 16384 x 8192 (537 MB read) a warp makes 64 trips
// per row; 16384 rows over 4224 resident warps is ~3.9 waves. Expected ~55-65% of the DRAM
// read ceiling: better than scalar warp-per-row kernels, short of a full-occupancy float4 scan.
// @tune BLOCK=32

__device__ __forceinline__ void take(float v, int i, float& bv, int& bi) {
  if (v > bv) { // strictly greater: indices rise within a lane, so the first maximum stays
    bv = v;
    bi = i;
  }
}

extern "C" __global__ void argmax_rows(const float* x, int* idx, int rows, int cols) {
  const float* row = x + (long long)blockIdx.x * cols;
  const int lane = threadIdx.x;
  float bv = -INFINITY;
  int bi = cols; // "none yet": loses every tie below
  if ((cols & 3) == 0) {
    const float4* row4 = reinterpret_cast<const float4*>(row);
    const int n4 = cols >> 2;
#pragma unroll 1
    for (int q = lane; q < n4; q += 32) {
      const float4 v = row4[q];
      take(v.x, 4 * q, bv, bi);
      take(v.y, 4 * q + 1, bv, bi);
      take(v.z, 4 * q + 2, bv, bi);
      take(v.w, 4 * q + 3, bv, bi);
    }
  } else {
#pragma unroll 1
    for (int c = lane; c < cols; c += 32) take(row[c], c, bv, bi);
  }
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_down_sync(0xffffffffu, bv, o);
    const int oi = __shfl_down_sync(0xffffffffu, bi, o);
    if (ov > bv || (ov == bv && oi < bi)) {
      bv = ov;
      bi = oi;
    }
  }
  if (lane == 0) idx[blockIdx.x] = bi;
}
