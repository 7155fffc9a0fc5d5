// Solution · 08 dot product
//
// What: two passes. dot_partial runs 528 blocks of 512 threads (4 per SM on the H200's 132 SMs);
// each thread walks the arrays as float4 with a grid stride, two vectors per iteration into two
// independent accumulators, then the block reduces with warp shuffles and one shared exchange.
// dot_final reduces the 528 partial sums with the same block reduction.
// Run:  warpbook check 08-dot-product solutions/08-dot-product.cu
//
// Why it is fast: 8 bytes per FMA, so bandwidth-bound. float4 loads move 16 bytes per
// instruction; unrolling by two gives each thread 4 independent 16-byte loads in flight (64 KB per
// SM with 2048 resident threads), which covers the H200's DRAM latency. A grid of exactly 4 blocks
// per SM means every SM gets the same share and there is no tail wave. The reduction costs 5
// shuffle steps per warp and one barrier; dot_final is a few microseconds. The result is
// deterministic: the same order of additions on every run.
//
// Napkin maths: 1.07 GB at 4.8 TB/s = 224 us on the H200 (gold is 80%: 280 us).
// Measured on the H200: 240.45 us, 4465 GB/s: 93% of the 4.8 TB/s datasheet, 98% of the 4.56 TB/s
// DRAM read ceiling `warpbook probe` measures; gold. With the L2 flushed by writing instead of
// reading, the flush's dirty lines drain during the timed kernel and it takes 253.7 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 240.45 us on NVIDIA H200
// measured: 351.87 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=512
// @tune GRID=528

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// The block's total, valid in thread 0.
__device__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
    v = warp_sum(v);
  }
  return v;
}

extern "C" __global__ void dot_partial(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ partial, int n) {
  const float4* a4 = reinterpret_cast<const float4*>(a);
  const float4* b4 = reinterpret_cast<const float4*>(b);
  long long n4 = n >> 2;
  long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  float acc0 = 0.0f, acc1 = 0.0f;
  for (; i + stride < n4; i += 2 * stride) {
    float4 x0 = a4[i], y0 = b4[i], x1 = a4[i + stride], y1 = b4[i + stride];
    acc0 = fmaf(x0.x, y0.x, acc0);
    acc0 = fmaf(x0.y, y0.y, acc0);
    acc0 = fmaf(x0.z, y0.z, acc0);
    acc0 = fmaf(x0.w, y0.w, acc0);
    acc1 = fmaf(x1.x, y1.x, acc1);
    acc1 = fmaf(x1.y, y1.y, acc1);
    acc1 = fmaf(x1.z, y1.z, acc1);
    acc1 = fmaf(x1.w, y1.w, acc1);
  }
  if (i < n4) {
    float4 x0 = a4[i], y0 = b4[i];
    acc0 = fmaf(x0.x, y0.x, acc0);
    acc0 = fmaf(x0.y, y0.y, acc0);
    acc0 = fmaf(x0.z, y0.z, acc0);
    acc0 = fmaf(x0.w, y0.w, acc0);
  }
  // The last n % 4 elements: the first thread of the grid takes them.
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (long long k = n4 * 4; k < n; ++k) acc1 = fmaf(a[k], b[k], acc1);
  float s = block_sum(acc0 + acc1);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

extern "C" __global__ void dot_final(const float* __restrict__ partial, float* __restrict__ out,
                                     int parts) {
  float v = 0.0f;
  for (int k = threadIdx.x; k < parts; k += blockDim.x) v += partial[k];
  v = block_sum(v);
  if (threadIdx.x == 0) out[0] = v;
}
