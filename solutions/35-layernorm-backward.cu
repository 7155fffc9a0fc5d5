// Solution · 35 LayerNorm backward: dx, dgamma, dbeta (bf16 x, dy and dx; f32 inside)
//
// What: ln_bwd_dx gives each of its 264 blocks (2 per SM on a 132-SM H100 or H200) a contiguous
// stripe of M / 264 rows. Thread t of the 512 owns columns 8t .. 8t + 7 of every row in the
// stripe: it loads them as one 16-byte vector of x and one of dy, widens bf16 to f32 with a shift
// or a mask, and adds its eight x-hat * g and g into the two row sums; a warp shuffle tree and one
// shared exchange of the 16 warps' sums give c1 and c2, and the thread writes its 8 dx as one
// 16-byte store. Its eight dgamma and eight dbeta sums stay in registers for the whole stripe, so
// the block writes its partial column sums once, at the end (2 x N floats). The next row's
// vectors are loaded before this row's reduction, so the barrier never leaves the SM without loads
// in flight. ln_bwd_dgamma then adds the 264 partials of each column: 32 columns a block of 32
// warps, each warp reading every 32nd partial row with 128-byte coalesced loads.
// Rows that are not 16-byte aligned (N % 8 != 0) or wider than 8 * BLOCK take a plain loop that
// reads each row twice (the second time from the L1 or L2) and keeps the column sums in the
// block's slice of the workspace: correct for every N, not tuned.
// Run:  warpbook check 35-layernorm-backward solutions/35-layernorm-backward.cu
//       warpbook predict 35-layernorm-backward solutions/35-layernorm-backward.cu --gpu h100-sxm
//
// Why: the least traffic is 6 bytes per element (x and dy in, dx out), 403 MB at the perf size
// (M 16384, N 4096): 120 us at the H100's 3.35 TB/s, 84 us at the H200's 4.8 TB/s. The weight
// gradients are column sums over M rows, so the kernel's only real choice is how to sum columns.
// An atomicAdd into dgamma per element would send M * N = 67 million atomics to 4096 addresses
// and let the order of the adds (so their rounding) change from run to run. One partial row per
// block instead costs 264 x 4096 x 8 bytes = 8.7 MB, written and read back: 4% more traffic, and
// the same bits on every run. Predicted on the H100 (`--gpu h100-sxm`): 155 us, 84% of the speed
// of light (gold); ln_bwd_dx 149 us, with the DRAM busy 141 us of them, ln_bwd_dgamma 6.3 us.
// Predicted on the H200: 109 us, 81% (gold). Measured on an NVIDIA H100 80GB HBM3 (`warpbook
// check`, ceilings probed): 149.89 us, 2.69 TB/s, 84.7% of the speed of light, gold. Beside it
// in the same run (scripts/puzzles_vs_torch.py, L2 flushed): PyTorch's
// native_layer_norm_backward 323.1 us, 2.15x slower (its CUDA code computes dx and the weight
// gradients in separate kernels, each reading x and dy), the Triton form in the README 160.0 us,
// 1.07x slower.
//
// What loses: measured on the H100 (`warpbook tune`), GRID = 528: 160 us (twice the partial
// sums), 396: 168 us (1.5 waves of 2 blocks an SM), 132: 171 us (one block an SM, half the
// warps), against 149 us at 264. Predicted on the H100: the same kernel without the one-row-ahead
// loads, two rows a barrier instead: 177 us (the barriers then hold 35% of the warps' time with
// nothing in flight). Measured on the H100: two rows' loads ahead instead of one, 194.4 us (64
// registers and 28 bytes of spills: the third row of vectors does not fit).
// __launch_bounds__(512, 4) caps the kernel at 32 registers, which spills and gains nothing: 264
// blocks fill only 2 of the 4 slots an SM would then have. A second vector per
// thread (N up to 16 * BLOCK in registers) spills at 64 registers; wide rows take the plain loop
// instead. ln_bwd_dgamma with 8 warps a block instead of 32: 8.7 us instead of 6.3 us (too few
// loads in flight to read 8.7 MB quickly).
// On an NVIDIA H200 (`warpbook check` in the gpu test): 113.09 us, 78.1% of the speed of light
// `warpbook probe` measures there: silver, short of the 80% gold bar.
// measured: 113.09 us on NVIDIA H200
// measured: 149.89 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=512
// @tune GRID=264

#include <cuda_bf16.h>

#define WARPS (BLOCK / 32)

