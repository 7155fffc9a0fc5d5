// Solution · 36 cross-entropy forward and backward, in place over the logits
//
// What: three launches. xent_count (one block) counts the rows whose target is not -100 with
// __syncthreads_count and leaves n and 1/n in the workspace. xent_rows, one block of 1024 threads
// per row, makes two passes over the row:
//   1. the statistics: each thread streams its share in 16-byte loads (8 bf16, four loads in
//      flight), keeps an online log-sum-exp pair (m, s) in base 2 (x log2 e, so each exponential
//      is one ex2), and copies the first CACHE bytes of the row into shared memory as it goes;
//      the 1024 pairs merge (shuffles, then one exchange through shared memory) into lse, and
//      the row's loss lse - z[t] goes to the workspace;
//   2. the gradient: (2^(x - lse) - [j == t]) / n in f32, rounded once to bf16 and stored over
//      the logits, 16 bytes at a time: first the part of the row that was not kept (the part
//      read last, so still in the L2), then the part kept in shared memory. A thread reads back
//      only what it wrote itself, so the cache needs no barrier.
// An ignored row writes zeros over itself without reading it. xent_mean (one block) adds the
// rows' losses in a fixed order and multiplies by 1/n: the loss is the same bits on every run.
// Run:  warpbook check 36-cross-entropy-fwd-bwd solutions/36-cross-entropy-fwd-bwd.cu
//       warpbook predict 36 solutions/36-cross-entropy-fwd-bwd.cu --gpu h100-sxm
//
// Why: the least traffic is the logits read once and the gradient written once, 4 bytes per
// logit. One read would need the row on chip between the passes: at V = 128256 a row is 256.5 KB
// of bf16, more than an SM's 228 KB of shared memory. So this kernel reads z twice, but only
// once from DRAM: 160 KB of each row comes back from shared memory and the other 96.5 KB from the
// L2, where it arrived moments before (132 rows in flight hold 12.7 MB of un-kept tails, well
// inside the L2). Without the shared-memory copy the second read relies on the L2 keeping 132
// whole rows (34 MB), at the edge of what it holds. The gradient's denominator is counted first
// (one block over 16 KB of targets, 5 us predicted) so that dz is scaled in its one write; adding
// the loss with atomics and counting n alongside would leave dz to be scaled afterwards, a second
// read and write of the whole gradient (2.1 GB more at the perf size, about twice the time).
// Numerics: f32 throughout, bf16 only at the store; exp2f of (x - lse) in log2 units is ex2.approx
// (2 ulp); the merge skips the rescale of a side whose max is the new max, so the (-inf, 0)
// identity never makes 2^(-inf + inf) = NaN.
//
// Measured on an H100 80GB HBM3 (`warpbook check`, ceilings from `warpbook probe`): 753.5 us,
// 2.79 TB/s, 87.9% of the speed of light, gold (predicted by `warpbook predict --gpu h100-sxm`:
// 829 us). The alternatives, measured there with `warpbook tune`: CACHE = 212992 786 us, 98304
// 802 us, 0 (the second read all from the L2) 925 us; BLOCK = 512 (two blocks an SM where the
// shared memory allows) 830-1070 us. Side by side on the same H100, L2 flushed before each run:
// eager PyTorch (log_softmax and nll_loss in f32, then their backward: at least 36 bytes per
// logit in six kernels) 8965 us, 11.9x slower; the Triton form (README: this kernel with
// CACHE = 0, 32768 logits a chunk) 987 us, 1.31x slower. Predicted only: streaming stores
// (__stcs) for the gradient lose 2% on the H200.
// One `warpbook tune` on the H100 put CACHE = 196608 ahead: 727 us against this file's 747 us in
// the same call (212992 782 us, 98304 791 us). Not yet measured on the H200, where this file is
// silver (below).
// On an NVIDIA H200 (`warpbook check` in the gpu test): 640.58 us, 72.0% of the speed of light
// `warpbook probe` measures there: silver, short of the 75% gold bar.
// measured: 640.58 us on NVIDIA H200
// measured: 753.50 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=1024
// @tune CACHE=163840

#include <cuda_bf16.h>

#define UNROLL 4
#define LOG2E 1.4426950408889634f

// work[]: the rows' losses in [0, T); the count n and 1/n after them.
__device__ __forceinline__ float* counts(float* work, int T) {
  return work + 2 * T;
}

extern "C" __global__ void __launch_bounds__(1024)
    xent_count(__nv_bfloat16* z, const int* __restrict__ y, float* loss, float* work, int T,
               int V) {
  int n = 0;
  for (int r0 = 0; r0 < T; r0 += blockDim.x) {
    const int r = r0 + threadIdx.x;
    n += __syncthreads_count(r < T && y[r] != -100);
  }
  if (threadIdx.x == 0) {
    counts(work, T)[0] = (float)n;
    counts(work, T)[1] = n > 0 ? 1.0f / (float)n : 0.0f;
  }
}

// (m, s): m the largest logit seen (in log2 units), s = sum 2^(x - m). Merged without
// 2^(-inf - -inf) = NaN: a side whose max is the new max is not rescaled.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  const float M = fmaxf(m, m2);
  s = (m == M ? s : s * exp2f(m - M)) + (m2 == M ? s2 : s2 * exp2f(m2 - M));
  m = M;
}

__device__ __forceinline__ void unpack(uint4 v, float f[8]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 p = __bfloat1622float2(h[k]);
    f[2 * k] = p.x * LOG2E, f[2 * k + 1] = p.y * LOG2E;
  }
}

