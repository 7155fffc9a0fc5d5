// Floating-point helpers for the PTX simulator: bit casts, exact rounding into any of the GPU's
// float formats (f64, f32, f16, bf16, tf32, fp8 e4m3/e5m2) under every PTX rounding mode, and the
// GPU's NaN and flush-to-zero rules. Exactly rounded GPU operations are reproduced bit for bit by
// computing an exact (or exact-plus-sticky) intermediate in double and rounding once.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace wb::sim {

enum class Rnd : uint8_t { none, rn, rz, rm, rp, rna }; // rna: nearest, ties away (tf32)

struct FFmt {
  int ebits, mbits;
  bool ieee_inf;      // false for e4m3 (no infinities, a single NaN pattern per sign)
  uint64_t canon_nan; // the NaN the GPU produces
};
inline constexpr FFmt kF64{11, 52, true, 0x7fffffffffffffffull};
inline constexpr FFmt kF32{8, 23, true, 0x7fffffffu};
inline constexpr FFmt kF16{5, 10, true, 0x7fffu};
inline constexpr FFmt kBF16{8, 7, true, 0x7fffu};
inline constexpr FFmt kTF32{8, 10, true, 0x7fffffffu}; // result kept in f32 layout (see below)
inline constexpr FFmt kE4M3{4, 3, false, 0x7fu};
inline constexpr FFmt kE5M2{5, 2, true, 0x7fu};

inline float f32(uint64_t v) {
  return std::bit_cast<float>(uint32_t(v));
}
inline double f64(uint64_t v) {
  return std::bit_cast<double>(v);
}
inline uint64_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
inline uint64_t bits(double d) {
  return std::bit_cast<uint64_t>(d);
}

inline constexpr uint64_t fmt_max_bits(const FFmt& f) {
  // Largest finite magnitude: IEEE formats have an all-ones exponent for inf/NaN; e4m3 uses its
  // all-ones exponent for normal numbers except mantissa all-ones (NaN).
  return f.ieee_inf ? ((((1ull << f.ebits) - 1) << f.mbits) - 1)
                    : ((1ull << (f.ebits + f.mbits)) - 2);
}
inline constexpr uint64_t fmt_inf_bits(const FFmt& f) {
  return ((1ull << f.ebits) - 1) << f.mbits;
}

struct RoundOpts {
  Rnd mode = Rnd::rn;
  bool satfinite = false; // overflow and infinities clamp to the largest finite value
  bool relu = false;      // negative results become +0
};

// Rounds the exact value (-1)^neg * (m + tail * eps) * 2^e into `fmt`, where eps is an
// infinitesimal (tail in {-1, 0, +1} says on which side of m*2^e the true value lies). m != 0.
// Returns the encoded bits (sign included).
inline uint64_t round_exact(bool neg, uint64_t m, int e, int tail, const FFmt& fmt, RoundOpts o) {
  // Normalise so the leading one sits at bit 61, folding any bits shifted out into the tail.
  int sh = std::countl_zero(m) - 2;
  if (sh >= 0) {
    m <<= sh;
  } else {
    uint64_t lost = m & ((1ull << -sh) - 1);
    m >>= -sh;
    if (lost) tail = 1; // lost bits dominate an infinitesimal
  }
  e -= sh;
  // Two guard bits below every source bit carry the tail: m*4 - 1 sits just below m*4, m*4 + 1
  // just above. No target keeps more than 54 bits, so those bits only ever steer the rounding.
  uint64_t M = (m << 2) + uint64_t(int64_t(tail));
  int lz = std::countl_zero(M);
  M <<= lz;
  int E = e - 2 - lz + 63; // exponent of the leading bit
  const int bias = (1 << (fmt.ebits - 1)) - 1;
  const int emin = 1 - bias;
  int keep = E >= emin ? fmt.mbits + 1 : fmt.mbits + 1 - (emin - E);
  uint64_t q;
  bool above, tie, nonzero;
  if (keep <= 0) {
    q = 0;
    nonzero = true;
    above = keep == 0 && M > (1ull << 63);
    tie = keep == 0 && M == (1ull << 63);
  } else {
    int drop = 64 - keep;
    q = M >> drop;
    uint64_t rem = M & ((1ull << drop) - 1), half = 1ull << (drop - 1);
    above = rem > half;
    tie = rem == half;
    nonzero = rem != 0;
  }
  bool inc = false;
  switch (o.mode) {
  case Rnd::none:
  case Rnd::rn:
    inc = above || (tie && (q & 1));
    break;
  case Rnd::rna:
    inc = above || tie;
    break;
  case Rnd::rz:
    break;
  case Rnd::rm:
    inc = neg && nonzero;
    break;
  case Rnd::rp:
    inc = !neg && nonzero;
    break;
  }
  q += inc;
  uint64_t mag;
  if (E >= emin) {
    if (E - emin > (1 << fmt.ebits))
      mag = ~0ull >> 1; // far beyond any format: overflow below
    else
      mag = (uint64_t(E + bias - 1) << fmt.mbits) + q; // a mantissa carry bumps the exponent
  } else {
    mag = q; // subnormal; q == 2^mbits encodes the smallest normal
  }
  uint64_t sign = uint64_t(neg) << (fmt.ebits + fmt.mbits);
  if (o.relu && neg) return 0;
  if (mag > fmt_max_bits(fmt)) {
    bool to_max = o.mode == Rnd::rz || (o.mode == Rnd::rm && !neg) || (o.mode == Rnd::rp && neg);
    if (o.satfinite)
      mag = fmt_max_bits(fmt);
    else if (!fmt.ieee_inf)
      mag = fmt.canon_nan; // e4m3 has no infinity
    else
      mag = to_max ? fmt_max_bits(fmt) : fmt_inf_bits(fmt);
  }
  return sign | mag;
}