// bf16 is the top half of an f32: widening is a shift or a mask, no conversion instruction.
__device__ __forceinline__ float lo_bf16(unsigned u) {
  return __uint_as_float(u << 16);
}
__device__ __forceinline__ float hi_bf16(unsigned u) {
  return __uint_as_float(u & 0xffff0000u);
}
__device__ __forceinline__ unsigned pack_bf16(float a, float b) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<unsigned*>(&h);
}

__device__ __forceinline__ void unpack8(uint4 v, float* f) {
  f[0] = lo_bf16(v.x), f[1] = hi_bf16(v.x), f[2] = lo_bf16(v.y), f[3] = hi_bf16(v.y);
  f[4] = lo_bf16(v.z), f[5] = hi_bf16(v.z), f[6] = lo_bf16(v.w), f[7] = hi_bf16(v.w);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The fast path: N a multiple of 8 (rows 16-byte aligned) and at most 8 * BLOCK columns.
__device__ __forceinline__ void rows_vec(const uint4* __restrict__ x, const uint4* __restrict__ dy,
                                         const uint4* __restrict__ gamma,
                                         const float* __restrict__ mean,
                                         const float* __restrict__ rstd, uint4* __restrict__ dx,
                                         float* __restrict__ part, int r0, int r1, int N) {
  __shared__ float2 red[2][WARPS]; // per warp: (sum of x-hat g, sum of g), two rows' worth
  const int t = threadIdx.x, nv = N >> 3;
  const bool mine = t < nv; // threads past the row's last vector only join the reductions
  const float inv_n = 1.0f / N;
  float gam[8], ag[8], ab[8];
  unpack8(mine ? gamma[t] : make_uint4(0, 0, 0, 0), gam);
#pragma unroll
  for (int e = 0; e < 8; ++e) ag[e] = ab[e] = 0.0f;
  // Zeros for a row past the stripe or a vector past the row: they add nothing to any sum.
  auto load = [&](int r, uint4& xs, uint4& ds, float& m, float& q) {
    const bool row = r < r1;
    m = row ? mean[r] : 0.0f;
    q = row ? rstd[r] : 0.0f;
    xs = row && mine ? x[(long long)r * nv + t] : make_uint4(0, 0, 0, 0);
    ds = row && mine ? dy[(long long)r * nv + t] : make_uint4(0, 0, 0, 0);
  };
  uint4 xv, dv;
  float mu, rs;
  load(r0, xv, dv, mu, rs);
  int buf = 0;
  for (int r = r0; r < r1; ++r, buf ^= 1) {
    uint4 xn, dn;
    float mun, rsn;
    load(r + 1, xn, dn, mun, rsn); // the next row loads while this one is reduced and written
    float xf[8], df[8];
    unpack8(xv, xf);
    unpack8(dv, df);
    const float nmr = -mu * rs;
    float s1 = 0.0f, s2 = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const float xh = fmaf(xf[e], rs, nmr), g = gam[e] * df[e];
      s1 = fmaf(xh, g, s1);
      s2 += g;
    }
    s1 = warp_sum(s1);
    s2 = warp_sum(s2);
    if ((t & 31) == 0) red[buf][t >> 5] = make_float2(s1, s2);
    // One barrier a row: the buffer written here was last read two rows ago, before the barrier
    // of the row in between.
    __syncthreads();
    float c1 = 0.0f, c2 = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) c1 += red[buf][w].x, c2 += red[buf][w].y;
    // dx = rs (g - c2 - x-hat c1) = g rs - rs c2 - x-hat (rs c1): two FMAs an element.
    const float a = -rs * c1 * inv_n, b = -rs * c2 * inv_n;
    if (mine) {
      float o[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float xh = fmaf(xf[e], rs, nmr);
        o[e] = fmaf(xh, a, fmaf(gam[e] * df[e], rs, b));
        ag[e] = fmaf(df[e], xh, ag[e]);
        ab[e] += df[e];
      }
      dx[(long long)r * nv + t] = make_uint4(pack_bf16(o[0], o[1]), pack_bf16(o[2], o[3]),
                                             pack_bf16(o[4], o[5]), pack_bf16(o[6], o[7]));
    }
    xv = xn, dv = dn, mu = mun, rs = rsn;
  }
  if (mine) {
    float4* pg = reinterpret_cast<float4*>(part + (long long)blockIdx.x * 2 * N);
    float4* pb = pg + (N >> 2);
    pg[2 * t] = make_float4(ag[0], ag[1], ag[2], ag[3]);
    pg[2 * t + 1] = make_float4(ag[4], ag[5], ag[6], ag[7]);
    pb[2 * t] = make_float4(ab[0], ab[1], ab[2], ab[3]);
    pb[2 * t + 1] = make_float4(ab[4], ab[5], ab[6], ab[7]);
  }
}

