// Floating-point arithmetic: f32, f64, f16, bf16 and their packed x2 forms, with PTX's rounding
// modes, .ftz, .sat, .relu, NaN and signed-zero rules. Exactly rounded operations are bit-exact:
// round-to-nearest f32/f64 use the host's IEEE arithmetic (FMA through the FMA instruction when
// the CPU has it, else an exact software path); directed roundings and narrow formats compute an
// exact double intermediate plus the sign of its error and round once (fp.hpp).
#include "ops_common.hpp"

#include <cfenv>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace wb::sim {
namespace {

// ---- directed rounding through the host FPU (rare: div/sqrt/rcp.rz etc., f64 directed) ----
int fe_mode(Rnd r) {
  switch (r) {
  case Rnd::rz:
    return FE_TOWARDZERO;
  case Rnd::rm:
    return FE_DOWNWARD;
  case Rnd::rp:
    return FE_UPWARD;
  default:
    return FE_TONEAREST;
  }
}
template <class F> auto with_rounding(Rnd r, F f) {
  int old = std::fegetround();
  std::fesetround(fe_mode(r));
  auto v = f();
  std::fesetround(old);
  return v;
}

enum FOp : uint8_t { fadd, fsub, fmul, ffma, fdiv, fsqrt, frcp, fmin, fmax, fabs_, fneg };

inline float sat01(float v) {
  return v != v ? 0.0f : (v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v));
}
inline double sat01d(double v) {
  return v != v ? 0.0 : (v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v));
}

// f32 fused multiply-add, round to nearest even, without relying on an FMA instruction: the
// product is exact in double; the double sum is right unless it lands exactly on a midpoint
// between two floats, where the sign of the sum's error decides.
inline float fma_rn_soft(float a, float b, float c) {
  double p = double(a) * double(b);
  double s = p + double(c);
  uint64_t sb = bits(s);
  if ((sb & 0x1fffffffull) != 0x10000000ull && std::fabs(s) >= 0x1p-126) return float(s);
  int tail = two_sum_tail(p, double(c), s);
  return round_to_f32(s, tail, Rnd::rn);
}

// f32 with a rounding mode: exact double intermediate + error sign, rounded once.
float f32_round_op(FOp op, float a, float b, float c, Rnd r) {
  double s;
  int tail = 0;
  switch (op) {
  case fadd:
    tail = two_sum_tail(a, b, s);
    break;
  case fsub:
    tail = two_sum_tail(a, -double(b), s);
    break;
  case fmul:
    s = double(a) * double(b);
    break;
  case ffma:
    tail = two_sum_tail(double(a) * double(b), c, s);
    break;
  case fdiv:
    return with_rounding(r, [&] {
      volatile float x = a, y = b;
      volatile float z = x / y;
      return float(z);
    });
  case fsqrt:
    return with_rounding(r, [&] {
      volatile float x = a;
      volatile float z = std::sqrt(float(x));
      return float(z);
    });
  case frcp:
    return with_rounding(r, [&] {
      volatile float x = a;
      volatile float z = 1.0f / x;
      return float(z);
    });
  default:
    return 0;
  }
  if (std::isnan(s)) return std::bit_cast<float>(0x7fffffffu);
  return round_to_f32(s, tail, r == Rnd::none ? Rnd::rn : r);
}
double f64_round_op(FOp op, double a, double b, double c, Rnd r) {
  if (r == Rnd::none || r == Rnd::rn) {
    switch (op) {
    case fadd:
      return a + b;
    case fsub:
      return a - b;
    case fmul:
      return a * b;
    case ffma:
      return std::fma(a, b, c);
    case fdiv:
      return a / b;
    case fsqrt:
      return std::sqrt(a);
    case frcp:
      return 1.0 / a;
    default:
      return 0;
    }
  }
  return with_rounding(r, [&] {
    volatile double x = a, y = b, z = c;
    volatile double v = 0;
    switch (op) {
    case fadd:
      v = x + y;
      break;
    case fsub:
      v = x - y;
      break;
    case fmul:
      v = x * y;
      break;
    case ffma:
      v = std::fma(double(x), double(y), double(z));
      break;
    case fdiv:
      v = x / y;
      break;
    case fsqrt:
      v = std::sqrt(double(x));
      break;
    case frcp:
      v = 1.0 / x;
      break;
    default:
      break;
    }
    return double(v);
  });
}

