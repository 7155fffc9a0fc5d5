// Exact shortcuts for the conversions kernels run in their inner loops (a bf16 or f16 input
// widened to f32, an f32 result rounded to bf16 or f16 to nearest-even). Each gives the bits that
// fp.hpp's general rounding gives (tests/unit/fp_fast_test.cpp compares them), at a fraction of
// its cost.
#pragma once
#include "fp.hpp"

#include <bit>
#include <cstdint>

namespace wb::sim {

// f16 bits -> f32 bits (exact); a NaN becomes the canonical f32 NaN, as cvt.f32.f16 gives.
inline uint32_t f16_to_f32_bits(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t ex = (h >> 10) & 0x1f, man = h & 0x3ffu;
  if (ex == 0x1f) return man ? 0x7fffffffu : sign | 0x7f800000u;
  if (ex != 0) return sign | ((ex + 112) << 23) | (man << 13);
  if (man == 0) return sign;
  return sign | std::bit_cast<uint32_t>(float(man) * 0x1p-24f); // a subnormal: exact in f32
}

// bf16 bits -> f32 bits (exact); a NaN becomes the canonical f32 NaN.
inline uint32_t bf16_to_f32_bits(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  return (u & 0x7fffffffu) > 0x7f800000u ? 0x7fffffffu : u;
}

// f32 bits -> bf16 bits, round to nearest even; a NaN becomes the canonical bf16 NaN.
inline uint16_t f32_to_bf16_rn(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t(kBF16.canon_nan);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

// f32 bits -> f16 bits, round to nearest even; a NaN becomes the canonical f16 NaN.
inline uint16_t f32_to_f16_rn(uint32_t u) {
  const uint32_t sign = (u >> 16) & 0x8000u, x = u & 0x7fffffffu;
  if (x > 0x7f800000u) return uint16_t(kF16.canon_nan);
  if (x >= 0x477ff000u) return uint16_t(sign | 0x7c00u); // 65520 and up round to infinity
  if (x >= 0x38800000u) {                                // a normal f16 (2^-14 and up)
    uint32_t h = (x >> 13) - (112u << 10);
    const uint32_t rem = x & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  // A subnormal f16: the value in units of 2^-24, rounded to nearest even.
  const int e = int(x >> 23) - 127;
  const int s = -(e + 1); // 14 and up
  if (s >= 32) return uint16_t(sign);
  const uint32_t m = (x & 0x7fffffu) | 0x800000u;
  uint32_t q = m >> s;
  const uint32_t rem = m & ((1u << s) - 1), half = 1u << (s - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  return uint16_t(sign | q);
}

} // namespace wb::sim
