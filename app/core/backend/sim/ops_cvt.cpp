// Conversions (cvt, every type pair PTX allows, every rounding mode, .sat/.satfinite/.relu/.ftz,
// packed f16x2/bf16x2 and fp8 x2 forms), address-space conversions (cvta, isspacep).
#include "fp_fast.hpp"
#include "ops_common.hpp"

#include <limits>

namespace wb::sim {
namespace {

const FFmt* float_fmt(Ty t) {
  switch (t) {
  case Ty::f16:
    return &kF16;
  case Ty::bf16:
    return &kBF16;
  case Ty::f32:
    return &kF32;
  case Ty::f64:
    return &kF64;
  case Ty::tf32:
    return &kTF32;
  default:
    return nullptr;
  }
}

// Source value of a non-float type as a signed 128-bit-safe pair.
struct IVal {
  bool neg;
  uint64_t mag;
};
IVal int_val(uint64_t v, Ty t) {
  int b = ty_bytes(t);
  uint64_t mask = b >= 8 ? ~0ull : ((1ull << (8 * b)) - 1);
  v &= mask;
  if (ty_signed(t) && b < 8 && ((v >> (8 * b - 1)) & 1)) v |= ~mask;
  if (ty_signed(t) && int64_t(v) < 0) return {true, uint64_t(0) - v};
  return {false, v};
}

// Integer result of dtype from an exact integer value, truncating or saturating.
uint64_t int_result(IVal x, Ty dt, bool sat) {
  int b = ty_bytes(dt);
  uint64_t mask = b >= 8 ? ~0ull : ((1ull << (8 * b)) - 1);
  if (sat) {
    if (ty_signed(dt)) {
      int64_t lo = b >= 8 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (8 * b - 1));
      int64_t hi = b >= 8 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (8 * b - 1)) - 1;
      if (x.neg) {
        if (x.mag > uint64_t(hi) + 1) return uint64_t(lo) & mask;
        return (uint64_t(0) - x.mag) & mask;
      }
      if (x.mag > uint64_t(hi)) return uint64_t(hi) & mask;
      return x.mag & mask;
    }
    if (x.neg) return 0;
    return x.mag > mask ? mask : x.mag;
  }
  uint64_t v = x.neg ? uint64_t(0) - x.mag : x.mag;
  return v & mask;
}

// Float (exact double) -> integer dtype with rounding, NaN -> 0, saturating (PTX default).
uint64_t float_to_int(double v, Ty dt, Rnd r) {
  switch (dt) {
  case Ty::s8:
    return uint8_t(f2i<int8_t>(v, r));
  case Ty::u8:
    return f2i<uint8_t>(v, r);
  case Ty::s16:
    return uint16_t(f2i<int16_t>(v, r));
  case Ty::u16:
    return f2i<uint16_t>(v, r);
  case Ty::s32:
    return uint32_t(f2i<int32_t>(v, r));
  case Ty::b32:
  case Ty::u32:
    return f2i<uint32_t>(v, r);
  case Ty::s64:
    return uint64_t(f2i<int64_t>(v, r));
  case Ty::b64:
  case Ty::u64:
    return f2i<uint64_t>(v, r);
  default:
    return 0;
  }
}

double round_integral(double v, Rnd r) {
  switch (r) {
  case Rnd::rz:
    return std::trunc(v);
  case Rnd::rm:
    return std::floor(v);
  case Rnd::rp:
    return std::ceil(v);
  default:
    return std::nearbyint(v);
  }
}