// ---- f32, round to nearest (the hot paths) ----
template <bool Ftz> inline float in32(uint64_t v) {
  return Ftz ? ftz32(f32(v)) : f32(v);
}
template <bool Ftz, bool Sat> inline uint64_t out32(float r) {
  if (Ftz) r = ftz32(r);
  if (Sat) r = sat01(r);
  return bits(canon32(r));
}
template <bool Ftz, bool Sat> struct AddF {
  static uint64_t f(uint64_t a, uint64_t b) { return out32<Ftz, Sat>(in32<Ftz>(a) + in32<Ftz>(b)); }
};
template <bool Ftz, bool Sat> struct SubF {
  static uint64_t f(uint64_t a, uint64_t b) { return out32<Ftz, Sat>(in32<Ftz>(a) - in32<Ftz>(b)); }
};
template <bool Ftz, bool Sat> struct MulF {
  static uint64_t f(uint64_t a, uint64_t b) { return out32<Ftz, Sat>(in32<Ftz>(a) * in32<Ftz>(b)); }
};
template <bool Ftz, bool Sat> struct FmaF {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    return out32<Ftz, Sat>(fma_rn_soft(in32<Ftz>(a), in32<Ftz>(b), in32<Ftz>(c)));
  }
};
template <bool Ftz> struct DivF {
  static uint64_t f(uint64_t a, uint64_t b) {
    return out32<Ftz, false>(in32<Ftz>(a) / in32<Ftz>(b));
  }
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WB_HAVE_HW_FMA 1
// h_fma_f32_hw's whole-warp path with AVX-512: eight 64-bit rows at a time, the same bits.
__attribute__((target("avx512f"))) void fma_f32_rows_avx512(uint64_t* d, const uint64_t* a,
                                                            const uint64_t* b, const uint64_t* c) {
  const __m512i low = _mm512_set1_epi64(0xffffffff), nan = _mm512_set1_epi64(0x7fffffff);
  for (int l = 0; l < kWarpSize; l += 8) {
    const __m512 x = _mm512_castsi512_ps(_mm512_loadu_si512(a + l));
    const __m512 y = _mm512_castsi512_ps(_mm512_loadu_si512(b + l));
    const __m512 z = _mm512_castsi512_ps(_mm512_loadu_si512(c + l));
    const __m512 r = _mm512_fmadd_ps(x, y, z);
    // A NaN in a row's low half: 0x7fffffff; the high halves' products are masked off.
    const __mmask16 bad = _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q) & 0x5555;
    const __m512i v = _mm512_and_si512(_mm512_castps_si512(r), low);
    _mm512_storeu_si512(d + l, _mm512_mask_mov_epi32(v, bad, nan));
  }
}
// The FMA instruction rounds once, exactly like the GPU's fma.rn.f32: used when the CPU has it.
template <bool Ftz, bool Sat>
__attribute__((target("avx2,fma"))) int h_fma_f32_hw(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  const uint64_t* c = w.row(in.r[3]);
  if (!Ftz && !Sat && m == kFull && host_cpu::kAvx512f) {
    fma_f32_rows_avx512(d, a, b, c);
    return kNext;
  }
  if (!Ftz && !Sat && m == kFull) {
    // A whole warp four lanes at a time, each float where it lies in its 64-bit register (the
    // low half): the product of the high halves is masked off, and a NaN made 0x7fffffff, as
    // out32 does (no shuffles between the 64-bit rows and packed floats).
    const __m256i low = _mm256_set1_epi64x(0xffffffff), nan = _mm256_set1_epi64x(0x7fffffff);
    for (int l = 0; l < kWarpSize; l += 4) {
      const __m256 x = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i*)(a + l)));
      const __m256 y = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i*)(b + l)));
      const __m256 z = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i*)(c + l)));
      const __m256 r = _mm256_fmadd_ps(x, y, z);
      const __m256i bad = _mm256_castps_si256(_mm256_cmp_ps(r, r, _CMP_UNORD_Q));
      const __m256i v = _mm256_blendv_epi8(_mm256_and_si256(_mm256_castps_si256(r), low), nan, bad);
      _mm256_storeu_si256((__m256i*)(d + l), v);
    }
    return kNext;
  }
  auto one = [&](int l) {
    float r = __builtin_fmaf(in32<Ftz>(a[l]), in32<Ftz>(b[l]), in32<Ftz>(c[l]));
    d[l] = out32<Ftz, Sat>(r);
  };
  each_lane_ew(m, one);
  return kNext;
}
__attribute__((target("avx2,fma"))) int h_fma_f64_hw(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  const uint64_t* c = w.row(in.r[3]);
  auto one = [&](int l) { d[l] = bits(canon64(__builtin_fma(f64(a[l]), f64(b[l]), f64(c[l])))); };
  each_lane_ew(m, one);
  return kNext;
}
#endif