// Any other N (odd, or wider than the registers hold): each row is read twice (the second time
// from the L1 or L2), and the block's column sums live in its own slice of `part`.
__device__ __noinline__ void
rows_any(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ dy,
         const __nv_bfloat16* __restrict__ gamma, const float* __restrict__ mean,
         const float* __restrict__ rstd, __nv_bfloat16* __restrict__ dx, float* __restrict__ part,
         int r0, int r1, int N) {
  __shared__ float2 red[2][WARPS];
  const int t = threadIdx.x;
  const float inv_n = 1.0f / N;
  float* pg = part + (long long)blockIdx.x * 2 * N;
  float* pb = pg + N;
  for (int c = t; c < N; c += BLOCK) pg[c] = pb[c] = 0.0f;
  int buf = 0;
  for (int r = r0; r < r1; ++r, buf ^= 1) {
    const long long base = (long long)r * N;
    const float mu = mean[r], rs = rstd[r];
    float s1 = 0.0f, s2 = 0.0f;
    for (int c = t; c < N; c += BLOCK) {
      const float xh = (__bfloat162float(x[base + c]) - mu) * rs;
      const float g = __bfloat162float(gamma[c]) * __bfloat162float(dy[base + c]);
      s1 = fmaf(xh, g, s1);
      s2 += g;
    }
    s1 = warp_sum(s1);
    s2 = warp_sum(s2);
    if ((t & 31) == 0) red[buf][t >> 5] = make_float2(s1, s2);
    __syncthreads();
    float c1 = 0.0f, c2 = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) c1 += red[buf][w].x, c2 += red[buf][w].y;
    c1 *= inv_n;
    c2 *= inv_n;
    for (int c = t; c < N; c += BLOCK) {
      const float xh = (__bfloat162float(x[base + c]) - mu) * rs;
      const float d = __bfloat162float(dy[base + c]);
      const float g = __bfloat162float(gamma[c]) * d;
      dx[base + c] = __float2bfloat16_rn(rs * (g - c2 - xh * c1));
      pg[c] = fmaf(d, xh, pg[c]);
      pb[c] += d;
    }
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
    ln_bwd_dx(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ dy,
              const __nv_bfloat16* __restrict__ gamma, const float* __restrict__ mean,
              const float* __restrict__ rstd, __nv_bfloat16* __restrict__ dx, float* dgamma,
              float* dbeta, float* __restrict__ part, int M, int N, int parts) {
  const int r0 = (int)((long long)blockIdx.x * M / parts);
  const int r1 = (int)((long long)(blockIdx.x + 1) * M / parts);
  const int nv = N >> 3;
  if ((N & 7) == 0 && nv <= BLOCK)
    rows_vec(reinterpret_cast<const uint4*>(x), reinterpret_cast<const uint4*>(dy),
             reinterpret_cast<const uint4*>(gamma), mean, rstd, reinterpret_cast<uint4*>(dx), part,
             r0, r1, N);
  else
    rows_any(x, dy, gamma, mean, rstd, dx, part, r0, r1, N);
}

// Stage 2: 32 columns a block; each of the 32 warps adds every 32nd part (coalesced: a warp
// reads 128 contiguous bytes of a part), then one shared exchange adds the warps' sums.
extern "C" __global__ void __launch_bounds__(1024)
    ln_bwd_dgamma(const __nv_bfloat16* x, const __nv_bfloat16* dy, const __nv_bfloat16* gamma,
                  const float* mean, const float* rstd, __nv_bfloat16* dx,
                  float* __restrict__ dgamma, float* __restrict__ dbeta,
                  const float* __restrict__ part, int M, int N, int parts) {
  __shared__ float sg[32][33], sb[32][33];
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5, c = blockIdx.x * 32 + tx;
  float g = 0.0f, b = 0.0f;
  if (c < N) {
#pragma unroll 4
    for (int p = ty; p < parts; p += 32) {
      g += part[(long long)p * 2 * N + c];
      b += part[(long long)p * 2 * N + N + c];
    }
  }
  sg[tx][ty] = g; // transposed: warp w then adds row w with shuffles
  sb[tx][ty] = b;
  __syncthreads();
  g = warp_sum(sg[ty][tx]);
  b = warp_sum(sb[ty][tx]);
  const int cc = blockIdx.x * 32 + ty;
  if (tx == 0 && cc < N) {
    dgamma[cc] = g;
    dbeta[cc] = b;
  }
}
