// Held-out · h07-dot-grid66 · designed limiter: latency (a grid that fills half of the SMs)
//
// What: a scalar grid-stride dot product launched with GRID = 66 blocks of 512 threads, "one
// block per two SMs". Each thread walks its elements in a loop kept rolled (#pragma unroll 1):
// acc += a[i] * b[i], stride 66 x 512. Then warp shuffles, 16 warp sums in shared memory, and one
// partial per block; dot_final (one block) adds the 66 partials with the same reduction.
// Run:  warpbook check 08-dot-product bench/perfmodel/heldout/h07-dot-grid66.cu
//
// Why it should be latency-bound: 66 blocks land on 66 of the 132 SMs; the other half of the
// GPU idles. A busy SM holds 16 warps, each lane with one 8-byte load pair in flight (the FMA
// waits for the pair, and a warp issues in order, so the next pair starts only after it): ~4 KB
// outstanding per busy SM, ~270 KB in the whole GPU. At ~0.6-0.7 us of DRAM latency that is
// ~0.4-0.45 TB/s. At the timed n = 2^27 (1.07 GB read) each thread makes ~3970 trips.
// Expected: ~2.5 ms, ~10% of the DRAM ceiling.
// @tune BLOCK=512
// @tune GRID=66

__device__ float block_sum(float v, float* buf) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) buf[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = 0.0f;
  if (threadIdx.x == 0)
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) t += buf[w];
  return t; // valid in thread 0
}

extern "C" __global__ void dot_partial(const float* a, const float* b, float* partial, int n) {
  __shared__ float buf[32];
  const long long stride = (long long)gridDim.x * blockDim.x;
  float acc = 0.0f;
#pragma unroll 1
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    acc = fmaf(a[i], b[i], acc);
  const float t = block_sum(acc, buf);
  if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

extern "C" __global__ void dot_final(const float* partial, float* out, int parts) {
  __shared__ float buf[32];
  float acc = 0.0f;
  for (int k = threadIdx.x; k < parts; k += blockDim.x) acc += partial[k];
  const float t = block_sum(acc, buf);
  if (threadIdx.x == 0) out[0] = t;
}