// Decomposes a finite nonzero double into (neg, m, e) with value = m * 2^e.
inline void split_f64(double d, bool& neg, uint64_t& m, int& e) {
  uint64_t b = bits(d);
  neg = b >> 63;
  int be = int((b >> 52) & 0x7ff);
  m = b & ((1ull << 52) - 1);
  if (be == 0) {
    e = -1074;
  } else {
    m |= 1ull << 52;
    e = be - 1075;
  }
}

// Rounds double `d` (+ an infinitesimal on side `tail`) into fmt. NaN -> canonical NaN, inf kept
// (or clamped by satfinite; e4m3 has no infinity: NaN unless satfinite).
inline uint64_t round_double(double d, int tail, const FFmt& fmt, RoundOpts o) {
  uint64_t sign1 = uint64_t(std::signbit(d)) << (fmt.ebits + fmt.mbits);
  if (std::isnan(d)) return fmt.canon_nan;
  if (o.relu && (std::signbit(d) && d != 0)) return 0;
  if (std::isinf(d)) {
    if (o.satfinite || !fmt.ieee_inf)
      return sign1 | (o.satfinite ? fmt_max_bits(fmt) : fmt.canon_nan);
    return sign1 | fmt_inf_bits(fmt);
  }
  if (d == 0) {
    if (tail == 0) return o.relu ? 0 : sign1;
    // A true value of +-eps: rounds to zero or the smallest subnormal depending on the mode.
    bool neg = tail < 0;
    uint64_t s = uint64_t(neg) << (fmt.ebits + fmt.mbits);
    bool up = (o.mode == Rnd::rp && !neg) || (o.mode == Rnd::rm && neg);
    if (o.relu && neg) return 0;
    return s | (up ? 1 : 0);
  }
  bool neg;
  uint64_t m;
  int e;
  split_f64(d, neg, m, e);
  // tail is relative to the signed value; round_exact wants it relative to the magnitude.
  int t = neg ? -tail : tail;
  return round_exact(neg, m, e, t, fmt, o);
}