// dz for 8 logits starting at column j: (2^(x - lse) - [col == t]) / n, rounded once.
__device__ __forceinline__ uint4 grad8(uint4 v, float lse, float inv_n, int j, int t) {
  float f[8];
  unpack(v, f);
  uint4 out;
  __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    float a = exp2f(f[2 * k] - lse) * inv_n, b = exp2f(f[2 * k + 1] - lse) * inv_n;
    if (j + 2 * k == t) a -= inv_n;
    if (j + 2 * k + 1 == t) b -= inv_n;
    o[k] = __floats2bfloat162_rn(a, b);
  }
  return out;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    xent_rows(__nv_bfloat16* __restrict__ z, const int* __restrict__ y, float* loss,
              float* __restrict__ work, int T, int V) {
  extern __shared__ uint4 cache[]; // the row's first CACHE bytes, kept from the first pass
  const int r = blockIdx.x, tid = threadIdx.x;
  const int t = y[r];
  __nv_bfloat16* x = z + (long long)r * V;
  // The row's first 16-byte boundary: buffers are 256-byte aligned, row r starts at element r V.
  const int head = min((int)((-(long long)r * V) & 7), V);
  uint4* body = reinterpret_cast<uint4*>(x + head);
  const int n8 = (V - head) >> 3, tail = head + 8 * n8;
  const __nv_bfloat16 zero = __float2bfloat16(0.0f);

  if (t == -100) { // ignored: no loss, and a gradient of 0 written over the row unread
    if (tid == 0) work[r] = 0.0f;
    for (int i = tid; i < n8; i += BLOCK) body[i] = make_uint4(0, 0, 0, 0);
    if (tid < head) x[tid] = zero;
    if (tail + tid < V) x[tail + tid] = zero;
    return;
  }
  const float inv_n = counts(work, T)[1];
  const float xt = tid == 0 ? __bfloat162float(x[t]) * LOG2E : 0.0f; // in flight with the stream
  const int nc = min(n8, (int)(CACHE / 16));

  // Pass 1: the online log-sum-exp, in base 2, over 8 UNROLL logits a step.
  float m = -INFINITY, s = 0.0f;
  int i = tid;
  for (; i + (UNROLL - 1) * BLOCK < n8; i += UNROLL * BLOCK) {
    uint4 v[UNROLL];
#pragma unroll
    for (int q = 0; q < UNROLL; ++q) v[q] = body[i + q * BLOCK];
#pragma unroll
    for (int q = 0; q < UNROLL; ++q)
      if (i + q * BLOCK < nc) cache[i + q * BLOCK] = v[q];
    float f[UNROLL][8];
    float M = m;
#pragma unroll
    for (int q = 0; q < UNROLL; ++q) {
      unpack(v[q], f[q]);
#pragma unroll
      for (int k = 0; k < 8; ++k) M = fmaxf(M, f[q][k]);
    }
    float acc = 0.0f;
#pragma unroll
    for (int q = 0; q < UNROLL; ++q)
#pragma unroll
      for (int k = 0; k < 8; ++k) acc += exp2f(f[q][k] - M);
    s = (m == M ? s : s * exp2f(m - M)) + acc;
    m = M;
  }
  for (; i < n8; i += BLOCK) {
    const uint4 v = body[i];
    if (i < nc) cache[i] = v;
    float f[8];
    unpack(v, f);
    float M = m;
#pragma unroll
    for (int k = 0; k < 8; ++k) M = fmaxf(M, f[k]);
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k) acc += exp2f(f[k] - M);
    s = (m == M ? s : s * exp2f(m - M)) + acc;
    m = M;
  }
  float xh = 0.0f, xtl = 0.0f; // the unaligned ends: up to 7 logits before the body, 7 after
  if (tid < head) xh = __bfloat162float(x[tid]) * LOG2E, merge(m, s, xh, 1.0f);
  if (tail + tid < V) xtl = __bfloat162float(x[tail + tid]) * LOG2E, merge(m, s, xtl, 1.0f);

  // The block's pairs, merged: within each warp, then the warps' results.
  __shared__ float bm[BLOCK / 32], bs[BLOCK / 32], row_lse;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  const int lane = tid & 31, warp = tid >> 5;
  if (lane == 0) bm[warp] = m, bs[warp] = s;
  __syncthreads();
  if (warp == 0) {
    m = lane < BLOCK / 32 ? bm[lane] : -INFINITY;
    s = lane < BLOCK / 32 ? bs[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
    if (lane == 0) {
      const float lse = m + log2f(s); // base 2
      row_lse = lse;
      work[r] = (m - xt + log2f(s)) * (1.0f / LOG2E); // natural log: the row's loss
    }
  }
  __syncthreads(); // every logit has been read (and x[t] too) before any is overwritten
  const float lse = row_lse;

  // Pass 2: the gradient, over the body that was not kept first (read last, so still in the
  // L2), then the part kept in shared memory.
  for (int j = nc + tid; j < n8; j += BLOCK) body[j] = grad8(body[j], lse, inv_n, head + 8 * j, t);
  for (int j = tid; j < nc; j += BLOCK) body[j] = grad8(cache[j], lse, inv_n, head + 8 * j, t);
  if (tid < head) x[tid] = __float2bfloat16(exp2f(xh - lse) * inv_n - (tid == t ? inv_n : 0.0f));
  if (tail + tid < V)
    x[tail + tid] = __float2bfloat16(exp2f(xtl - lse) * inv_n - (tail + tid == t ? inv_n : 0.0f));
}

extern "C" __global__ void __launch_bounds__(1024)
    xent_mean(__nv_bfloat16* z, const int* y, float* loss, float* work, int T, int V) {
  __shared__ float part[32];
  float s = 0.0f;
  for (int r = threadIdx.x; r < T; r += blockDim.x) s += work[r];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) loss[0] = s * counts(work, T)[1]; // 0 when every row is ignored
  }
}
