// Solution · 31 NF4 dequantization (bitsandbytes layout, blocks of 64, bf16 out)
//
// What: each thread owns VEC = 64 elements as 8 chunks of 8, the chunks BLOCK * 8 elements apart
// so that one warp instruction covers 32 neighbouring chunks: 128 contiguous bytes of `packed`
// (one 4-byte word per lane) and 512 contiguous bytes of `y` (one 16-byte store per lane). All 8
// words and their 8 absmax values are loaded before any is used (16 loads in flight per thread).
// Each nibble indexes a 16-float table in SHARED memory, is multiplied by its block's absmax in
// f32, and pairs are rounded to bf16 with __floats2bfloat162_rn. A chunk that runs past n (the
// last few elements) is done one byte at a time.
// Run:  warpbook check 31-nf4-dequantize solutions/31-nf4-dequantize.cu
//
// Why it is fast: 2.56 bytes of traffic per element (0.5 in, 2 out, 1/16 of a 4-byte absmax) and
// one multiply: bandwidth-bound, and 78% of the bytes are WRITES. So the stores must be full
// 16-byte, fully coalesced ones (a warp writes whole 128-byte lines, no partial sectors), and the
// reads, though small, must keep enough requests in flight. Where the table lives matters: in
// __constant__ memory, the 32 lanes of a warp index it with up to 16 different codes, and the
// constant cache serves one address per cycle, so a warp's lookup is replayed up to 16 times. In
// shared memory the 16 entries sit in 16 different banks: lanes with equal codes are broadcast,
// lanes with different codes hit different banks, and every lookup is a single conflict-free
// LDS. (A register select tree costs 15 selects per element instead of one load.)
//
// Napkin maths: n = 2^30: 0.54 GB read + 2.15 GB written = 2.75 GB; at 4.8 TB/s that is 573 us on
// the H200 (gold is 75%: 764 us). The lookups: 2^30 LDS lanes / (132 SMs * 32 lanes/clk) is
// ~128 us of the LSU at 1.98 GHz, well hidden under the memory time.
// Predicted by `warpbook predict` for the H200 (not measured): 624 us, 4.4 TB/s, 97% of the speed
// of light as predict counts it (its DRAM ceiling), gold.
// Measured on the H200 (`warpbook check`): 679.3 us, 4.05 TB/s, 88.7% of the speed of
// light against the ceilings `warpbook probe` measures; gold.
// measured: 679.33 us on NVIDIA H200
// measured: 940.38 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=256
// @tune VEC=64
#include <cuda_bf16.h>

__constant__ float kNF4[16] = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};

// Two elements (high nibble first, then low) of byte `b`, scaled and packed as one bf16x2.
__device__ __forceinline__ unsigned int dequant_byte(const float* lut, unsigned int b, float s) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lut[(b >> 4) & 15u] * s, lut[b & 15u] * s);
  return *reinterpret_cast<unsigned int*>(&h);
}

extern "C" __global__ void nf4_dequantize(const unsigned char* __restrict__ packed,
                                          const float* __restrict__ absmax,
                                          __nv_bfloat16* __restrict__ y, int n) {
  __shared__ float lut[16];
  if (threadIdx.x < 16) lut[threadIdx.x] = kNF4[threadIdx.x]; // one uniform read each
  __syncthreads();

  constexpr int CH = VEC / 8; // chunks of 8 elements (4 bytes in, 16 bytes out) per thread
  const long long base = (long long)blockIdx.x * BLOCK * VEC;
  unsigned int w[CH];
  float s[CH];
  bool full[CH];
#pragma unroll
  for (int q = 0; q < CH; ++q) { // every load first: CH words and CH scales in flight
    const long long i = base + ((long long)q * BLOCK + threadIdx.x) * 8;
    full[q] = i + 8 <= n;
    if (full[q]) {
      w[q] = __ldcs(reinterpret_cast<const unsigned int*>(packed + i / 2));
      s[q] = __ldg(absmax + i / 64); // 8 lanes share each scale: one sector per 8 lanes
    }
  }
#pragma unroll
  for (int q = 0; q < CH; ++q) {
    const long long i = base + ((long long)q * BLOCK + threadIdx.x) * 8;
    if (full[q]) {
      // Little-endian: byte k of the word is bits 8k..8k+7 and holds elements 2k (high) and
      // 2k + 1 (low), so the four bf16x2 words come out in element order.
      uint4 o;
      o.x = dequant_byte(lut, w[q], s[q]);
      o.y = dequant_byte(lut, w[q] >> 8, s[q]);
      o.z = dequant_byte(lut, w[q] >> 16, s[q]);
      o.w = dequant_byte(lut, w[q] >> 24, s[q]);
      __stcs(reinterpret_cast<uint4*>(y + i), o);
    } else {
      for (long long k = i; k < n && k < i + 8; k += 2) { // n is even: whole bytes only
        unsigned int b = packed[k / 2];
        *reinterpret_cast<unsigned int*>(y + k) = dequant_byte(lut, b, absmax[k / 64]);
      }
    }
  }
}