uint64_t convert(uint64_t src, Ty dt, Ty st, Rnd r, uint8_t flags, bool int_round) {
  bool sat = flags & kSat, ftz = flags & kFtz, relu = flags & kRelu, satf = flags & kSatFinite;
  const FFmt* sf = float_fmt(st);
  const FFmt* df = float_fmt(dt);
  if (!sf) {
    IVal x = int_val(src, st);
    if (!df) return int_result(x, dt, sat);
    // integer -> float
    if (x.mag == 0) return 0;
    uint64_t b = round_exact(x.neg, x.mag, 0, 0, *df, {r == Rnd::none ? Rnd::rn : r, satf, relu});
    if (sat) {
      double v = fmt_to_double(b, *df);
      if (v > 1) b = round_double(1.0, 0, *df, {Rnd::rn});
      if (v < 0) b = 0;
    }
    return b;
  }
  double v = fmt_to_double(src, *sf);
  if (ftz && st == Ty::f32 && std::fpclassify(v) == FP_SUBNORMAL) v = std::signbit(v) ? -0.0 : 0.0;
  if (!df) return float_to_int(v, dt, r); // float -> integer (saturates by default)
  // float -> float
  if (int_round) v = round_integral(v, r); // cvt.rni.f32.f32: exact in the source format
  if (sat && !std::isnan(v)) v = v < 0 ? 0.0 : (v > 1 ? 1.0 : v);
  if (dt == Ty::tf32) { // 10 mantissa bits kept inside an f32 layout
    if (std::isnan(v)) return 0x7fffffffu;
    uint64_t b = round_double(v, 0, kTF32, {r == Rnd::none ? Rnd::rna : r, satf, relu});
    return ((b >> 18) & 1) << 31 | ((b >> 10) & 0xff) << 23 | (b & 0x3ff) << 13;
  }
  uint64_t out;
  if (std::isnan(v))
    out = df->canon_nan;
  else
    out = round_double(v, 0, *df, {int_round || r == Rnd::none ? Rnd::rn : r, satf, relu});
  if (ftz && dt == Ty::f32 && ((out >> 23) & 0xff) == 0) out &= 0x80000000u;
  return out;
}

int h_cvt(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  bool ir = in.aux;
  each_lane(m, [&](int l) { d[l] = convert(a[l], in.ty, in.ty2, in.rnd, in.flags, ir); });
  return kNext;
}

// Fast paths for the conversions address arithmetic uses all the time.
struct S64FromS32 {
  static uint64_t f(uint64_t a) { return uint64_t(int64_t(int32_t(a))); }
};
struct U64FromU32 {
  static uint64_t f(uint64_t a) { return uint32_t(a); }
};
struct U32FromU64 {
  static uint64_t f(uint64_t a) { return uint32_t(a); }
};
struct U16FromU32 {
  static uint64_t f(uint64_t a) { return uint16_t(a); }
};
struct U32FromU16 {
  static uint64_t f(uint64_t a) { return uint16_t(a); }
};
struct S32FromS16 {
  static uint64_t f(uint64_t a) { return uint32_t(int32_t(int16_t(a))); }
};
struct F32FromS32 {
  static uint64_t f(uint64_t a) { return bits(float(int32_t(a))); }
}; // host rounds to nearest
struct F32FromU32 {
  static uint64_t f(uint64_t a) { return bits(float(uint32_t(a))); }
};
struct F32FromF16 {
  static uint64_t f(uint64_t a) { return f16_to_f32_bits(uint16_t(a)); }
};
struct F32FromBF16 {
  static uint64_t f(uint64_t a) { return bf16_to_f32_bits(uint16_t(a)); }
};
struct F16FromF32Rn {
  static uint64_t f(uint64_t a) { return f32_to_f16_rn(uint32_t(a)); }
};
struct BF16FromF32Rn {
  static uint64_t f(uint64_t a) { return f32_to_bf16_rn(uint32_t(a)); }
};
struct F64FromF32 {
  static uint64_t f(uint64_t a) {
    float x = f32(a);
    return x != x ? 0x7fffffffffffffffull : bits(double(x));
  }
};
struct F64FromS32 {
  static uint64_t f(uint64_t a) { return bits(double(int32_t(a))); }
};
struct F32FromF64 {
  static uint64_t f(uint64_t a) {
    double x = f64(a);
    return x != x ? 0x7fffffffu : bits(float(x));
  }
};

