// Solution · 13 LayerNorm
//
// What: one block of 256 threads per row. The row is loaded once into registers (float4 when
// cols % 4 == 0: up to 8 vectors per thread, i.e. 8192 columns; else up to 32 scalars), the mean
// and then the variance of (x - mean) are computed from the registers with two block reductions
// (xor shuffles + an 8-entry shared exchange), and y = (x - mean) * rstd * w + b is written with
// the same vector width. Rows wider than the register capacity fall back to re-reading x.
// Run:  warpbook check 13-layernorm solutions/13-layernorm.cu
//
// Why: the least traffic is 8 bytes per element; three passes over DRAM would be 16. With the
// row in registers the second and third passes cost no DRAM at all. The two-pass variance is exact
// where E[x^2] - E[x]^2 is not (the large-mean case). w and b are reloaded per row but hit the L2
// (32 KiB shared by all 16384 rows). __launch_bounds__ holds the kernel to 64 registers, so 4
// blocks (1024 threads) share an SM, each thread with 4 float4 loads in flight: 64 KB per SM,
// plenty to cover DRAM latency, and while one block waits at a barrier the others keep loading.
//
// Napkin maths: 537 MB at 4.8 TB/s = 112 us on the H200 (gold is 75%: 149 us).
// Measured on the H200: 132.4 us, 4056 GB/s: 84% of the 4.8 TB/s datasheet, 89% of
// the 4.56 TB/s DRAM ceiling measured by `warpbook probe`; gold.
// measured: 132.10 us on NVIDIA H200
// measured: 177.33 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=256

#define MAXV 8
#define MAXS 32

__device__ __forceinline__ float block_sum(float v, float* buf) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads(); // buf may still be read by the previous reduction
  if ((threadIdx.x & 31) == 0) buf[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < (BLOCK >> 5) ? buf[threadIdx.x & 31] : 0.0f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
    layernorm(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
              float* __restrict__ y, int rows, int cols, float eps) {
  __shared__ float buf[32];
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  const float inv_cols = 1.0f / cols;

  if ((cols & 3) == 0 && cols <= 4 * MAXV * BLOCK) {
    const int n4 = cols >> 2;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float4 v[MAXV];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < MAXV; ++k)
      if (t + k * BLOCK < n4) {
        v[k] = in4[t + k * BLOCK];
        s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
      }
    const float mean = block_sum(s, buf) * inv_cols;
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < MAXV; ++k)
      if (t + k * BLOCK < n4) {
        v[k].x -= mean, v[k].y -= mean, v[k].z -= mean, v[k].w -= mean;
        q += (v[k].x * v[k].x + v[k].y * v[k].y) + (v[k].z * v[k].z + v[k].w * v[k].w);
      }
    const float rstd = rsqrtf(block_sum(q, buf) * inv_cols + eps);
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
      int i = t + k * BLOCK;
      if (i < n4) {
        float4 g = reinterpret_cast<const float4*>(w)[i], h = reinterpret_cast<const float4*>(b)[i];
        reinterpret_cast<float4*>(out)[i] =
            make_float4(fmaf(v[k].x * rstd, g.x, h.x), fmaf(v[k].y * rstd, g.y, h.y),
                        fmaf(v[k].z * rstd, g.z, h.z), fmaf(v[k].w * rstd, g.w, h.w));
      }
    }
  } else if (cols <= MAXS * BLOCK) {
    float v[MAXS];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < MAXS; ++k)
      if (t + k * BLOCK < cols) s += (v[k] = in[t + k * BLOCK]);
    const float mean = block_sum(s, buf) * inv_cols;
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < MAXS; ++k)
      if (t + k * BLOCK < cols) {
        v[k] -= mean;
        q += v[k] * v[k];
      }
    const float rstd = rsqrtf(block_sum(q, buf) * inv_cols + eps);
#pragma unroll
    for (int k = 0; k < MAXS; ++k) {
      int c = t + k * BLOCK;
      if (c < cols) out[c] = fmaf(v[k] * rstd, w[c], b[c]);
    }
  } else {
    // Too wide for registers: the plain two-pass form, re-reading the row (from L2 when it fits).
    float s = 0.0f;
    for (int c = t; c < cols; c += BLOCK) s += in[c];
    const float mean = block_sum(s, buf) * inv_cols;
    float q = 0.0f;
    for (int c = t; c < cols; c += BLOCK) q += (in[c] - mean) * (in[c] - mean);
    const float rstd = rsqrtf(block_sum(q, buf) * inv_cols + eps);
    for (int c = t; c < cols; c += BLOCK) out[c] = fmaf((in[c] - mean) * rstd, w[c], b[c]);
  }
}
