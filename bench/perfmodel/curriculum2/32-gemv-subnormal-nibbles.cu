// Perf-model kernel · 32 W4A16 GEMV, nibbles as subnormal floats
//
// Each nibble masked in place and read as a subnormal float (no subtraction), ROWS / 4 rows a warp.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
// measured: 105.70 us on NVIDIA H200
// @tune THREADS=128
// @tune ROWS=16
#include <cuda_fp16.h>

constexpr int NWARP = THREADS / 32;
constexpr int R = ROWS / NWARP; // rows per warp
static_assert(R * NWARP == ROWS && R >= 1, "ROWS must be a multiple of THREADS / 32");

__device__ __forceinline__ __half2 as_h2(unsigned int u) {
  return *reinterpret_cast<__half2*>(&u);
}

// A nibble left where it sits in the word, the rest masked off, read as a float: the bits are at
// most 2^24 - 1, so the float is exactly q * 2^(p - 149) (subnormal, or the first normal binade,
// whose value is still the bits times 2^-149). One LOP3 a weight and no subtraction: the x it
// multiplies carries 2^(100 - p), so every product is q * x * 2^-49, exact in the FFMA.
template <unsigned mask> __device__ __forceinline__ float nib(unsigned int w) {
  float f;
  asm("and.b32 %0, %1, %2;" : "=f"(f) : "r"(w), "n"(mask));
  return f;
}

// s + sum over the 8 weights of one 4-byte word of qs (bytes k = 0..3) of q * x * 2^-49, with
// xl[k] = x_lo(k) * 2^(100 - p_lo(k)) and xh[k] = x_hi(k) * 2^(100 - p_hi(k)) (see widen8).
// Byte 3's nibbles sit above bit 23: shifted down by 8 first, they land where byte 2's were.
__device__ __forceinline__ float dot8(unsigned int w, const float* xl, const float* xh, float s) {
  const unsigned int w3 = w >> 8;
  s = fmaf(nib<0x0000000Fu>(w), xl[0], s);
  s = fmaf(nib<0x000000F0u>(w), xh[0], s);
  s = fmaf(nib<0x00000F00u>(w), xl[1], s);
  s = fmaf(nib<0x0000F000u>(w), xh[1], s);
  s = fmaf(nib<0x000F0000u>(w), xl[2], s);
  s = fmaf(nib<0x00F00000u>(w), xh[2], s);
  s = fmaf(nib<0x000F0000u>(w3), xl[3], s);
  s = fmaf(nib<0x00F00000u>(w3), xh[3], s);
  return s;
}

// The lane's 8 x of one 16-byte load as f32, each times 2^(100 - p) for the bit position p its
// nibble will have in dot8 (lo nibbles of bytes 0..3 at p = 0, 8, 16, 16; hi at 4, 12, 20, 20);
// `sum` gets the unscaled x (for the -8 of every weight, applied once per block and row).
template <bool hi> __device__ __forceinline__ void widen8(uint4 v, float* f, float& sum) {
  const unsigned int u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) { // one unpack and two conversions per pair
    float a, b;
    asm("{.reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;}"
        : "=f"(a), "=f"(b)
        : "r"(u[k]));
    sum += a + b;
    f[2 * k] = a, f[2 * k + 1] = b;
  }
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    constexpr float lo[4] = {0x1p100f, 0x1p92f, 0x1p84f, 0x1p84f};
    constexpr float hs[4] = {0x1p96f, 0x1p88f, 0x1p80f, 0x1p80f};
    f[k] *= hi ? hs[k % 4] : lo[k % 4];
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    w4a16_gemv(const unsigned char* __restrict__ W, const __half* __restrict__ x,
               __half* __restrict__ y, int M, int K) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long row0 = (long long)blockIdx.x * ROWS + warp * R;
  const int nb = K >> 5; // q4_0 blocks per row
  const int c = lane & 1;
  int b = lane >> 1;     // this lane's block in the first step; each step moves 16 blocks
  // Per row, fixed for the whole walk (a step moves 16 * 18 = 288 bytes, a multiple of 4):
  // the aligned word holding this lane's first qs byte, whether the bytes start 2 into it, and
  // where the scale and the 2-byte tail (or, when aligned, a harmless in-block piece) are.
  const unsigned int* pw[R];
  const unsigned short* pt[R];
  const unsigned short* pd[R];
  unsigned int sel[R];
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const long long row = min(row0 + r, (long long)M - 1); // rows past M: recomputed, not stored
    const long long blk = row * nb + b;
    const long long s = blk * 18 + 2 + 8 * c; // the first of this lane's 8 qs bytes
    const bool off = (s & 2) != 0;
    pw[r] = reinterpret_cast<const unsigned int*>(W + (s & ~3ll));
    pt[r] = reinterpret_cast<const unsigned short*>(W + (s & ~3ll) + (off ? 8 : 4));
    pd[r] = reinterpret_cast<const unsigned short*>(W + blk * 18);
    sel[r] = off ? 0x5432u : 0x3210u;
    acc[r] = 0.0f;
  }
  // Software pipeline: the words of step b + 16 are loaded while step b is decoded, so each warp
  // keeps two steps (2 x R x 288 bytes) of W in flight instead of one, and never waits for a
  // load right after issuing it. Rows past the last step reload their final words (harmless).
  unsigned int c0[R], c1[R], c2[R], cd[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    c0[r] = c1[r] = c2[r] = cd[r] = 0u;
    if (b < nb) {
      c0[r] = __ldg(pw[r]); c1[r] = __ldg(pw[r] + 1); c2[r] = __ldg(pt[r]); cd[r] = __ldg(pd[r]);
    }
  }
  for (; b < nb; b += 16) {
    const bool more = b + 16 < nb;
    uint4 xa = *reinterpret_cast<const uint4*>(x + 32 * b + 8 * c);
    uint4 xb = *reinterpret_cast<const uint4*>(x + 32 * b + 16 + 8 * c);
    unsigned int n0[R], n1[R], n2[R], nd[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (more) { pw[r] += 72; pt[r] += 144; pd[r] += 144; }
      n0[r] = __ldg(pw[r]); n1[r] = __ldg(pw[r] + 1); n2[r] = __ldg(pt[r]); nd[r] = __ldg(pd[r]);
    }
    float xl[8], xh[8], sx = 0.0f;
    widen8<false>(xa, xl, sx);
    widen8<true>(xb, xh, sx);
    const float neg8 = sx * -0x1p-46f; // -8 * sum x, in the products' units (2^-49)
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float d = __half2float(__ushort_as_half((unsigned short)cd[r]));
      const unsigned int q0 = __byte_perm(c0[r], c1[r], sel[r]), q1 = __byte_perm(c1[r], c2[r], sel[r]);
      float s8 = dot8(q0, xl, xh, neg8);
      s8 = dot8(q1, xl + 4, xh + 4, s8);
      acc[r] = fmaf(d, s8, acc[r]);
      c0[r] = n0[r]; c1[r] = n1[r]; c2[r] = n2[r]; cd[r] = nd[r];
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float v = acc[r];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0 && row0 + r < M) y[row0 + r] = __float2half_rn(v * 0x1p49f);
  }
}
