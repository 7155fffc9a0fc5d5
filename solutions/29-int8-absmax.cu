// Solution · 29 int8 absmax quantization
//
// What: one block of 256 threads per row. Each thread loads its part of the row as float4 (up to
// 8 vectors: 8192 columns in registers; scalars when cols % 4 != 0), takes the absolute maximum,
// and one block reduction (xor shuffles + a shared exchange of the per-warp maxima) gives the
// row's amax. Then s = amax / 127, and from the same registers every thread writes
// q = clamp(rint(x / s), -127, 127) as one char4 (a 4-byte store) and y = q * s as one float4.
// Run:  warpbook check 29-int8-absmax solutions/29-int8-absmax.cu
//       warpbook predict 29-int8-absmax solutions/29-int8-absmax.cu
//
// Why: the least traffic is 9 bytes per element (read x, write a byte of q and four of y) and
// this kernel moves exactly that: x is read once, because the row waits in registers while the
// block agrees on its maximum. All 8 float4 loads of a thread are issued before the first use,
// so 32 KiB per block are in flight; 64 registers per thread let 4 blocks share an SM (528
// resident blocks on the H200's 132 SMs, 31 waves over 16384 rows). The division is IEEE
// (div.rn.f32, as the puzzle asks); it costs a reciprocal and two FMAs per element, hidden
// under the memory time.
//
// Napkin maths: 16384 x 8192 x 9 B = 1.21 GB at 4.8 TB/s = 252 us on the H200 (gold is 75%:
// 336 us).
// Measured on the H200 (`warpbook check`): 299.6 us, 4.03 TB/s, 88.5% of the speed of
// light against the ceilings `warpbook probe` measures; gold.
// measured: 299.62 us on NVIDIA H200
// measured: 404.77 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=256

#define MAXV 8  // float4 per thread in the vector path
#define MAXS 16 // floats per thread in the scalar path (cols % 4 != 0)

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

// q for one value: the IEEE quotient, rounded half to even (cvt.rni), clamped. s > 0.
__device__ __forceinline__ int quant(float v, float s) {
  return min(max(__float2int_rn(v / s), -127), 127);
}

__device__ __forceinline__ float amax4(float a, float4 v) {
  return fmaxf(fmaxf(a, fmaxf(fabsf(v.x), fabsf(v.y))), fmaxf(fabsf(v.z), fabsf(v.w)));
}

extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
    int8_absmax(const float* __restrict__ x, signed char* __restrict__ q, float* __restrict__ scale,
                float* __restrict__ y, int rows, int cols) {
  const long long base = (long long)blockIdx.x * cols;
  const int t = threadIdx.x;

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
    const float s = block_max(amax) / 127.0f;
    if (t == 0) scale[blockIdx.x] = s;
    char4* q4 = reinterpret_cast<char4*>(q + base);
    float4* y4 = reinterpret_cast<float4*>(y + base);
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
      int i = t + k * BLOCK;
      if (i < n4) {
        int a = 0, b = 0, c = 0, d = 0; // s == 0 (a row of zeros): q = 0
        if (s != 0.0f)
          a = quant(v[k].x, s), b = quant(v[k].y, s), c = quant(v[k].z, s), d = quant(v[k].w, s);
        q4[i] = make_char4((signed char)a, (signed char)b, (signed char)c, (signed char)d);
        y4[i] = make_float4(a * s, b * s, c * s, d * s);
      }
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
    const float s = block_max(amax) / 127.0f;
    if (t == 0) scale[blockIdx.x] = s;
#pragma unroll
    for (int k = 0; k < MAXS; ++k) {
      int c = t + k * BLOCK;
      if (c < cols) {
        int a = s != 0.0f ? quant(v[k], s) : 0;
        q[base + c] = (signed char)a;
        y[base + c] = a * s;
      }
    }
  } else {
    // Too wide for registers: read x twice (the second time mostly from the L2).
    float amax = 0.0f;
    for (int c = t; c < cols; c += BLOCK) amax = fmaxf(amax, fabsf(x[base + c]));
    const float s = block_max(amax) / 127.0f;
    if (t == 0) scale[blockIdx.x] = s;
    for (int c = t; c < cols; c += BLOCK) {
      int a = s != 0.0f ? quant(x[base + c], s) : 0;
      q[base + c] = (signed char)a;
      y[base + c] = a * s;
    }
  }
}