// min/max: a NaN operand yields the other; two NaNs the canonical NaN; -0 < +0.
template <bool Max, bool PropNaN, bool Ftz> struct MinMaxF {
  static uint64_t f(uint64_t a, uint64_t b) {
    float x = in32<Ftz>(a), y = in32<Ftz>(b);
    bool xn = x != x, yn = y != y;
    if (xn || yn) {
      if (PropNaN || (xn && yn)) return 0x7fffffffu;
      return bits(xn ? y : x);
    }
    float r;
    if (x == y)
      r = (std::signbit(x) != Max) ? x : y; // zeros of opposite signs
    else
      r = Max ? (x > y ? x : y) : (x < y ? x : y);
    return bits(r);
  }
};
template <bool Max> struct MinMaxD {
  static uint64_t f(uint64_t a, uint64_t b) {
    double x = f64(a), y = f64(b);
    bool xn = x != x, yn = y != y;
    if (xn || yn) return xn && yn ? 0x7fffffffffffffffull : bits(xn ? y : x);
    double r;
    if (x == y)
      r = (std::signbit(x) != Max) ? x : y;
    else
      r = Max ? (x > y ? x : y) : (x < y ? x : y);
    return bits(r);
  }
};
template <bool Ftz> struct AbsF {
  static uint64_t f(uint64_t a) { return bits(in32<Ftz>(a)) & 0x7fffffffu; }
};
template <bool Ftz> struct NegF {
  static uint64_t f(uint64_t a) { return bits(in32<Ftz>(a)) ^ 0x80000000u; }
};
struct AbsD {
  static uint64_t f(uint64_t a) { return a & 0x7fffffffffffffffull; }
};
struct NegD {
  static uint64_t f(uint64_t a) { return a ^ 0x8000000000000000ull; }
};
struct CopySignF {
  static uint64_t f(uint64_t a, uint64_t b) {
    return (uint32_t(b) & 0x7fffffffu) | (uint32_t(a) & 0x80000000u);
  }
};
struct CopySignD {
  static uint64_t f(uint64_t a, uint64_t b) {
    return (b & 0x7fffffffffffffffull) | (a & 0x8000000000000000ull);
  }
};

// Approximate functions (special function unit): computed accurately in double and rounded, so
// they differ from the GPU by at most the GPU's own documented error (docs/simulator.md).
enum AOp : uint8_t { aex2, alg2, asin, acos, arsqrt, arcp, asqrt, atanh, adiv };

