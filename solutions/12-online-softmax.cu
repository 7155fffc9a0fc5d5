// Solution · 12 online softmax
//
// What: one block of 256 threads per row. Each thread loads its elements exactly once into
// registers (as float4 when rows are 16-byte aligned: up to 8 vectors = 32 floats for 8192
// columns; else up to 32 scalars), computes its own max m_t and s_t = sum exp(v - m_t) keeping the
// exponentials in the same registers, then the block reduces the pairs (m, s) in a single pass
// (5 xor-shuffle steps, one 8-entry shared exchange, 5 more). The output is e * (exp(m_t - M) / S):
// one exponential per element in all.
// Run:  warpbook check 12-online-softmax solutions/12-online-softmax.cu
//
// Why: softmax needs only 8 bytes of traffic per element; the budget (8 loads per thread at 2048
// columns) enforces one read. With the row in registers, the only question left is the on-chip
// work: one reduction instead of two halves the barriers, and reusing exp(v - m_t) halves the
// exponentials. The pair merge skips the rescale when m1 == M, so the identity (-inf, 0) never
// produces exp(-inf + inf) = NaN. __expf (ex2.approx) is accurate to ~2 ulp, far inside 1e-4.
//
// Napkin maths: 537 MB at 4.8 TB/s = 112 us on the H200 (gold is 75%: 149 us).
// Measured on the H200: 130.14 us, 4125 GB/s: 86% of the 4.8 TB/s datasheet, 90% of the 4.56 TB/s
// DRAM read ceiling `warpbook probe` measures; gold. With the L2 flushed by writing instead of
// reading, the flush's dirty lines drain during the timed kernel and it takes 133.9 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 130.14 us on NVIDIA H200
// measured: 177.70 us on NVIDIA H100 80GB HBM3

#define NT 256          // threads per row (fixed by the puzzle)
#define MAXV 8          // float4 per thread: 8 x 4 x 256 = 8192 columns
#define MAXS (4 * MAXV) // scalars per thread

__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  float M = fmaxf(m, m2);
  float a = (m == M) ? s : s * __expf(m - M);
  float b = (m2 == M) ? s2 : s2 * __expf(m2 - M);
  m = M;
  s = a + b;
}

// Every thread gets the block's (M, S).
__device__ void block_merge(float& m, float& s) {
  __shared__ float bm[NT / 32], bs[NT / 32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) bm[warp] = m, bs[warp] = s;
  __syncthreads();
  m = lane < NT / 32 ? bm[lane] : -INFINITY;
  s = lane < NT / 32 ? bs[lane] : 0.0f;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
}

extern "C" __global__ void online_softmax(const float* __restrict__ x, float* __restrict__ y,
                                          int rows, int cols) {
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  float m = -INFINITY, s = 0.0f;

  if ((cols & 3) == 0) {
    const int n4 = cols >> 2;
    float4 v[MAXV];
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
      int i = t + k * NT;
      if (i < n4) {
        v[k] = reinterpret_cast<const float4*>(in)[i];
        m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
      }
    }
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
      if (t + k * NT < n4) {
        v[k].x = __expf(v[k].x - m);
        v[k].y = __expf(v[k].y - m);
        v[k].z = __expf(v[k].z - m);
        v[k].w = __expf(v[k].w - m);
        s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
      }
    }
    float m_t = m;
    block_merge(m, s);
    float scale = (m_t == -INFINITY) ? 0.0f : __expf(m_t - m) / s;
#pragma unroll
    for (int k = 0; k < MAXV; ++k) {
      int i = t + k * NT;
      if (i < n4)
        reinterpret_cast<float4*>(out)[i] =
            make_float4(v[k].x * scale, v[k].y * scale, v[k].z * scale, v[k].w * scale);
    }
  } else {
    float v[MAXS];
#pragma unroll
    for (int k = 0; k < MAXS; ++k) {
      int c = t + k * NT;
      if (c < cols) {
        v[k] = in[c];
        m = fmaxf(m, v[k]);
      }
    }
#pragma unroll
    for (int k = 0; k < MAXS; ++k) {
      if (t + k * NT < cols) {
        v[k] = __expf(v[k] - m);
        s += v[k];
      }
    }
    float m_t = m;
    block_merge(m, s);
    float scale = (m_t == -INFINITY) ? 0.0f : __expf(m_t - m) / s;
#pragma unroll
    for (int k = 0; k < MAXS; ++k) {
      int c = t + k * NT;
      if (c < cols) out[c] = v[k] * scale;
    }
  }
}
