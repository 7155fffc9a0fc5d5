// Solution · 14 residual add + RMSNorm
//
// What: one block of 256 threads per row. Each thread loads x and res as float4 (up to 8 vectors
// each, 8192 columns; scalars when cols % 4 != 0), writes h = x + res at once, keeps h in
// registers and accumulates its sum of squares; one block reduction (xor shuffles + an 8-entry
// shared exchange) gives mean(h^2); then y = h * rstd * w is written from the registers.
// Run:  warpbook check 14-rmsnorm-residual solutions/14-rmsnorm-residual.cu
//
// Why: the least traffic is 16 bytes per element (two reads, two writes) and this kernel moves
// exactly that; w (16 KiB) is shared by every row and stays in the L2. The h stores are issued
// before the reduction, so they drain while the block waits at the barrier. 256 threads per row
// of 4096 columns means 4 float4 of x and 4 of res per thread, all loads in flight together;
// __launch_bounds__ keeps it to 64 registers so that 4 blocks share an SM.
//
// Napkin maths: 1.07 GB at 4.8 TB/s = 224 us on the H200 (gold is 75%: 299 us).
// Measured on the H200: 254.13 us, 4226 GB/s: 88% of the 4.8 TB/s datasheet, 93% of the 4.56 TB/s
// DRAM read ceiling `warpbook probe` measures; gold. With the L2 flushed by writing instead of
// reading, the flush's dirty lines drain during the timed kernel and it takes 259.52 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 254.13 us on NVIDIA H200
// measured: 357.57 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=256

#define MAXV 8
#define MAXS 16 // scalar path (cols % 4 != 0): 16 per thread keeps it within 64 registers

__device__ __forceinline__ float block_sum(float v) {
  __shared__ float buf[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) buf[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < (BLOCK >> 5) ? buf[threadIdx.x & 31] : 0.0f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
    rmsnorm_residual(const float* __restrict__ x, const float* __restrict__ res,
                     const float* __restrict__ w, float* __restrict__ h, float* __restrict__ y,
                     int rows, int cols, float eps) {
  const long long base = (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  const float inv_cols = 1.0f / cols;

  if ((cols & 3) == 0 && cols <= 4 * MAXV * BLOCK) {
    const int n4 = cols >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(x + base);
    const float4* r4 = reinterpret_cast<const float4*>(res + base);
    float4* h4 = reinterpret_cast<float4*>(h + base);
    float4 v[MAXV];
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
      int i = t + k * BLOCK;
      if (i < n4) {
        float4 a = x4[i], b = r4[i];
        v[k] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
        h4[i] = v[k];
        ss += (v[k].x * v[k].x + v[k].y * v[k].y) + (v[k].z * v[k].z + v[k].w * v[k].w);
      }
    }
    const float rstd = rsqrtf(block_sum(ss) * inv_cols + eps);
    float4* y4 = reinterpret_cast<float4*>(y + base);
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
      int i = t + k * BLOCK;
      if (i < n4) {
        float4 g = reinterpret_cast<const float4*>(w)[i];
        y4[i] = make_float4(v[k].x * rstd * g.x, v[k].y * rstd * g.y, v[k].z * rstd * g.z,
                            v[k].w * rstd * g.w);
      }
    }
  } else if (cols <= MAXS * BLOCK) {
    float v[MAXS];
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < MAXS; ++k) {
      int c = t + k * BLOCK;
      if (c < cols) {
        v[k] = x[base + c] + res[base + c];
        h[base + c] = v[k];
        ss += v[k] * v[k];
      }
    }
    const float rstd = rsqrtf(block_sum(ss) * inv_cols + eps);
#pragma unroll
    for (int k = 0; k < MAXS; ++k) {
      int c = t + k * BLOCK;
      if (c < cols) y[base + c] = v[k] * rstd * w[c];
    }
  } else {
    // Too wide for registers: write h, then re-read it for y (from the L2 when the row fits).
    float ss = 0.0f;
    for (int c = t; c < cols; c += BLOCK) {
      float v = x[base + c] + res[base + c];
      h[base + c] = v;
      ss += v * v;
    }
    const float rstd = rsqrtf(block_sum(ss) * inv_cols + eps);
    for (int c = t; c < cols; c += BLOCK) y[base + c] = h[base + c] * rstd * w[c];
  }
}