// sin.approx / cos.approx take their argument in radians, but the GPU's special function unit
// works in revolutions: ptxas puts an f32 multiply by 1/(2 pi), rounded toward zero, before
// MUFU.SIN / MUFU.COS. That one rounding is where __sinf loses accuracy at large arguments: an
// ulp of x / (2 pi), turned back into radians, is 0.8 to 1.6 ulp(x), so at x = 131071 the error
// reaches 0.012. The simulator makes that rounding exactly as the GPU does, then takes the sine of
// the fraction of a revolution that is left in double (the unit's own error, about 2^-22, is not
// modelled).
inline double sfu_revolutions(double x) {
  const double p = x * double(0.15915493667125701904f); // exact: two f32 significands fit
  float f = float(p);                                   // to nearest, then toward zero:
  if (std::fabs(double(f)) > std::fabs(p)) f = std::nextafter(f, 0.0f);
  const double rev = f;
  return std::copysign(rev - std::trunc(rev), rev); // the fraction, exact; -0 stays -0
}
template <AOp O, bool Ftz> struct ApproxF {
  static uint64_t f(uint64_t a) {
    double x = in32<Ftz>(a);
    double r;
    switch (O) {
    case aex2:
      r = std::exp2(x);
      break;
    case alg2:
      r = std::log2(x);
      break;
    case asin:
      r = std::sin(6.283185307179586477 * sfu_revolutions(x));
      break;
    case acos:
      r = std::cos(6.283185307179586477 * sfu_revolutions(x));
      break;
    case arsqrt:
      r = 1.0 / std::sqrt(x);
      break;
    case arcp:
      r = 1.0 / x;
      break;
    case asqrt:
      r = std::sqrt(x);
      break;
    case atanh:
      r = std::tanh(x);
      break;
    default:
      r = 0;
      break;
    }
    return out32<Ftz, false>(float(r));
  }
};
template <bool Ftz> struct DivApproxF {
  static uint64_t f(uint64_t a, uint64_t b) {
    return out32<Ftz, false>(float(double(in32<Ftz>(a)) / double(in32<Ftz>(b))));
  }
};
template <AOp O> struct ApproxD {
  static uint64_t f(uint64_t a) {
    double x = f64(a), r;
    switch (O) {
    case arsqrt:
      r = 1.0 / std::sqrt(x);
      break;
    case arcp:
      r = 1.0 / x;
      break;
    case aex2:
      r = std::exp2(x);
      break;
    case alg2:
      r = std::log2(x);
      break;
    default:
      r = 0;
      break;
    }
    return bits(canon64(r));
  }
};

// Generic (slow) f32/f64 handler for directed rounding modes: op in sub, mode in rnd.
int h_f32_round(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = in.r[2] != kNoRow ? w.row(in.r[2]) : a;
  const uint64_t* c = in.r[3] != kNoRow ? w.row(in.r[3]) : a;
  bool ftz = in.flags & kFtz, sat = in.flags & kSat;
  each_lane(m, [&](int l) {
    float x = f32(a[l]), y = f32(b[l]), z = f32(c[l]);
    if (ftz) x = ftz32(x), y = ftz32(y), z = ftz32(z);
    float r = f32_round_op(FOp(in.sub), x, y, z, in.rnd);
    if (ftz) r = ftz32(r);
    if (sat) r = sat01(r);
    d[l] = bits(canon32(r));
  });
  return kNext;
}
int h_f64_op(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = in.r[2] != kNoRow ? w.row(in.r[2]) : a;
  const uint64_t* c = in.r[3] != kNoRow ? w.row(in.r[3]) : a;
  bool sat = in.flags & kSat;
  each_lane(m, [&](int l) {
    double r = f64_round_op(FOp(in.sub), f64(a[l]), f64(b[l]), f64(c[l]), in.rnd);
    if (sat) r = sat01d(r);
    d[l] = bits(canon64(r));
  });
  return kNext;
}
struct AddD {
  static uint64_t f(uint64_t a, uint64_t b) { return bits(canon64(f64(a) + f64(b))); }
};
struct SubD {
  static uint64_t f(uint64_t a, uint64_t b) { return bits(canon64(f64(a) - f64(b))); }
};
struct MulD {
  static uint64_t f(uint64_t a, uint64_t b) { return bits(canon64(f64(a) * f64(b))); }
};
struct DivD {
  static uint64_t f(uint64_t a, uint64_t b) { return bits(canon64(f64(a) / f64(b))); }
};

// testp
enum TestOp : uint8_t { tfinite, tinfinite, tnumber, tnotanumber, tnormal, tsubnormal };
template <class T> int h_testp(Exec&, Warp& w, const Inst& in, uint32_t m) {
  const uint64_t* a = w.row(in.r[1]);
  uint32_t res = 0;
  each_lane(m, [&](int l) {
    T x = get<T>(a[l]);
    bool r = false;
    switch (TestOp(in.sub)) {
    case tfinite:
      r = std::isfinite(x);
      break;
    case tinfinite:
      r = std::isinf(x);
      break;
    case tnumber:
      r = !std::isnan(x);
      break;
    case tnotanumber:
      r = std::isnan(x);
      break;
    case tnormal:
      r = std::isnormal(x);
      break;
    case tsubnormal:
      r = std::fpclassify(x) == FP_SUBNORMAL;
      break;
    }
    res |= uint32_t(r) << l;
  });
  set_pred(w, in.pd, m, res);
  return kNext;
}

