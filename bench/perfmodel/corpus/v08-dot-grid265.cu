// Corpus · v08-dot-grid265 · designed limiter: tail
//
// What: exactly v08-dot-grid264 (float4 grid-stride dot_partial, 1024-thread blocks, then
// dot_final) with GRID = 265: one block more than two per SM on the H200's 132 SMs.
// Run:  warpbook check 08-dot-product bench/perfmodel/corpus/v08-dot-grid265.cu
//
// Why it is slower: two 1024-thread blocks fill an SM, so 264 blocks run in the first wave and
// block 265 cannot start until a whole block has left, i.e. until the first wave is practically
// done (the grid stride gives every block the same 1/265 of the work). It then runs alone: 4 MB
// with 1024 threads x 64 B = 64 KB in flight, ~100 GB/s at a ~0.6 us round trip, so ~40 us on
// top of the ~250 us first wave, while 131 SMs idle. Expected: ~15% slower than GRID = 264 for
// 0.4% more blocks; the difference is the wave tail (v08-dot-scalar-grid265 is the same effect
// with a latency-bound block, where the lone block cannot speed up and the tail is ~70%).
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

__device__ __forceinline__ float dot4(float4 p, float4 q, float acc) {
  acc = fmaf(p.x, q.x, acc);
  acc = fmaf(p.y, q.y, acc);
  acc = fmaf(p.z, q.z, acc);
  return fmaf(p.w, q.w, acc);
}

// __launch_bounds__ keeps the kernel within 32 registers so that two 1024-thread blocks share an
// SM.
extern "C" __global__ void __launch_bounds__(BLOCK, 2048 / BLOCK)
    dot_partial(const float* __restrict__ a, const float* __restrict__ b,
                float* __restrict__ partial, int n) {
  const float4* a4 = reinterpret_cast<const float4*>(a); // the buffers are 256-byte aligned
  const float4* b4 = reinterpret_cast<const float4*>(b);
  const long long n4 = n / 4;
  const long long step = (long long)gridDim.x * BLOCK;
  long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  float s0 = 0.0f, s1 = 0.0f;
  for (; i + step < n4; i += 2 * step) { // two float4 of each input in flight per thread
    const float4 p0 = a4[i], q0 = b4[i], p1 = a4[i + step], q1 = b4[i + step];
    s0 = dot4(p0, q0, s0);
    s1 = dot4(p1, q1, s1);
  }
  if (i < n4) s0 = dot4(a4[i], b4[i], s0);
  if (blockIdx.x == 0 && threadIdx.x == 0) // the last n % 4 elements
    for (long long k = n4 * 4; k < n; ++k) s1 = fmaf(a[k], b[k], s1);
  const float t = block_total(s0 + s1);
  if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

extern "C" __global__ void dot_final(const float* __restrict__ partial, float* __restrict__ out,
                                     int parts) {
  float v = 0.0f;
  for (int k = threadIdx.x; k < parts; k += BLOCK) v += partial[k];
  v = block_total(v);
  if (threadIdx.x == 0) out[0] = v;
}
