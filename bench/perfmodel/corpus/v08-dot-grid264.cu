// Corpus · v08-dot-grid264 · designed limiter: dram
//
// What: the two-pass dot product with float4 grid-stride loads: dot_partial runs GRID = 264
// blocks of 1024 threads, each thread walks a and b as float4 with a stride of the whole grid,
// two float4 of each input per iteration into two accumulators, then the block reduces (5
// shuffle steps, one shared exchange of 32 warp sums); dot_final (one block) adds the 264
// partial sums.
// Run:  warpbook check 08-dot-product bench/perfmodel/corpus/v08-dot-grid264.cu
//
// Why: 264 = 2 x 132, so with two 1024-thread blocks per SM (<= 32 registers, forced by
// __launch_bounds__) the grid is exactly one full wave and every SM reads the same share. Each
// thread has 4 x 16 B = 64 B of loads in flight: 128 KB per SM, five times what Little's law
// asks for. 8 B per FMA pair, so HBM sets the time: 1.07 GB, expected ~85-90% of the 4.8 TB/s
// datasheet, like the solution (528 x 512).
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
