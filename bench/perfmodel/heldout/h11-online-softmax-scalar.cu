// Held-out · h11-online-softmax-scalar · designed limiter: dram
//
// What: one 256-thread block per row (fixed by the puzzle). Thread t loads its elements
// t, t + 256, ... (up to 32 of them, cols <= 8192) with scalar loads into a fully unrolled
// register array, each load guarded, so each element is read once. While loading it keeps an
// online (max, sum) pair, rescaling per element: m' = max(m, v), s = s * exp(m - m') +
// exp(v - m'). Pairs are merged across the warp with shuffles and across the 8 warps in shared
// memory; then y = exp(v - max) / sum from the registers. Accurate expf throughout.
// Run:  warpbook check 12-online-softmax bench/perfmodel/heldout/h11-online-softmax-scalar.cu
//
// Why it should be DRAM-bound: 8 B per element (537 MB at the timed 8192 x 8192, ~140 us at the
// read+write ceiling) and all 32 loads of a thread are issued before the math (128 B in flight
// per thread). The compute is heavier than it needs to be: 3 expf per element (~30 instructions
// and 3 MUFU.EX2) plus the max/rescale, ~40 instructions per element: ~80 us of issue and ~50 us
// of MUFU at the timed size, both under the DRAM time. 64 registers per thread leave 4 resident
// blocks (1024 threads) per SM, still 128 KB of loads in flight; the per-thread online update is
// a serial chain of 32 rescales, covered by the other 31 warps.
#define PER_THREAD 32 // 8192 / 256

__device__ __forceinline__ void merge(float& m, float& s, float om, float os) {
  if (om == -INFINITY) return; // the other side has no elements
  const float nm = fmaxf(m, om);
  s = s * expf(m - nm) + os * expf(om - nm); // m may be -INFINITY: exp(-inf) = 0
  m = nm;
}

extern "C" __global__ void online_softmax(const float* x, float* y, int rows, int cols) {
  __shared__ float wm[8], ws[8];
  if (cols > PER_THREAD * 256) __trap();
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;

  float v[PER_THREAD];
#pragma unroll
  for (int k = 0; k < PER_THREAD; ++k) {
    const int c = threadIdx.x + k * 256;
    v[k] = c < cols ? in[c] : -INFINITY;
  }
  float m = -INFINITY, s = 0.0f;
#pragma unroll
  for (int k = 0; k < PER_THREAD; ++k)
    if (threadIdx.x + k * 256 < cols) merge(m, s, v[k], 1.0f);

  for (int o = 16; o > 0; o >>= 1) {
    const float om = __shfl_xor_sync(0xffffffffu, m, o);
    const float os = __shfl_xor_sync(0xffffffffu, s, o);
    merge(m, s, om, os);
  }
  if ((threadIdx.x & 31) == 0) {
    wm[threadIdx.x >> 5] = m;
    ws[threadIdx.x >> 5] = s;
  }
  __syncthreads();
  m = wm[0];
  s = ws[0];
  for (int w = 1; w < 8; ++w) merge(m, s, wm[w], ws[w]);

  const float inv = 1.0f / s;
#pragma unroll
  for (int k = 0; k < PER_THREAD; ++k) {
    const int c = threadIdx.x + k * 256;
    if (c < cols) out[c] = expf(v[k] - m) * inv;
  }
}
