// Solution · 30 FP8 e4m3 quantization with per-row scales
//
// What: one block of 512 threads per row. Each thread loads its part of the row as float4 (up to
// 4 vectors: 8192 columns in registers; scalars when cols % 4 != 0). A row with a static scale
// uses it; any other row takes its absolute maximum with one block reduction (xor shuffles + a
// shared exchange) and s = max(amax, 1e-10) / 448. Then, from the same registers, each float4
// becomes four e4m3 codes (x / s, then __nv_fp8x4_e4m3: two cvt.rn.satfinite.e4m3x2.f32 on
// sm_89 and later) stored as one 32-bit word.
// Run:  warpbook check 30-fp8-e4m3-quantize solutions/30-fp8-e4m3-quantize.cu
//       warpbook predict 30-fp8-e4m3-quantize solutions/30-fp8-e4m3-quantize.cu
//
// Why: the least traffic is 5 bytes per element (read x, write one byte of q) and this kernel
// moves exactly that: the row waits in registers while the block agrees on its maximum, so x is
// read once. All 4 float4 loads of a thread are issued before the first use (32 KiB per block in
// flight). The kernel moves few bytes per element, so the time between a block's last load and
// its exit (the reduction, 8192 divisions, the stores) is a large part of its life: more rows
// must be resident to keep DRAM busy. __launch_bounds__(512, 4) holds it to 32 registers (16 of
// them the row; no spills), so 4 rows share an SM at full occupancy; with 256 threads and 56
// registers only 4 blocks of half the size fit, and the model predicts 76% instead of 88%.
// The stores are 4 bytes a thread, 128 contiguous bytes a warp: whole lines. The saturating
// conversion is one instruction per pair of values on Hopper; the IEEE division (as the puzzle
// asks) costs a reciprocal and a few FMAs per element.
//
// Napkin maths: 16384 x 8192 x 5 B = 671 MB at 4.8 TB/s = 140 us on the H200 (gold is 75%: 186 us).
// Measured on the H200 (`warpbook check`): 154.24 us, 4.35 TB/s, about 95% of the speed of light
// against the ceilings `warpbook probe` measures; gold. With the L2 flushed by writing instead of
// reading, the flush's dirty lines drain during the timed kernel and it takes 162.18 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 154.24 us on NVIDIA H200
// measured: 216.93 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=512
#include <cuda_fp8.h>

#define MAXV 4 // float4 per thread in the vector path
#define MAXS 8 // floats per thread in the scalar path (cols % 4 != 0)

__device__ __forceinline__ float block_max(float v) {
  __shared__ float buf[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) buf[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < (BLOCK >> 5) ? buf[threadIdx.x & 31] : 0.0f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float amax4(float a, float4 v) {
  return fmaxf(fmaxf(a, fmaxf(fabsf(v.x), fabsf(v.y))), fmaxf(fabsf(v.z), fabsf(v.w)));
}

// The row's scale: the static one when it is > 0 (the same for the whole block, so the branch
// around the barrier is uniform), else the absmax one.
__device__ __forceinline__ float row_scale(float st, float amax) {
  if (st > 0.0f) return st;
  return fmaxf(block_max(amax), 1e-10f) / 448.0f;
}

extern "C" __global__ void __launch_bounds__(BLOCK, 2048 / BLOCK)
    fp8_quantize(const float* __restrict__ x, const float* __restrict__ static_scale,
                 __nv_fp8_e4m3* __restrict__ q, float* __restrict__ scale, int rows, int cols) {
  const long long base = (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  const float st = static_scale[blockIdx.x];

  if ((cols & 3) == 0 && cols <= 4 * MAXV * BLOCK) {
    const int n4 = cols >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(x + base);
    float4 v[MAXV];
    float amax = 0.0f;
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
      int i = t + k * BLOCK;
      if (i < n4) {
        v[k] = x4[i];
        amax = amax4(amax, v[k]);
      }
    }
    const float s = row_scale(st, amax);
    if (t == 0) scale[blockIdx.x] = s;
    __nv_fp8x4_e4m3* q4 = reinterpret_cast<__nv_fp8x4_e4m3*>(q + base);
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
      int i = t + k * BLOCK;
      if (i < n4)
        q4[i] = __nv_fp8x4_e4m3(make_float4(v[k].x / s, v[k].y / s, v[k].z / s, v[k].w / s));
    }
  } else if (cols <= MAXS * BLOCK) {
    float v[MAXS];
    float amax = 0.0f;
#pragma unroll
    for (int k = 0; k < MAXS; ++k) {
      int c = t + k * BLOCK;
      if (c < cols) {
        v[k] = x[base + c];
        amax = fmaxf(amax, fabsf(v[k]));
      }
    }
    const float s = row_scale(st, amax);
    if (t == 0) scale[blockIdx.x] = s;
#pragma unroll
    for (int k = 0; k < MAXS; ++k) {
      int c = t + k * BLOCK;
      if (c < cols) q[base + c] = __nv_fp8_e4m3(v[k] / s);
    }
  } else {
    // Too wide for registers: read x twice (the second time mostly from the L2).
    float amax = 0.0f;
    if (!(st > 0.0f))
      for (int c = t; c < cols; c += BLOCK) amax = fmaxf(amax, fabsf(x[base + c]));
    const float s = row_scale(st, amax);
    if (t == 0) scale[blockIdx.x] = s;
    for (int c = t; c < cols; c += BLOCK) q[base + c] = __nv_fp8_e4m3(x[base + c] / s);
  }
}