// ---- f16 / bf16 (scalar and x2): exact double intermediate, one rounding ----
struct HalfOpts {
  const FFmt* fmt;
  Rnd rnd;
  bool ftz, sat, relu;
};
inline double h_in(uint16_t v, const FFmt& f, bool ftz) {
  if (ftz && ((v >> f.mbits) & ((1u << f.ebits) - 1)) == 0)
    v &= uint16_t(1u << (f.ebits + f.mbits));
  return fmt_to_double(v, f);
}
inline uint16_t h_out(double s, int tail, const HalfOpts& o) {
  if (o.sat && !std::isnan(s)) {
    if (s < 0 || (s == 0 && tail < 0))
      s = 0, tail = 0;
    else if (s > 1 || (s == 1 && tail > 0))
      s = 1, tail = 0;
  }
  if (std::isnan(s)) return uint16_t(o.fmt->canon_nan);
  uint16_t r = uint16_t(
      round_double(s, tail, *o.fmt, {o.rnd == Rnd::none ? Rnd::rn : o.rnd, false, o.relu}));
  if (o.ftz && ((r >> o.fmt->mbits) & ((1u << o.fmt->ebits) - 1)) == 0)
    r &= uint16_t(1u << (o.fmt->ebits + o.fmt->mbits));
  return r;
}
uint16_t half_op(FOp op, uint16_t a, uint16_t b, uint16_t c, const HalfOpts& o) {
  const FFmt& f = *o.fmt;
  double x = h_in(a, f, o.ftz), y = h_in(b, f, o.ftz), z = h_in(c, f, o.ftz);
  double s;
  int tail = 0;
  switch (op) {
  case fadd:
    tail = two_sum_tail(x, y, s);
    break;
  case fsub:
    tail = two_sum_tail(x, -y, s);
    break;
  case fmul:
    s = x * y;
    break; // exact: at most 2 x 11 significant bits
  case ffma:
    tail = two_sum_tail(x * y, z, s);
    break;
  case fmin:
  case fmax: {
    bool xn = x != x, yn = y != y;
    if (xn && yn) return uint16_t(f.canon_nan);
    if (xn || yn) return xn ? b : a;
    bool mx = op == fmax;
    uint16_t r;
    if (x == y)
      r = (std::signbit(x) != mx) ? a : b;
    else
      r = mx ? (x > y ? a : b) : (x < y ? a : b);
    if (o.relu && (r >> 15)) r = 0;
    return r;
  }
  case fneg:
    return uint16_t(a ^ 0x8000u);
  case fabs_:
    return uint16_t(a & 0x7fffu);
  default:
    return 0;
  }
  return h_out(s, tail, o);
}

template <bool X2> int h_half(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = in.r[2] != kNoRow ? w.row(in.r[2]) : a;
  const uint64_t* c = in.r[3] != kNoRow ? w.row(in.r[3]) : a;
  HalfOpts o{in.ty == Ty::bf16 || in.ty == Ty::bf16x2 ? &kBF16 : &kF16, in.rnd,
             bool(in.flags & kFtz), bool(in.flags & kSat), bool(in.flags & kRelu)};
  FOp op = FOp(in.sub);
  each_lane(m, [&](int l) {
    uint32_t r = half_op(op, uint16_t(a[l]), uint16_t(b[l]), uint16_t(c[l]), o);
    if (X2)
      r |=
          uint32_t(half_op(op, uint16_t(a[l] >> 16), uint16_t(b[l] >> 16), uint16_t(c[l] >> 16), o))
          << 16;
    d[l] = r;
  });
  return kNext;
}
template <bool X2> int h_half_approx(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const FFmt& f = in.ty == Ty::bf16 || in.ty == Ty::bf16x2 ? kBF16 : kF16;
  auto one = [&](uint16_t v) -> uint32_t {
    double x = fmt_to_double(v, f), r;
    switch (AOp(in.sub)) {
    case aex2:
      r = std::exp2(x);
      break;
    case atanh:
      r = std::tanh(x);
      break;
    default:
      r = 0;
      break;
    }
    return uint32_t(round_double(r, 0, f, {Rnd::rn}));
  };
  each_lane(m, [&](int l) {
    uint32_t r = one(uint16_t(a[l]));
    if (X2) r |= one(uint16_t(a[l] >> 16)) << 16;
    d[l] = r;
  });
  return kNext;
}