// Bits of a format -> double (exact: every narrower format embeds in double). Built from bits, not
// with ldexp: tensor-core and conversion loops call this for every element they touch.
inline double fmt_to_double(uint64_t b, const FFmt& fmt) {
  const int bias = (1 << (fmt.ebits - 1)) - 1;
  const uint64_t sign = ((b >> (fmt.ebits + fmt.mbits)) & 1) << 63;
  const uint64_t emax = (1ull << fmt.ebits) - 1;
  const uint64_t ex = (b >> fmt.mbits) & emax;
  const uint64_t man = b & ((1ull << fmt.mbits) - 1);
  if (fmt.ieee_inf && ex == emax) {
    double v =
        man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    return sign ? -v : v;
  }
  if (!fmt.ieee_inf && ex == emax && man == (1ull << fmt.mbits) - 1)
    return sign ? -std::numeric_limits<double>::quiet_NaN()
                : std::numeric_limits<double>::quiet_NaN();
  if (ex == 0) {
    if (man == 0) return std::bit_cast<double>(sign);
    // A subnormal: man * 2^(1 - bias - mbits), exact in double (a power of two times an integer
    // of at most 52 bits); the power is a normal double for every format narrower than double.
    const int e = 1 - bias - fmt.mbits;
    if (e < -1022) return std::bit_cast<double>(sign) + std::ldexp(double(man), e);
    const double v = double(man) * std::bit_cast<double>(uint64_t(e + 1023) << 52);
    return sign ? -v : v;
  }
  const int64_t e = int64_t(ex) - bias + 1023;
  if (fmt.mbits > 52 || e <= 0 || e >= 2047) { // not representable as a normal double's fields
    double v = std::ldexp(double(man | (1ull << fmt.mbits)), int(ex) - bias - fmt.mbits);
    return sign ? -v : v;
  }
  return std::bit_cast<double>(sign | (uint64_t(e) << 52) | (man << (52 - fmt.mbits)));
}

inline float h2f(uint16_t h) {
  return float(fmt_to_double(h, kF16));
}
inline float bf2f(uint16_t h) {
  return std::bit_cast<float>(uint32_t(h) << 16);
}
inline uint16_t f2h(double d, Rnd r = Rnd::rn) {
  return uint16_t(round_double(d, 0, kF16, {r}));
}
inline uint16_t f2bf(double d, Rnd r = Rnd::rn) {
  return uint16_t(round_double(d, 0, kBF16, {r}));
}

// Exact sum a + b = s + err (Knuth's TwoSum); tail = sign of err.
inline int two_sum_tail(double a, double b, double& s) {
  s = a + b;
  if (!std::isfinite(s)) return 0;
  double bb = s - a;
  double err = (a - (s - bb)) + (b - bb);
  return err > 0 ? 1 : (err < 0 ? -1 : 0);
}

// x rounded into fmt as the GPU does for a result: NaN -> canonical.
inline bool is_nan32(uint32_t b) {
  return (b & 0x7fffffffu) > 0x7f800000u;
}
inline bool is_nan16(uint16_t b) {
  return (b & 0x7fffu) > 0x7c00u;
}
inline bool is_nanbf(uint16_t b) {
  return (b & 0x7fffu) > 0x7f80u;
}

// Flush f32 subnormals to sign-preserving zero (.ftz).
inline float ftz32(float x) {
  uint32_t b = std::bit_cast<uint32_t>(x);
  return (b & 0x7f800000u) == 0 ? std::bit_cast<float>(b & 0x80000000u) : x;
}
inline float canon32(float x) {
  return x != x ? std::bit_cast<float>(0x7fffffffu) : x;
}
inline double canon64(double x) {
  return x != x ? std::bit_cast<double>(0x7fffffffffffffffull) : x;
}

// f32 result of an exact double value with a tail, under mode r (used for directed rounding).
inline float round_to_f32(double v, int tail, Rnd r) {
  return std::bit_cast<float>(uint32_t(round_double(v, tail, kF32, {r})));
}

// Float -> integer conversions with PTX semantics: round by mode, NaN -> 0, saturate to the range.
template <class I> I f2i(double v, Rnd r) {
  if (std::isnan(v)) return 0;
  double t;
  switch (r) {
  case Rnd::rz:
    t = std::trunc(v);
    break;
  case Rnd::rm:
    t = std::floor(v);
    break;
  case Rnd::rp:
    t = std::ceil(v);
    break;
  default:
    t = std::nearbyint(v);
    break; // the default environment rounds to nearest even
  }
  constexpr double lo = double(std::numeric_limits<I>::min());
  constexpr double hi_excl = std::numeric_limits<I>::max() == std::numeric_limits<uint64_t>::max()
                                 ? 18446744073709551616.0
                             : std::numeric_limits<I>::max() == std::numeric_limits<int64_t>::max()
                                 ? 9223372036854775808.0
                                 : double(std::numeric_limits<I>::max()) + 1.0;
  if (t < lo) return std::numeric_limits<I>::min();
  if (t >= hi_excl) return std::numeric_limits<I>::max();
  return I(t);
}

} // namespace wb::sim
