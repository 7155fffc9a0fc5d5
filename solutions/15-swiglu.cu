// Solution · 15 SwiGLU
//
// What: each thread computes VEC = 8 outputs of one row as two float4 groups, BLOCK * 4 columns
// apart (512 contiguous bytes per warp instruction on every stream). It loads the gate and up
// vectors of both groups first (4 x 16 bytes in flight per thread), then computes
// silu(g) * u = g * u / (1 + exp(-g)) with __expf and __fdividef, and stores float4s. Widths that
// are not multiples of 4 use a scalar path.
// Run:  warpbook check 15-swiglu solutions/15-swiglu.cu
//
// Why: 12 bytes of traffic per output and no reuse: bandwidth-bound. Both halves of a row of gu
// start 16-byte aligned when cols % 4 == 0, so all three streams can use 16-byte accesses. The
// form g / (1 + exp(-g)) saturates correctly at both ends (exp(-g) -> Inf gives -0, -> 0 gives g).
//
// Napkin maths: 1.41 GB at 4.8 TB/s = 294 us on the H200 (gold is 75%: 392 us).
// Measured on the H200: 320.00 us, 4404 GB/s: 92% of the 4.8 TB/s datasheet, 97% of the 4.56 TB/s
// DRAM read ceiling `warpbook probe` measures; gold. With the L2 flushed by writing instead of
// reading, the flush's dirty lines drain during the timed kernel and it takes 326.66 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 320.00 us on NVIDIA H200
// measured: 456.42 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=256
// @tune VEC=8

__device__ __forceinline__ float swiglu1(float g, float u) {
  return __fdividef(g * u, 1.0f + __expf(-g));
}

extern "C" __global__ void swiglu(const float* __restrict__ gu, float* __restrict__ y, int rows,
                                  int cols) {
  const long long r = blockIdx.y;
  const float* gate = gu + r * 2 * cols;
  const float* up = gate + cols;
  float* out = y + r * cols;
  const int block_col = blockIdx.x * BLOCK * VEC;

  if (VEC % 4 == 0 && (cols & 3) == 0) {
    constexpr int CH = VEC / 4 > 0 ? VEC / 4 : 1;
    float4 g[CH], u[CH];
#pragma unroll
    for (int q = 0; q < CH; ++q) {
      int j = block_col + (q * BLOCK + threadIdx.x) * 4;
      if (j < cols) {
        g[q] = *reinterpret_cast<const float4*>(gate + j);
        u[q] = *reinterpret_cast<const float4*>(up + j);
      }
    }
#pragma unroll
    for (int q = 0; q < CH; ++q) {
      int j = block_col + (q * BLOCK + threadIdx.x) * 4;
      if (j < cols)
        *reinterpret_cast<float4*>(out + j) =
            make_float4(swiglu1(g[q].x, u[q].x), swiglu1(g[q].y, u[q].y), swiglu1(g[q].z, u[q].z),
                        swiglu1(g[q].w, u[q].w));
    }
  } else {
#pragma unroll
    for (int q = 0; q < VEC; ++q) {
      int j = block_col + q * BLOCK + threadIdx.x;
      if (j < cols) out[j] = swiglu1(gate[j], up[j]);
    }
  }
}