// cvt.frnd2.{f16x2,bf16x2}.f32 d, a, b and cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b
int h_cvt_pack2(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  const FFmt* f = in.ty == Ty::f16x2    ? &kF16
                  : in.ty == Ty::bf16x2 ? &kBF16
                  : in.ty == Ty::e4m3x2 ? &kE4M3
                                        : &kE5M2;
  int sh = (in.ty == Ty::f16x2 || in.ty == Ty::bf16x2) ? 16 : 8;
  RoundOpts o{in.rnd == Rnd::none ? Rnd::rn : in.rnd, bool(in.flags & kSatFinite),
              bool(in.flags & kRelu)};
  if (o.mode == Rnd::rn && !o.satfinite && !o.relu && sh == 16) { // the common packs, exactly
    auto rn = f == &kF16 ? f32_to_f16_rn : f32_to_bf16_rn;
    each_lane(m, [&](int l) { d[l] = uint64_t(rn(uint32_t(a[l]))) << 16 | rn(uint32_t(b[l])); });
    return kNext;
  }
  each_lane(m, [&](int l) {
    uint64_t hi = round_double(f32(a[l]), 0, *f, o), lo = round_double(f32(b[l]), 0, *f, o);
    d[l] = (hi << sh) | lo;
  });
  return kNext;
}
// cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2 d, a
int h_cvt_f16x2_to_f8x2(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const FFmt* f = in.ty == Ty::e4m3x2 ? &kE4M3 : &kE5M2;
  RoundOpts o{Rnd::rn, bool(in.flags & kSatFinite), bool(in.flags & kRelu)};
  each_lane(m, [&](int l) {
    uint64_t hi = round_double(fmt_to_double(uint16_t(a[l] >> 16), kF16), 0, *f, o);
    uint64_t lo = round_double(fmt_to_double(uint16_t(a[l]), kF16), 0, *f, o);
    d[l] = (hi << 8) | lo;
  });
  return kNext;
}
// cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a
int h_cvt_f8x2_to_f16x2(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const FFmt* f = in.ty2 == Ty::e4m3x2 ? &kE4M3 : &kE5M2;
  bool relu = in.flags & kRelu;
  each_lane(m, [&](int l) {
    auto one = [&](uint8_t v) {
      return round_double(fmt_to_double(v, *f), 0, kF16, {Rnd::rn, false, relu});
    };
    d[l] = (one(uint8_t(a[l] >> 8)) << 16) | one(uint8_t(a[l]));
  });
  return kNext;
}

// cvta: generic <-> state-space addresses.
int h_cvta(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  uint64_t add = uint64_t(in.imm), mask = in.width == 4 ? 0xffffffffull : ~0ull;
  each_lane(m, [&](int l) { d[l] = (a[l] + add) & mask; });
  return kNext;
}
int h_isspacep(Exec&, Warp& w, const Inst& in, uint32_t m) {
  const uint64_t* a = w.row(in.r[1]);
  uint32_t res = 0;
  each_lane(m, [&](int l) {
    uint64_t x = a[l];
    bool sh = x - kSharedWindow < kWindowSize, lo = x - kLocalWindow < kWindowSize,
         pa = x - kParamWindow < kWindowSize;
    bool r = in.space == Space::shared   ? sh
             : in.space == Space::local  ? lo
             : in.space == Space::kparam ? pa
                                         : (!sh && !lo && !pa);
    res |= uint32_t(r) << l;
  });
  set_pred(w, in.pd, m, res);
  return kNext;
}

template <class F> ExecFn un_fn() {
  return &Un<F>::run;
}

} // namespace