template <class F> ExecFn bin_fn() {
  return &Bin<F>::run;
}
template <class F> ExecFn un_fn() {
  return &Un<F>::run;
}
template <class F> ExecFn tern_fn() {
  return &Tern<F>::run;
}

template <template <bool, bool> class F> ExecFn pick_fs(bool ftz, bool sat) {
  return ftz ? (sat ? bin_fn<F<true, true>>() : bin_fn<F<true, false>>())
             : (sat ? bin_fn<F<false, true>>() : bin_fn<F<false, false>>());
}
template <AOp O> ExecFn approx_fn(bool ftz) {
  return ftz ? un_fn<ApproxF<O, true>>() : un_fn<ApproxF<O, false>>();
}

} // namespace

bool decode_float(Dec& D, Inst& I, InstInfo& info, const Opc& o, const ptx::Instr& in) {
  const std::string& b = o.base;
  Ty t = o.type();
  if (!ty_float(t) || o.types.size() != 1) {
    if (b == "testp" || b == "copysign") {
      // fallthrough below: single float type
    } else {
      return false;
    }
  }
  if (b == "cvt" || b == "setp" || b == "set" || b == "mov" || b == "selp" || b == "slct" ||
      b == "ld" || b == "st" || b == "atom" || b == "red" || b == "shfl" || b == "ldu" ||
      b == "cvta" || b == "wmma" || b == "mma")
    return false;
  bool ftz = o.has("ftz"), sat = o.has("sat");
  Rnd r = o.rnd();
  bool rn = r == Rnd::none || r == Rnd::rn;
  I.ty = t;
  I.rnd = r;
  I.flags = uint8_t((ftz ? kFtz : 0) | (sat ? kSat : 0) | (o.has("relu") ? kRelu : 0));
  auto ops = [&](size_t n) {
    need_ops(in, n);
    I.r[0] = D.dst(op(in, 0));
    for (size_t i = 1; i < n; ++i) I.r[i] = D.row(op(in, i), t);
  };
  bool halfy = t == Ty::f16 || t == Ty::bf16 || t == Ty::f16x2 || t == Ty::bf16x2;
  bool x2 = t == Ty::f16x2 || t == Ty::bf16x2;
  int lanes_per = x2 ? 2 : 1;
  auto flops = [&](int n) {
    info.flops = uint8_t(n * lanes_per);
    info.flop_prec = t == Ty::f32 ? 1 : t == Ty::f64 ? 3 : 2;
  };

  FOp fop;
  bool arith = true;
  if (b == "add")
    fop = fadd;
  else if (b == "sub")
    fop = fsub;
  else if (b == "mul")
    fop = fmul;
  else if (b == "fma" || b == "mad")
    fop = ffma;
  else if (b == "min")
    fop = fmin;
  else if (b == "max")
    fop = fmax;
  else if (b == "neg")
    fop = fneg;
  else if (b == "abs")
    fop = fabs_;
  else
    arith = false;

  if (arith && halfy) {
    o.only({"rn", "rz", "rm", "rp", "ftz", "sat", "relu", "NaN"});
    if (o.has("NaN")) throw Unsupported("min/max.NaN on half types");
    size_t n = fop == ffma ? 4 : (fop == fneg || fop == fabs_) ? 2 : 3;
    ops(n);
    I.sub = fop;
    I.fn = x2 ? h_half<true> : h_half<false>;
    if (fop == fadd || fop == fsub || fop == fmul) flops(1);
    if (fop == ffma) flops(2);
    return true;
  }
  if (t == Ty::f32) {
    if (arith) {
      o.only({"rn", "rz", "rm", "rp", "ftz", "sat", "NaN", "xorsign", "abs"});
      if (o.has("xorsign")) throw Unsupported("min/max.xorsign.abs");
      switch (fop) {
      case fadd:
      case fsub:
      case fmul:
        ops(3);
        flops(1);
        if (rn)
          I.fn = fop == fadd   ? pick_fs<AddF>(ftz, sat)
                 : fop == fsub ? pick_fs<SubF>(ftz, sat)
                               : pick_fs<MulF>(ftz, sat);
        else
          I.sub = fop, I.fn = h_f32_round;
        return true;
      case ffma:
        ops(4);
        flops(2);
        if (rn) {
#ifdef WB_HAVE_HW_FMA
          if (host_cpu::kAvx2Fma) {
            I.fn = ftz ? (sat ? h_fma_f32_hw<true, true> : h_fma_f32_hw<true, false>)
                       : (sat ? h_fma_f32_hw<false, true> : h_fma_f32_hw<false, false>);
            return true;
          }
#endif
          I.fn = ftz ? (sat ? tern_fn<FmaF<true, true>>() : tern_fn<FmaF<true, false>>())
                     : (sat ? tern_fn<FmaF<false, true>>() : tern_fn<FmaF<false, false>>());
        } else {
          I.sub = fop, I.fn = h_f32_round;
        }
        return true;
      case fmin:
      case fmax: {
        ops(3);
        bool nan = o.has("NaN");
        bool mx = fop == fmax;
        if (mx)
          I.fn = nan ? (ftz ? bin_fn<MinMaxF<true, true, true>>()
                            : bin_fn<MinMaxF<true, true, false>>())
                     : (ftz ? bin_fn<MinMaxF<true, false, true>>()
                            : bin_fn<MinMaxF<true, false, false>>());
        else
          I.fn = nan ? (ftz ? bin_fn<MinMaxF<false, true, true>>()
                            : bin_fn<MinMaxF<false, true, false>>())
                     : (ftz ? bin_fn<MinMaxF<false, false, true>>()
                            : bin_fn<MinMaxF<false, false, false>>());
        return true;
      }
      case fabs_:
        ops(2);
        I.fn = ftz ? un_fn<AbsF<true>>() : un_fn<AbsF<false>>();
        return true;
      case fneg:
        ops(2);
        I.fn = ftz ? un_fn<NegF<true>>() : un_fn<NegF<false>>();
        return true;
      default:
        break;
      }
    }
    if (b == "div") {
      o.only({"rn", "rz", "rm", "rp", "ftz", "approx", "full"});
      ops(3);
      flops(1);
      if (o.has("approx") || o.has("full")) {
        I.fn = ftz ? bin_fn<DivApproxF<true>>() : bin_fn<DivApproxF<false>>();
        if (o.has("approx")) info.special = true;
      } else if (rn) {
        I.fn = ftz ? bin_fn<DivF<true>>() : bin_fn<DivF<false>>();
      } else {
        I.sub = fdiv, I.fn = h_f32_round;
      }
      return true;
    }
    if (b == "rcp" || b == "sqrt") {
      o.only({"rn", "rz", "rm", "rp", "ftz", "approx"});
      ops(2);
      if (o.has("approx")) {
        info.special = true;
        I.fn = b == "rcp" ? approx_fn<arcp>(ftz) : approx_fn<asqrt>(ftz);
      } else {
        flops(1);
        I.sub = b == "rcp" ? frcp : fsqrt;
        if (r == Rnd::none) I.rnd = Rnd::rn;
        I.fn = h_f32_round;
      }
      return true;
    }
    static const std::pair<const char*, AOp> approx[] = {{"ex2", aex2},     {"lg2", alg2},
                                                         {"sin", asin},     {"cos", acos},
                                                         {"rsqrt", arsqrt}, {"tanh", atanh}};
    for (auto& [n, a] : approx) {
      if (b == n) {
        o.only({"approx", "ftz"});
        ops(2);
        info.special = true;
        switch (a) {
        case aex2:
          I.fn = approx_fn<aex2>(ftz);
          break;
        case alg2:
          I.fn = approx_fn<alg2>(ftz);
          break;
        case asin:
          I.fn = approx_fn<asin>(ftz);
          break;
        case acos:
          I.fn = approx_fn<acos>(ftz);
          break;
        case arsqrt:
          I.fn = approx_fn<arsqrt>(ftz);
          break;
        default:
          I.fn = approx_fn<atanh>(ftz);
          break;
        }
        return true;
      }
    }
    if (b == "copysign") {
      o.only({});
      ops(3);
      I.fn = bin_fn<CopySignF>();
      return true;
    }
    if (b == "testp") {
      static const std::pair<const char*, TestOp> tn[] = {
          {"finite", tfinite},         {"infinite", tinfinite}, {"number", tnumber},
          {"notanumber", tnotanumber}, {"normal", tnormal},     {"subnormal", tsubnormal}};
      o.only({"finite", "infinite", "number", "notanumber", "normal", "subnormal"});
      need_ops(in, 2);
      I.pd = D.pred(op(in, 0));
      I.r[1] = D.row(op(in, 1), t);
      for (auto& [n, k] : tn)
        if (o.has(n)) I.sub = k;
      I.fn = h_testp<float>;
      return true;
    }
    return false;
  }
  if (t == Ty::f64) {
    if (arith) {
      o.only({"rn", "rz", "rm", "rp", "ftz", "sat", "NaN"});
      switch (fop) {
      case fadd:
      case fsub:
      case fmul:
        ops(3);
        flops(1);
        if (rn && !sat)
          I.fn = fop == fadd ? bin_fn<AddD>() : fop == fsub ? bin_fn<SubD>() : bin_fn<MulD>();
        else
          I.sub = fop, I.fn = h_f64_op;
        return true;
      case ffma:
        ops(4);
        flops(2);
#ifdef WB_HAVE_HW_FMA
        if (rn && !sat && host_cpu::kAvx2Fma) {
          I.fn = h_fma_f64_hw;
          return true;
        }
#endif
        I.sub = fop, I.fn = h_f64_op;
        return true;
      case fmin:
      case fmax:
        if (o.has("NaN")) throw Unsupported("min/max.NaN.f64");
        ops(3);
        I.fn = fop == fmax ? bin_fn<MinMaxD<true>>() : bin_fn<MinMaxD<false>>();
        return true;
      case fabs_:
        ops(2);
        I.fn = un_fn<AbsD>();
        return true;
      case fneg:
        ops(2);
        I.fn = un_fn<NegD>();
        return true;
      default:
        break;
      }
    }
    if (b == "div") {
      o.only({"rn", "rz", "rm", "rp"});
      ops(3);
      flops(1);
      if (rn)
        I.fn = bin_fn<DivD>();
      else
        I.sub = fdiv, I.fn = h_f64_op;
      return true;
    }
    if (b == "rcp" || b == "sqrt" || b == "rsqrt") {
      o.only({"rn", "rz", "rm", "rp", "approx", "ftz"});
      ops(2);
      if (o.has("approx") || b == "rsqrt") {
        info.special = true;
        I.fn = b == "rcp"     ? un_fn<ApproxD<arcp>>()
               : b == "rsqrt" ? un_fn<ApproxD<arsqrt>>()
                              : un_fn<ApproxD<arsqrt>>();
        if (b == "sqrt") throw Unsupported("sqrt.approx.f64");
      } else {
        flops(1);
        I.sub = b == "rcp" ? frcp : fsqrt;
        I.fn = h_f64_op;
      }
      return true;
    }
    if (b == "copysign") {
      o.only({});
      ops(3);
      I.fn = bin_fn<CopySignD>();
      return true;
    }
    if (b == "testp") {
      static const std::pair<const char*, TestOp> tn[] = {
          {"finite", tfinite},         {"infinite", tinfinite}, {"number", tnumber},
          {"notanumber", tnotanumber}, {"normal", tnormal},     {"subnormal", tsubnormal}};
      o.only({"finite", "infinite", "number", "notanumber", "normal", "subnormal"});
      need_ops(in, 2);
      I.pd = D.pred(op(in, 0));
      I.r[1] = D.row(op(in, 1), t);
      for (auto& [n, k] : tn)
        if (o.has(n)) I.sub = k;
      I.fn = h_testp<double>;
      return true;
    }
    return false;
  }
  if (halfy && (b == "ex2" || b == "tanh")) {
    o.only({"approx", "ftz"});
    ops(2);
    info.special = true;
    I.sub = b == "ex2" ? aex2 : atanh;
    I.fn = x2 ? h_half_approx<true> : h_half_approx<false>;
    return true;
  }
  return false;
}

} // namespace wb::sim
