// Corpus · v08-dot-scalar-grid265 · designed limiter: tail
//
// What: exactly v08-dot-scalar-grid264 (scalar grid-stride loop, not unrolled, 1024-thread blocks)
// with GRID = 265: one block more than two per SM on the H200's 132 SMs.
// Run:  warpbook check 08-dot-product bench/perfmodel/corpus/v08-dot-scalar-grid265.cu
//
// Why it is slow: 264 blocks fill the GPU (two 1024-thread blocks per SM), and block 265, which
// has the same 1/265 of the work as every other block (grid stride), starts only when the first
// wave is practically over. Unlike the float4 version (v08-dot-grid265), a block's speed here is
// set by its own 1024 x 8 B = 8 KB in flight, so running alone barely helps it: ~8 KB per ~0.5 us
// unloaded round trip ~ 16 GB/s, against ~11 GB/s per block inside the full wave. The lone block
// then needs ~70% of the first wave's time again while 131 SMs idle. Expected: ~1.6-1.8x the
// time of GRID = 264 for 0.4% more work: the wave tail dominates the difference.
// @tune BLOCK=1024
// @tune GRID=265

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