bool decode_cvt(Dec& D, Inst& I, InstInfo& info, const Opc& o, const ptx::Instr& in) {
  const std::string& b = o.base;
  if (b == "cvta") {
    o.only({"to"});
    need_ops(in, 2);
    Space s = o.space();
    bool to = o.has("to");
    I.r[0] = D.dst(op(in, 0));
    const auto& src = op(in, 1);
    uint32_t base;
    int64_t v;
    Space sp;
    if (src.kind == ptx::Operand::Kind::ident && D.symbol_value(src, base, v, sp)) {
      if (base != kNoRow) { // cvta.local of a depot symbol: frame-relative
        I.r[1] = base;
        I.imm = v;
      } else {
        I.r[1] = D.const_row(uint64_t(v));
      }
    } else {
      I.r[1] = D.row(src, Ty::u64);
    }
    int64_t win = s == Space::shared   ? int64_t(kSharedWindow)
                  : s == Space::local  ? int64_t(kLocalWindow)
                  : s == Space::kparam ? int64_t(kParamWindow)
                                       : 0;
    I.imm += to ? -win : win;
    I.width = uint8_t(ty_bytes(o.type()));
    I.fn = h_cvta;
    return true;
  }
  if (b == "isspacep") {
    o.only({});
    need_ops(in, 2);
    I.space = o.space();
    if (I.space == Space::generic) throw Unsupported("isspacep needs a state space");
    I.pd = D.pred(op(in, 0));
    I.r[1] = D.row(op(in, 1), Ty::u64);
    I.fn = h_isspacep;
    return true;
  }
  if (b != "cvt") return false;
  o.only({"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna", "ftz", "sat", "satfinite",
          "relu"});
  if (o.types.size() != 2) throw Unsupported("cvt needs a destination and a source type");
  Ty dt = o.types[0], st = o.types[1];
  I.ty = dt;
  I.ty2 = st;
  I.rnd = o.rnd();
  I.aux = o.int_rnd() ? 1 : 0;
  I.flags = uint8_t((o.has("ftz") ? kFtz : 0) | (o.has("sat") ? kSat : 0) |
                    (o.has("satfinite") ? kSatFinite : 0) | (o.has("relu") ? kRelu : 0));
  I.r[0] = D.dst(op(in, 0));
  bool packed_dst = dt == Ty::f16x2 || dt == Ty::bf16x2 || dt == Ty::e4m3x2 || dt == Ty::e5m2x2;
  if (packed_dst && st == Ty::f32) {
    need_ops(in, 3);
    I.r[1] = D.row(op(in, 1), Ty::f32);
    I.r[2] = D.row(op(in, 2), Ty::f32);
    I.fn = h_cvt_pack2;
    return true;
  }
  need_ops(in, 2);
  I.r[1] = D.row(op(in, 1), st);
  if ((dt == Ty::e4m3x2 || dt == Ty::e5m2x2) && st == Ty::f16x2) {
    I.fn = h_cvt_f16x2_to_f8x2;
    return true;
  }
  if (dt == Ty::f16x2 && (st == Ty::e4m3x2 || st == Ty::e5m2x2)) {
    I.fn = h_cvt_f8x2_to_f16x2;
    return true;
  }
  if (packed_dst || st == Ty::f16x2 || st == Ty::bf16x2 || st == Ty::e4m3x2 || st == Ty::e5m2x2 ||
      dt == Ty::pred || st == Ty::pred || ty_bytes(dt) == 0 || ty_bytes(st) == 0)
    throw Unsupported("this cvt type pair");
  Rnd r = I.rnd;
  bool plain = I.flags == 0;
  bool rn = r == Rnd::none || r == Rnd::rn;
  if (plain && !I.aux) {
    if (dt == Ty::s64 && st == Ty::s32) return I.fn = un_fn<S64FromS32>(), true;
    if (dt == Ty::u64 && st == Ty::u32) return I.fn = un_fn<U64FromU32>(), true;
    if ((dt == Ty::u32 || dt == Ty::s32) && (st == Ty::u64 || st == Ty::s64))
      return I.fn = un_fn<U32FromU64>(), true;
    if ((dt == Ty::u16 || dt == Ty::s16) &&
        (st == Ty::u32 || st == Ty::s32 || st == Ty::u64 || st == Ty::s64))
      return I.fn = un_fn<U16FromU32>(), true;
    if ((dt == Ty::u32 || dt == Ty::s32) && st == Ty::u16) return I.fn = un_fn<U32FromU16>(), true;
    if ((dt == Ty::u32 || dt == Ty::s32) && st == Ty::s16) return I.fn = un_fn<S32FromS16>(), true;
    if (dt == Ty::f32 && st == Ty::s32 && rn) return I.fn = un_fn<F32FromS32>(), true;
    if (dt == Ty::f32 && st == Ty::u32 && rn) return I.fn = un_fn<F32FromU32>(), true;
    if (dt == Ty::f64 && st == Ty::f32) return I.fn = un_fn<F64FromF32>(), true;
    if (dt == Ty::f32 && st == Ty::f16) return I.fn = un_fn<F32FromF16>(), true;
    if (dt == Ty::f32 && st == Ty::bf16) return I.fn = un_fn<F32FromBF16>(), true;
    if (dt == Ty::f16 && st == Ty::f32 && rn) return I.fn = un_fn<F16FromF32Rn>(), true;
    if (dt == Ty::bf16 && st == Ty::f32 && rn) return I.fn = un_fn<BF16FromF32Rn>(), true;
    if (dt == Ty::f64 && st == Ty::s32) return I.fn = un_fn<F64FromS32>(), true;
    if (dt == Ty::f32 && st == Ty::f64 && rn) return I.fn = un_fn<F32FromF64>(), true;
  }
  (void)info;
  I.fn = h_cvt;
  return true;
}

} // namespace wb::sim
