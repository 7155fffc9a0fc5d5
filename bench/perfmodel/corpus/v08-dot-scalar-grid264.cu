// Corpus · v08-dot-scalar-grid264 · designed limiter: latency
//
// What: the two-pass dot product with scalar grid-stride loads and a loop that is not unrolled:
// dot_partial runs GRID = 264 blocks of 1024 threads (two per SM on 132 SMs: one full wave), each
// thread does s = fmaf(a[i], b[i], s) for i = its index, + 264 x 1024, ...; the block reduces with
// shuffles; dot_final (one block) adds the 264 partial sums.
// Run:  warpbook check 08-dot-product bench/perfmodel/corpus/v08-dot-scalar-grid264.cu
//
// Why it is slow: each thread has one load pair (8 B) in flight and waits a full memory round trip
// per element: 2048 threads x 8 B = 16 KB outstanding per SM, where Little's law wants ~25 KB
// (4.8 TB/s x ~0.7 us / 132 SMs). Expected: ~50-65% of speed of light (1.07 GB), limited by
// latency; the baseline for v08-dot-scalar-grid265.
// @tune BLOCK=1024
// @tune GRID=264

// The block's total, valid in thread 0: a shuffle tree per warp, one shared exchange.
__device__ float block_total(float v) {
  __shared__ float part[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x >> 5) ? part[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

// __launch_bounds__ keeps the kernel within 32 registers so that two 1024-thread blocks share an
// SM.
extern "C" __global__ void __launch_bounds__(BLOCK, 2048 / BLOCK)
    dot_partial(const float* __restrict__ a, const float* __restrict__ b,
                float* __restrict__ partial, int n) {
  const long long step = (long long)gridDim.x * BLOCK;
  float s = 0.0f;
#pragma unroll 1
  for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += step)
    s = fmaf(a[i], b[i], s);
  const float t = block_total(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

extern "C" __global__ void dot_final(const float* __restrict__ partial, float* __restrict__ out,
                                     int parts) {
  float v = 0.0f;
  for (int k = threadIdx.x; k < parts; k += BLOCK) v += partial[k];
  v = block_total(v);
  if (threadIdx.x == 0) out[0] = v;
}
