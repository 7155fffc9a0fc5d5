// Integer, bit and predicate instructions; mov, selp, slct, setp/set (all types).
#include "ops_common.hpp"

#include <bit>
#include <chrono>
#include <limits>

namespace wb::sim {
namespace {

// ---- integer functors ----
template <class T> struct Add {
  static uint64_t f(uint64_t a, uint64_t b) {
    return put<T>(T(Wrap<T>(get<T>(a)) + Wrap<T>(get<T>(b))));
  }
};
template <class T> struct Sub {
  static uint64_t f(uint64_t a, uint64_t b) {
    return put<T>(T(Wrap<T>(get<T>(a)) - Wrap<T>(get<T>(b))));
  }
};
template <class T> struct MulLo {
  static uint64_t f(uint64_t a, uint64_t b) {
    return put<T>(T(Wrap<T>(get<T>(a)) * Wrap<T>(get<T>(b))));
  }
};
template <class T> struct MulHi {
  static uint64_t f(uint64_t a, uint64_t b) {
    if constexpr (sizeof(T) == 8) {
      using W = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
      return put<T>(T((W(get<T>(a)) * W(get<T>(b))) >> 64));
    } else {
      using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      return put<T>(T((W(get<T>(a)) * W(get<T>(b))) >> (8 * sizeof(T))));
    }
  }
};
// mul.wide: 16 -> 32 or 32 -> 64 bits.
template <class T> struct MulWide {
  using W =
      std::conditional_t<sizeof(T) == 2, std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>,
                         std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
  static uint64_t f(uint64_t a, uint64_t b) {
    return put<W>(W(std::make_unsigned_t<W>(W(get<T>(a))) * std::make_unsigned_t<W>(W(get<T>(b)))));
  }
};
template <class T> struct MadLo {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    return put<T>(T(Wrap<T>(get<T>(a)) * Wrap<T>(get<T>(b)) + Wrap<T>(get<T>(c))));
  }
};
template <class T> struct MadHi {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    return put<T>(T(Wrap<T>(get<T>(MulHi<T>::f(a, b))) + Wrap<T>(get<T>(c))));
  }
};
template <class T> struct MadWide {
  using W = typename MulWide<T>::W;
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    using U = std::make_unsigned_t<W>;
    return put<W>(W(U(get<W>(MulWide<T>::f(a, b))) + U(get<W>(c))));
  }
};
template <class T> struct AddSat {
  static uint64_t f(uint64_t a, uint64_t b) {
    int64_t r = int64_t(get<T>(a)) + int64_t(get<T>(b));
    r = std::min<int64_t>(std::max<int64_t>(r, std::numeric_limits<T>::min()),
                          std::numeric_limits<T>::max());
    return put<T>(T(r));
  }
};
template <class T> struct SubSat {
  static uint64_t f(uint64_t a, uint64_t b) {
    int64_t r = int64_t(get<T>(a)) - int64_t(get<T>(b));
    r = std::min<int64_t>(std::max<int64_t>(r, std::numeric_limits<T>::min()),
                          std::numeric_limits<T>::max());
    return put<T>(T(r));
  }
};
template <class T> struct Min {
  static uint64_t f(uint64_t a, uint64_t b) {
    T x = get<T>(a), y = get<T>(b);
    return put<T>(x < y ? x : y);
  }
};
template <class T> struct Max {
  static uint64_t f(uint64_t a, uint64_t b) {
    T x = get<T>(a), y = get<T>(b);
    return put<T>(x > y ? x : y);
  }
};
template <class T> struct And {
  static uint64_t f(uint64_t a, uint64_t b) { return put<T>(T(get<T>(a) & get<T>(b))); }
};
template <class T> struct Or {
  static uint64_t f(uint64_t a, uint64_t b) { return put<T>(T(get<T>(a) | get<T>(b))); }
};
template <class T> struct Xor {
  static uint64_t f(uint64_t a, uint64_t b) { return put<T>(T(get<T>(a) ^ get<T>(b))); }
};
template <class T> struct Not {
  static uint64_t f(uint64_t a) { return put<T>(T(~get<T>(a))); }
};
template <class T> struct CNot {
  static uint64_t f(uint64_t a) { return put<T>(T(get<T>(a) == 0 ? 1 : 0)); }
};
template <class T> struct Neg {
  static uint64_t f(uint64_t a) { return put<T>(T(Wrap<T>(0) - Wrap<T>(get<T>(a)))); }
};
template <class T> struct Abs {
  static uint64_t f(uint64_t a) {
    T x = get<T>(a);
    return put<T>(x < 0 ? T(Wrap<T>(0) - Wrap<T>(x)) : x);
  }
};
// Shifts: the amount is an unsigned 32-bit value; amounts past the width clamp (PTX semantics).
template <class T> struct Shl {
  static uint64_t f(uint64_t a, uint64_t b) {
    uint32_t n = uint32_t(b);
    return n >= 8 * sizeof(T) ? 0 : put<T>(T(Wrap<T>(get<T>(a)) << n));
  }
};
template <class T> struct Shr {
  static uint64_t f(uint64_t a, uint64_t b) {
    uint32_t n = uint32_t(b);
    T x = get<T>(a);
    if (n >= 8 * sizeof(T)) return put<T>(std::is_signed_v<T> && x < 0 ? T(-1) : T(0));
    return put<T>(T(x >> n));
  }
};
template <class T> struct Div {
  static uint64_t f(uint64_t a, uint64_t b) {
    T x = get<T>(a), y = get<T>(b);
    if (y == 0) return put<T>(T(~T(0))); // the GPU gives all ones; PTX leaves it undefined
    if constexpr (std::is_signed_v<T>)
      if (x == std::numeric_limits<T>::min() && y == T(-1)) return put<T>(x);
    return put<T>(T(x / y));
  }
};
template <class T> struct Rem {
  static uint64_t f(uint64_t a, uint64_t b) {
    T x = get<T>(a), y = get<T>(b);
    if (y == 0) return put<T>(x);
    if constexpr (std::is_signed_v<T>)
      if (x == std::numeric_limits<T>::min() && y == T(-1)) return 0;
    return put<T>(T(x % y));
  }
};
template <class T> struct Popc {
  static uint64_t f(uint64_t a) {
    return uint32_t(std::popcount(std::make_unsigned_t<T>(get<T>(a))));
  }
};
template <class T> struct Clz {
  static uint64_t f(uint64_t a) {
    return uint32_t(std::countl_zero(std::make_unsigned_t<T>(get<T>(a))));
  }
};
template <class T> struct Brev {
  static uint64_t f(uint64_t a) {
    using U = std::make_unsigned_t<T>;
    U x = U(get<T>(a)), r = 0;
    for (unsigned i = 0; i < 8 * sizeof(T); ++i) r |= U((x >> i) & 1) << (8 * sizeof(T) - 1 - i);
    return put<U>(r);
  }
};
template <class T, bool ShiftAmt> struct Bfind {
  static uint64_t f(uint64_t a) {
    using U = std::make_unsigned_t<T>;
    T x = get<T>(a);
    U u = U(x);
    if constexpr (std::is_signed_v<T>)
      if (x < 0) u = U(~u);
    if (u == 0) return 0xffffffffu;
    uint32_t msb = uint32_t(8 * sizeof(T) - 1 - std::countl_zero(u));
    return ShiftAmt ? uint32_t(8 * sizeof(T) - 1 - msb) : msb;
  }
};
template <class T> struct BfindPos : Bfind<T, false> {};
template <class T> struct BfindShift : Bfind<T, true> {};
template <class T> struct Bfe {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    using U = std::make_unsigned_t<T>;
    constexpr unsigned W = 8 * sizeof(T);
    U x = U(get<T>(a));
    unsigned pos = unsigned(b) & 0xff, len = unsigned(c) & 0xff;
    if (len == 0) return 0;
    unsigned avail = pos >= W ? 0 : W - pos;
    U field = pos >= W ? 0 : U(x >> pos);
    unsigned got = std::min(len, avail);
    if (got < W) field &= U((U(1) << got) - 1);
    if constexpr (std::is_signed_v<T>) {
      unsigned sb = std::min(pos + len - 1, W - 1);
      if ((x >> sb) & 1)
        if (got < W) field |= U(~U(0) << got);
    }
    return put<U>(field);
  }
};
template <class T> struct Bfi {
  static uint64_t f(uint64_t fv, uint64_t bv, uint64_t c, uint64_t e) {
    using U = std::make_unsigned_t<T>;
    constexpr unsigned W = 8 * sizeof(T);
    U f_ = U(get<T>(fv)), d = U(get<T>(bv));
    unsigned pos = unsigned(c) & 0xff, len = unsigned(e) & 0xff;
    for (unsigned i = 0; i < len && pos + i < W; ++i) {
      U bit = U(1) << (pos + i);
      d = U((d & ~bit) | (((f_ >> i) & 1) ? bit : 0));
    }
    return put<U>(d);
  }
};
// mul24 / mad24: the low 24 bits of each operand (sign-extended for .s32), a 48-bit product.
template <class T, bool Hi> struct Mul24 {
  static int64_t v24(uint64_t a) {
    if constexpr (std::is_signed_v<T>)
      return int64_t(int32_t(uint32_t(a) << 8) >> 8);
    else
      return int64_t(uint32_t(a) & 0xffffff);
  }
  static uint64_t f(uint64_t a, uint64_t b) {
    int64_t p = v24(a) * v24(b);
    return uint32_t(Hi ? uint64_t(p) >> 16 : uint64_t(p));
  }
};
template <class T, bool Hi> struct Mad24 {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    return uint32_t(Mul24<T, Hi>::f(a, b) + uint32_t(c));
  }
};

template <class T> struct Sad {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    T x = get<T>(a), y = get<T>(b);
    Wrap<T> diff = x > y ? Wrap<T>(Wrap<T>(x) - Wrap<T>(y)) : Wrap<T>(Wrap<T>(y) - Wrap<T>(x));
    return put<T>(T(diff + Wrap<T>(get<T>(c))));
  }
};

// prmt
template <int Mode> struct Prmt {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t tmp = (uint64_t(uint32_t(b)) << 32) | uint32_t(a);
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) {
      uint32_t byte;
      if (Mode == 0) {
        uint32_t ctl = (uint32_t(c) >> (4 * i)) & 0xf;
        byte = (tmp >> (8 * (ctl & 7))) & 0xff;
        if (ctl & 8) byte = (byte & 0x80) ? 0xff : 0;
      } else {
        uint32_t s = uint32_t(c) & 3, idx = 0;
        switch (Mode) {
        case 1:
          idx = (s + i) & 7;
          break; // f4e
        case 2:
          idx = (s - i) & 7;
          break; // b4e
        case 3:
          idx = s;
          break; // rc8
        case 4:
          idx = std::max<uint32_t>(i, s);
          break; // ecl
        case 5:
          idx = std::min<uint32_t>(i, s);
          break; // ecr
        case 6:
          idx = (s & 1) * 2 + (i & 1);
          break; // rc16
        }
        byte = (tmp >> (8 * idx)) & 0xff;
      }
      r |= byte << (8 * i);
    }
    return r;
  }
};

// shf: funnel shift of {b:a}
template <bool Left, bool Wrapped> struct Shf {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    uint32_t n = uint32_t(c);
    n = Wrapped ? (n & 31) : std::min<uint32_t>(n, 32);
    uint64_t v = (uint64_t(uint32_t(b)) << 32) | uint32_t(a);
    if (Left) return uint32_t((v << n) >> 32);
    return uint32_t(v >> n);
  }
};

template <class T> struct Lop3 {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c, uint64_t lut) {
    using U = std::make_unsigned_t<T>;
    U x = U(a), y = U(b), z = U(c), r = 0;
    for (int k = 0; k < 8; ++k) {
      if (!((lut >> k) & 1)) continue;
      U t = U(((k & 4) ? x : U(~x)) & ((k & 2) ? y : U(~y)) & ((k & 1) ? z : U(~z)));
      r |= t;
    }
    return put<U>(r);
  }
};

template <bool AS, bool BS> struct Dp4a {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    int64_t acc = AS || BS ? int64_t(int32_t(c)) : int64_t(uint32_t(c));
    for (int i = 0; i < 4; ++i) {
      int32_t x = AS ? int32_t(int8_t(a >> (8 * i))) : int32_t(uint8_t(a >> (8 * i)));
      int32_t y = BS ? int32_t(int8_t(b >> (8 * i))) : int32_t(uint8_t(b >> (8 * i)));
      acc += int64_t(x) * y;
    }
    return uint32_t(acc);
  }
};
template <bool AS, bool BS, bool Hi> struct Dp2a {
  static uint64_t f(uint64_t a, uint64_t b, uint64_t c) {
    int64_t acc = AS || BS ? int64_t(int32_t(c)) : int64_t(uint32_t(c));
    for (int i = 0; i < 2; ++i) {
      int32_t x = AS ? int32_t(int16_t(a >> (16 * i))) : int32_t(uint16_t(a >> (16 * i)));
      int k = (Hi ? 2 : 0) + i;
      int32_t y = BS ? int32_t(int8_t(b >> (8 * k))) : int32_t(uint8_t(b >> (8 * k)));
      acc += int64_t(x) * y;
    }
    return uint32_t(acc);
  }
};

// ---- carry chain (add.cc / addc / sub.cc / subc); the carry lives in predicate ps/pd ----
template <class T, bool Sub, bool UseCarry, bool SetCarry>
int h_carry(Exec&, Warp& w, const Inst& in, uint32_t m) {
  using U = std::make_unsigned_t<T>;
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  uint32_t cin = UseCarry ? w.p[in.ps] : 0, cout = 0;
  each_lane(m, [&](int l) {
    U x = U(a[l]), y = U(b[l]);
    unsigned ci = (cin >> l) & 1;
    U r;
    bool co;
    if (!Sub) {
      r = U(x + y);
      co = r < x;
      U r2 = U(r + ci);
      co = co || (r2 < r);
      r = r2;
    } else { // borrow semantics: CC.CF = borrow
      r = U(x - y);
      co = x < y;
      U r2 = U(r - ci);
      co = co || (r < U(ci));
      r = r2;
    }
    d[l] = r;
    cout |= uint32_t(co) << l;
  });
  if (SetCarry) set_pred(w, in.pd, m, cout);
  return kNext;
}

// ---- predicates ----
int h_pand(Exec&, Warp& w, const Inst& in, uint32_t m) {
  set_pred(w, in.pd, m, (w.p[in.r[1]] ^ in.aux) & (w.p[in.r[2]] ^ in.imm));
  return kNext;
}
int h_por(Exec&, Warp& w, const Inst& in, uint32_t m) {
  set_pred(w, in.pd, m, (w.p[in.r[1]] ^ in.aux) | (w.p[in.r[2]] ^ in.imm));
  return kNext;
}
int h_pxor(Exec&, Warp& w, const Inst& in, uint32_t m) {
  set_pred(w, in.pd, m, (w.p[in.r[1]] ^ in.aux) ^ (w.p[in.r[2]] ^ in.imm));
  return kNext;
}
int h_pnot(Exec&, Warp& w, const Inst& in, uint32_t m) {
  set_pred(w, in.pd, m, ~(w.p[in.r[1]] ^ in.aux));
  return kNext;
}
int h_pmov(Exec&, Warp& w, const Inst& in, uint32_t m) {
  set_pred(w, in.pd, m, w.p[in.r[1]] ^ in.aux);
  return kNext;
}
int h_pconst(Exec&, Warp& w, const Inst& in, uint32_t m) {
  set_pred(w, in.pd, m, in.imm ? kFull : 0);
  return kNext;
}
// cvt/mov between predicate and integer: selp-like
int h_pred_to_int(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  uint32_t p = w.p[in.ps] ^ in.ps_xor;
  each_lane(m, [&](int l) { d[l] = (p >> l) & 1; });
  return kNext;
}
// ---- moves ----
int h_mov(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  if (m == kFull)
    std::memcpy(d, a, sizeof(uint64_t) * kWarpSize);
  else
    each_lane(m, [&](int l) { d[l] = a[l]; });
  return kNext;
}
int h_add_imm(Exec&, Warp& w, const Inst& in, uint32_t m) { // d = a + imm (frame-relative symbols)
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  each_lane(m, [&](int l) { d[l] = a[l] + uint64_t(in.imm); });
  return kNext;
}
// mov.bN d, {a, b, ...}: pack (element 0 in the low bits)
int h_pack(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint32_t* rows = x.P->lists.data() + in.target;
  int n = in.vec, eb = in.width * 8;
  uint64_t emask = eb >= 64 ? ~0ull : ((1ull << eb) - 1);
  if (n == 2 && eb <= 32) { // the common {lo, hi}: a b16 pair into b32, a b32 pair into b64
    const uint64_t *a = w.row(rows[0]), *b = w.row(rows[1]);
    uint64_t v[kWarpSize];
    for (int l = 0; l < kWarpSize; ++l) v[l] = (a[l] & emask) | (b[l] & emask) << eb;
    each_lane_ew(m, [&](int l) { d[l] = v[l]; }); // d may be a or b
    return kNext;
  }
  each_lane(m, [&](int l) {
    uint64_t v = 0;
    for (int k = 0; k < n; ++k) v |= (w.rv(rows[k], l) & emask) << (k * eb);
    d[l] = v;
  });
  return kNext;
}
// mov.bN {a, b, ...}, s: unpack
int h_unpack(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const uint64_t* s = w.row(in.r[1]);
  const uint32_t* rows = x.P->lists.data() + in.target;
  int n = in.vec, eb = in.width * 8;
  uint64_t emask = eb >= 64 ? ~0ull : ((1ull << eb) - 1);
  uint64_t tmp[kWarpSize];
  std::memcpy(tmp, s, sizeof tmp); // a destination may alias the source
  each_lane(m, [&](int l) {
    for (int k = 0; k < n; ++k) w.row(rows[k])[l] = (tmp[l] >> (k * eb)) & emask;
  });
  return kNext;
}
int h_clock(Exec&, Warp& w, const Inst& in, uint32_t m) {
  auto t = std::chrono::steady_clock::now().time_since_epoch();
  uint64_t v = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(t).count());
  if (in.aux == 0) v &= 0xffffffffu;
  uint64_t* d = w.row(in.r[0]);
  each_lane(m, [&](int l) { d[l] = v; });
  return kNext;
}

int h_selp(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  uint32_t c = w.p[in.ps] ^ in.ps_xor;
  each_lane(m, [&](int l) { d[l] = ((c >> l) & 1) ? a[l] : b[l]; });
  return kNext;
}
template <bool Float> int h_slct(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  const uint64_t* c = w.row(in.r[3]);
  each_lane(m, [&](int l) {
    bool ge = Float ? (f32(c[l]) >= 0.0f) : (int32_t(c[l]) >= 0);
    d[l] = ge ? a[l] : b[l];
  });
  return kNext;
}

// ---- comparisons (setp / set), every type ----
enum Cmp : uint8_t {
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  lo,
  ls,
  hi,
  hs,
  equ,
  neu,
  ltu,
  leu,
  gtu,
  geu,
  num,
  nan
};
enum BoolOp : uint8_t { bnone, band, bor, bxor };

template <class T> struct Half { T v; };
template <class T> inline double cmp_val(uint64_t v);
template <Cmp C, class T> inline bool compare(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    bool un = a != a || b != b;
    switch (C) {
    case eq:
      return a == b;
    case ne:
      return !un && a != b;
    case lt:
      return a < b;
    case le:
      return a <= b;
    case gt:
      return a > b;
    case ge:
      return a >= b;
    case equ:
      return un || a == b;
    case neu:
      return a != b;
    case ltu:
      return un || a < b;
    case leu:
      return un || a <= b;
    case gtu:
      return un || a > b;
    case geu:
      return un || a >= b;
    case num:
      return !un;
    case nan:
      return un;
    default:
      return false;
    }
  } else {
    using U = std::make_unsigned_t<T>;
    switch (C) {
    case eq:
      return a == b;
    case ne:
      return a != b;
    case lt:
      return a < b;
    case le:
      return a <= b;
    case gt:
      return a > b;
    case ge:
      return a >= b;
    case lo:
      return U(a) < U(b);
    case ls:
      return U(a) <= U(b);
    case hi:
      return U(a) > U(b);
    case hs:
      return U(a) >= U(b);
    default:
      return false;
    }
  }
}
// Values compared: narrow floats are widened exactly.
enum class CK : uint8_t { i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, f32ftz };
template <CK K> inline auto load_cmp(uint64_t v) {
  if constexpr (K == CK::i8)
    return int8_t(v);
  else if constexpr (K == CK::u8)
    return uint8_t(v);
  else if constexpr (K == CK::i16)
    return int16_t(v);
  else if constexpr (K == CK::u16)
    return uint16_t(v);
  else if constexpr (K == CK::i32)
    return int32_t(v);
  else if constexpr (K == CK::u32)
    return uint32_t(v);
  else if constexpr (K == CK::i64)
    return int64_t(v);
  else if constexpr (K == CK::u64)
    return uint64_t(v);
  else if constexpr (K == CK::f16)
    return h2f(uint16_t(v));
  else if constexpr (K == CK::bf16)
    return bf2f(uint16_t(v));
  else if constexpr (K == CK::f32)
    return f32(v);
  else if constexpr (K == CK::f32ftz)
    return ftz32(f32(v));
  else
    return f64(v);
}

template <CK K, Cmp C> int h_setp(Exec&, Warp& w, const Inst& in, uint32_t m) {
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  uint32_t res = 0;
  if (m == kFull) {
    for (int l = 0; l < kWarpSize; ++l)
      res |= uint32_t(compare<C>(load_cmp<K>(a[l]), load_cmp<K>(b[l]))) << l;
  } else {
    each_lane(
        m, [&](int l) { res |= uint32_t(compare<C>(load_cmp<K>(a[l]), load_cmp<K>(b[l]))) << l; });
  }
  uint32_t p = res, q = ~res;
  if (in.ps >= 0) {
    uint32_t c = w.p[in.ps] ^ in.ps_xor;
    switch (in.sub) {
    case band:
      p &= c;
      q &= c;
      break;
    case bor:
      p |= c;
      q |= c;
      break;
    case bxor:
      p ^= c;
      q ^= c;
      break;
    }
  }
  set_pred(w, in.pd, m, p);
  if (in.pd2 >= 0) set_pred(w, in.pd2, m, q);
  return kNext;
}
// set: d = all ones / 1.0f when true, else 0
template <CK K, Cmp C> int h_set(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  uint32_t c = in.ps >= 0 ? (w.p[in.ps] ^ in.ps_xor) : 0;
  each_lane(m, [&](int l) {
    bool r = compare<C>(load_cmp<K>(a[l]), load_cmp<K>(b[l]));
    if (in.ps >= 0) {
      bool cb = (c >> l) & 1;
      r = in.sub == band ? (r && cb) : in.sub == bor ? (r || cb) : (r != cb);
    }
    d[l] = in.flags & kFtz /* reused: float result */ ? (r ? 0x3f800000u : 0)
                                                      : (r ? (in.imm ? 0xffffffffu : 1) : 0);
  });
  return kNext;
}

// Packed half comparisons (rare): the comparison is a run-time switch.
bool cmp_runtime(Cmp c, float a, float b) {
  switch (c) {
  case eq:
    return compare<eq>(a, b);
  case ne:
    return compare<ne>(a, b);
  case lt:
    return compare<lt>(a, b);
  case le:
    return compare<le>(a, b);
  case gt:
    return compare<gt>(a, b);
  case ge:
    return compare<ge>(a, b);
  case equ:
    return compare<equ>(a, b);
  case neu:
    return compare<neu>(a, b);
  case ltu:
    return compare<ltu>(a, b);
  case leu:
    return compare<leu>(a, b);
  case gtu:
    return compare<gtu>(a, b);
  case geu:
    return compare<geu>(a, b);
  case num:
    return compare<num>(a, b);
  case nan:
    return compare<nan>(a, b);
  default:
    return false;
  }
}
// in.aux: 1 for bf16x2; in.imm: the true value of a half (0x3c00 / 0x3f80 as a float, 0xffff for
// integers); setp writes the low half's result to pd and the high half's to pd2.
template <bool Setp> int h_cmp_x2(Exec&, Warp& w, const Inst& in, uint32_t m) {
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  uint32_t c = in.ps >= 0 ? (w.p[in.ps] ^ in.ps_xor) : 0;
  uint32_t plo = 0, phi = 0;
  each_lane(m, [&](int l) {
    bool r[2];
    for (int h = 0; h < 2; ++h) {
      uint16_t x = uint16_t(a[l] >> (16 * h)), y = uint16_t(b[l] >> (16 * h));
      float fx = in.aux ? bf2f(x) : h2f(x), fy = in.aux ? bf2f(y) : h2f(y);
      if (in.flags & kFtz) fx = ftz32(fx), fy = ftz32(fy);
      r[h] = cmp_runtime(Cmp(in.sub & 31), fx, fy);
      if (in.ps >= 0) {
        bool cb = (c >> l) & 1;
        int bop = in.sub >> 5;
        r[h] = bop == band ? (r[h] && cb) : bop == bor ? (r[h] || cb) : (r[h] != cb);
      }
    }
    if (Setp) {
      plo |= uint32_t(r[0]) << l;
      phi |= uint32_t(r[1]) << l;
    } else {
      w.row(in.r[0])[l] = (r[0] ? uint64_t(in.imm) : 0) | ((r[1] ? uint64_t(in.imm) : 0) << 16);
    }
  });
  if (Setp) {
    set_pred(w, in.pd, m, plo);
    if (in.pd2 >= 0) set_pred(w, in.pd2, m, phi);
  }
  return kNext;
}

template <CK K, template <CK, Cmp> class H> ExecFn pick_cmp_k(Cmp c) {
  switch (c) {
  case eq:
    return &H<K, eq>::run;
  case ne:
    return &H<K, ne>::run;
  case lt:
    return &H<K, lt>::run;
  case le:
    return &H<K, le>::run;
  case gt:
    return &H<K, gt>::run;
  case ge:
    return &H<K, ge>::run;
  case lo:
    return &H<K, lo>::run;
  case ls:
    return &H<K, ls>::run;
  case hi:
    return &H<K, hi>::run;
  case hs:
    return &H<K, hs>::run;
  case equ:
    return &H<K, equ>::run;
  case neu:
    return &H<K, neu>::run;
  case ltu:
    return &H<K, ltu>::run;
  case leu:
    return &H<K, leu>::run;
  case gtu:
    return &H<K, gtu>::run;
  case geu:
    return &H<K, geu>::run;
  case num:
    return &H<K, num>::run;
  case nan:
    return &H<K, nan>::run;
  }
  return nullptr;
}
template <CK K, Cmp C> struct SetpH {
  static int run(Exec& x, Warp& w, const Inst& i, uint32_t m) { return h_setp<K, C>(x, w, i, m); }
};
template <CK K, Cmp C> struct SetH {
  static int run(Exec& x, Warp& w, const Inst& i, uint32_t m) { return h_set<K, C>(x, w, i, m); }
};

template <template <CK, Cmp> class H> ExecFn pick_cmp(Ty t, Cmp c, bool ftz) {
  bool fl = ty_float(t);
  bool unsigned_cmp = c == lo || c == ls || c == hi || c == hs;
  bool unordered = c >= equ;
  if (fl && unsigned_cmp) throw Unsupported("an unsigned comparison on a float type");
  if (!fl && unordered) throw Unsupported("an unordered comparison on an integer type");
  switch (t) {
  case Ty::s8:
    return pick_cmp_k<CK::i8, H>(c);
  case Ty::b8:
  case Ty::u8:
    return pick_cmp_k<CK::u8, H>(c);
  case Ty::s16:
    return pick_cmp_k<CK::i16, H>(c);
  case Ty::b16:
  case Ty::u16:
    return pick_cmp_k<CK::u16, H>(c);
  case Ty::s32:
    return pick_cmp_k<CK::i32, H>(c);
  case Ty::b32:
  case Ty::u32:
    return pick_cmp_k<CK::u32, H>(c);
  case Ty::s64:
    return pick_cmp_k<CK::i64, H>(c);
  case Ty::b64:
  case Ty::u64:
    return pick_cmp_k<CK::u64, H>(c);
  case Ty::f16:
    return pick_cmp_k<CK::f16, H>(c);
  case Ty::bf16:
    return pick_cmp_k<CK::bf16, H>(c);
  case Ty::f32:
    return ftz ? pick_cmp_k<CK::f32ftz, H>(c) : pick_cmp_k<CK::f32, H>(c);
  case Ty::f64:
    return pick_cmp_k<CK::f64, H>(c);
  default:
    throw Unsupported("comparison of type ." + std::string(ty_name(t)));
  }
}

Cmp parse_cmp(const Opc& o) {
  static const std::pair<const char*, Cmp> names[] = {
      {"eq", eq},   {"ne", ne},   {"lt", lt},   {"le", le},   {"gt", gt},   {"ge", ge},
      {"lo", lo},   {"ls", ls},   {"hi", hi},   {"hs", hs},   {"equ", equ}, {"neu", neu},
      {"ltu", ltu}, {"leu", leu}, {"gtu", gtu}, {"geu", geu}, {"num", num}, {"nan", nan}};
  for (auto& [n, c] : names)
    if (o.has(n)) return c;
  throw Unsupported("a comparison operator is missing");
}

} // namespace

// ---- decoding ----
bool decode_int(Dec& D, Inst& I, InstInfo& info, const Opc& o, const ptx::Instr& in) {
  const std::string& b = o.base;
  Ty t = o.type();
  auto dst_src2 = [&]() {
    need_ops(in, 3);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
    I.r[2] = D.row(op(in, 2), t);
  };
  auto dst_src1 = [&]() {
    need_ops(in, 2);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
  };
  bool is_int = t != Ty::none && !ty_float(t) && t != Ty::pred;

  // Predicate logic.
  if (t == Ty::pred && (b == "and" || b == "or" || b == "xor" || b == "not" || b == "mov")) {
    o.only({});
    I.pd = D.pred(op(in, 0));
    uint32_t x1 = 0, x2 = 0;
    if (b == "mov" && (op(in, 1).kind == ptx::Operand::Kind::integer)) {
      I.imm = op(in, 1).bits ? 1 : 0;
      I.fn = h_pconst;
      return true;
    }
    I.r[1] = uint32_t(D.pred(op(in, 1), &x1));
    I.aux = x1;
    if (b == "not" || b == "mov") {
      need_ops(in, 2);
      I.fn = b == "not" ? h_pnot : h_pmov;
      return true;
    }
    need_ops(in, 3);
    I.r[2] = uint32_t(D.pred(op(in, 2), &x2));
    I.imm = x2;
    I.fn = b == "and" ? h_pand : b == "or" ? h_por : h_pxor;
    return true;
  }

  if (b == "mov") {
    o.only({});
    need_ops(in, 2);
    const auto& s = op(in, 1);
    const auto& d = op(in, 0);
    if (d.kind == ptx::Operand::Kind::vec) { // unpack
      I.r[1] = D.row(s, t);
      I.vec = uint8_t(d.elems.size());
      I.width = uint8_t(ty_bytes(t) / I.vec);
      I.target = D.vec_rows(d, Ty::none, -1);
      I.fn = h_unpack;
      return true;
    }
    if (s.kind == ptx::Operand::Kind::vec) { // pack
      I.r[0] = D.dst(d);
      I.vec = uint8_t(s.elems.size());
      I.width = uint8_t(ty_bytes(t) / I.vec);
      I.target = D.vec_rows(s, Ty::none, -1);
      I.fn = h_pack;
      return true;
    }
    I.r[0] = D.dst(d);
    if (s.kind == ptx::Operand::Kind::ident) {
      if (s.name == "%clock" || s.name == "%clock64" || s.name == "%globaltimer" ||
          s.name == "%globaltimer_lo") {
        I.aux = s.name == "%clock" || s.name == "%globaltimer_lo" ? 0 : 1;
        I.fn = h_clock;
        return true;
      }
      uint32_t base;
      int64_t v;
      Space sp;
      if (D.symbol_value(s, base, v, sp) && base != kNoRow) { // frame-relative (local depot)
        I.r[1] = base;
        I.imm = v;
        I.fn = h_add_imm;
        return true;
      }
      if (D.is_pred_reg(s)) { // mov.u32 %r, %p (rare)
        I.ps = D.pred(s, &I.ps_xor);
        I.fn = h_pred_to_int;
        return true;
      }
    }
    I.r[1] = D.row(s, t);
    I.fn = h_mov;
    return true;
  }

  if (b == "selp") {
    o.only({});
    need_ops(in, 4);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
    I.r[2] = D.row(op(in, 2), t);
    I.ps = D.pred(op(in, 3), &I.ps_xor);
    I.fn = h_selp;
    return true;
  }
  if (b == "slct") {
    o.only({"ftz"});
    need_ops(in, 4);
    Ty ct = o.type(1);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
    I.r[2] = D.row(op(in, 2), t);
    I.r[3] = D.row(op(in, 3), ct);
    I.fn = ct == Ty::f32 ? h_slct<true> : h_slct<false>;
    return true;
  }
  if (b == "setp" || b == "set") {
    o.only({"eq",  "ne",  "lt",  "le",  "gt",  "ge",  "lo",  "ls",  "hi", "hs",  "equ",
            "neu", "ltu", "leu", "gtu", "geu", "num", "nan", "and", "or", "xor", "ftz"});
    Cmp c = parse_cmp(o);
    Ty ct = b == "setp" ? t : o.type(1);
    I.sub = o.has("and") ? band : o.has("or") ? bor : o.has("xor") ? bxor : bnone;
    if (ct == Ty::f16x2 || ct == Ty::bf16x2) {
      if (c >= lo && c <= hs) throw Unsupported("an unsigned comparison on a float type");
      need_ops(in, 3 + (I.sub != bnone ? 1 : 0));
      I.aux = ct == Ty::bf16x2;
      if (o.has("ftz")) I.flags |= kFtz;
      uint8_t bop = I.sub;
      I.sub = uint8_t(c | (bop << 5));
      if (b == "setp") {
        const auto& d = op(in, 0);
        I.pd = D.pred(d);
        if (!d.name2.empty()) I.pd2 = D.pred_name(d.name2);
        I.fn = h_cmp_x2<true>;
      } else {
        I.r[0] = D.dst(op(in, 0));
        I.imm = t == Ty::f16x2 ? 0x3c00 : t == Ty::bf16x2 ? 0x3f80 : 0xffff;
        I.fn = h_cmp_x2<false>;
      }
      I.r[1] = D.row(op(in, 1), ct);
      I.r[2] = D.row(op(in, 2), ct);
      if (bop != bnone) I.ps = D.pred(op(in, 3), &I.ps_xor);
      return true;
    }
    size_t base_ops = 3 + (I.sub != bnone ? 1 : 0);
    need_ops(in, base_ops);
    if (b == "setp") {
      const auto& d = op(in, 0);
      I.pd = D.pred(d);
      if (!d.name2.empty()) I.pd2 = D.pred_name(d.name2);
      I.fn = pick_cmp<SetpH>(ct, c, o.has("ftz"));
    } else {
      I.r[0] = D.dst(op(in, 0));
      if (t == Ty::f32)
        I.flags |= kFtz; // result 1.0f
      else
        I.imm = ty_signed(t) || t == Ty::u32 || t == Ty::b32 ? 1 : 0; // all ones
      I.fn = pick_cmp<SetH>(ct, c, o.has("ftz"));
    }
    I.r[1] = D.row(op(in, 1), ct);
    I.r[2] = D.row(op(in, 2), ct);
    if (I.sub != bnone) I.ps = D.pred(op(in, 3), &I.ps_xor);
    return true;
  }

  if (!is_int) return false;

  if (b == "add" || b == "sub") {
    bool sub = b == "sub";
    if (o.has("cc") || false) {
      o.only({"cc"});
      dst_src2();
      I.pd = D.pred_name("%__cc");
      I.fn =
          t == Ty::u64 || t == Ty::s64 || t == Ty::b64
              ? (sub ? h_carry<uint64_t, true, false, true> : h_carry<uint64_t, false, false, true>)
              : (sub ? h_carry<uint32_t, true, false, true>
                     : h_carry<uint32_t, false, false, true>);
      return true;
    }
    o.only({"sat"});
    dst_src2();
    if (o.has("sat")) {
      if (t != Ty::s32) throw Unsupported(".sat integer add is only defined for .s32");
      I.fn = sub ? &Bin<SubSat<int32_t>>::run : &Bin<AddSat<int32_t>>::run;
    } else {
      I.fn = sub ? pick_int<Sub, Bin>(t) : pick_int<Add, Bin>(t);
    }
    return true;
  }
  if (b == "addc" || b == "subc") {
    o.only({"cc"});
    dst_src2();
    I.ps = D.pred_name("%__cc");
    bool set = o.has("cc");
    if (set) I.pd = I.ps;
    bool w64 = ty_bytes(t) == 8, sub = b == "subc";
    if (w64)
      I.fn =
          sub ? (set ? h_carry<uint64_t, true, true, true> : h_carry<uint64_t, true, true, false>)
              : (set ? h_carry<uint64_t, false, true, true>
                     : h_carry<uint64_t, false, true, false>);
    else
      I.fn =
          sub ? (set ? h_carry<uint32_t, true, true, true> : h_carry<uint32_t, true, true, false>)
              : (set ? h_carry<uint32_t, false, true, true>
                     : h_carry<uint32_t, false, true, false>);
    return true;
  }
  if (b == "mul") {
    o.only({"lo", "hi", "wide"});
    dst_src2();
    if (o.has("wide")) {
      switch (t) {
      case Ty::s16:
        I.fn = &Bin<MulWide<int16_t>>::run;
        break;
      case Ty::u16:
        I.fn = &Bin<MulWide<uint16_t>>::run;
        break;
      case Ty::s32:
        I.fn = &Bin<MulWide<int32_t>>::run;
        break;
      case Ty::u32:
        I.fn = &Bin<MulWide<uint32_t>>::run;
        break;
      default:
        throw Unsupported("mul.wide of this type");
      }
    } else if (o.has("hi")) {
      I.fn = pick_int<MulHi, Bin>(t);
    } else {
      I.fn = pick_int<MulLo, Bin>(t);
    }
    return true;
  }
  if (b == "mad") {
    o.only({"lo", "hi", "wide", "sat"});
    if (o.has("sat")) throw Unsupported("mad.sat");
    need_ops(in, 4);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
    I.r[2] = D.row(op(in, 2), t);
    if (o.has("wide")) {
      Ty wt = t == Ty::s16 ? Ty::s32 : t == Ty::u16 ? Ty::u32 : t == Ty::s32 ? Ty::s64 : Ty::u64;
      I.r[3] = D.row(op(in, 3), wt);
      switch (t) {
      case Ty::s16:
        I.fn = &Tern<MadWide<int16_t>>::run;
        break;
      case Ty::u16:
        I.fn = &Tern<MadWide<uint16_t>>::run;
        break;
      case Ty::s32:
        I.fn = &Tern<MadWide<int32_t>>::run;
        break;
      case Ty::u32:
        I.fn = &Tern<MadWide<uint32_t>>::run;
        break;
      default:
        throw Unsupported("mad.wide of this type");
      }
    } else {
      I.r[3] = D.row(op(in, 3), t);
      I.fn = o.has("hi") ? pick_int<MadHi, Tern>(t) : pick_int<MadLo, Tern>(t);
    }
    return true;
  }
  struct BinEntry {
    const char* name;
    ExecFn (*pick)(Ty);
  };
  static const BinEntry bins[] = {{"min", &pick_int<Min, Bin>}, {"max", &pick_int<Max, Bin>},
                                  {"and", &pick_int<And, Bin>}, {"or", &pick_int<Or, Bin>},
                                  {"xor", &pick_int<Xor, Bin>}, {"div", &pick_int<Div, Bin>},
                                  {"rem", &pick_int<Rem, Bin>}};
  for (auto& e : bins) {
    if (b == e.name) {
      o.only({});
      dst_src2();
      I.fn = e.pick(t);
      return true;
    }
  }
  if (b == "shl" || b == "shr") {
    o.only({});
    need_ops(in, 3);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
    I.r[2] = D.row(op(in, 2), Ty::u32);
    I.fn = b == "shl" ? pick_int<Shl, Bin>(t) : pick_int<Shr, Bin>(t);
    return true;
  }
  struct UnEntry {
    const char* name;
    ExecFn (*pick)(Ty);
  };
  static const UnEntry uns[] = {{"not", &pick_int<Not, Un>},   {"cnot", &pick_int<CNot, Un>},
                                {"neg", &pick_int<Neg, Un>},   {"abs", &pick_int<Abs, Un>},
                                {"popc", &pick_int<Popc, Un>}, {"clz", &pick_int<Clz, Un>},
                                {"brev", &pick_int<Brev, Un>}};
  for (auto& e : uns) {
    if (b == e.name) {
      o.only({});
      dst_src1();
      I.fn = e.pick(t);
      return true;
    }
  }
  if (b == "bfind") {
    o.only({"shiftamt"});
    dst_src1();
    I.fn = o.has("shiftamt") ? pick_int<BfindShift, Un>(t) : pick_int<BfindPos, Un>(t);
    return true;
  }
  if (b == "bfe") {
    o.only({});
    need_ops(in, 4);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
    I.r[2] = D.row(op(in, 2), Ty::u32);
    I.r[3] = D.row(op(in, 3), Ty::u32);
    I.fn = pick_int<Bfe, Tern>(t);
    return true;
  }
  if (b == "bfi") {
    o.only({});
    need_ops(in, 5);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
    I.r[2] = D.row(op(in, 2), t);
    I.r[3] = D.row(op(in, 3), Ty::u32);
    I.r[4] = D.row(op(in, 4), Ty::u32);
    I.fn = pick_int<Bfi, Quad>(t);
    return true;
  }
  if (b == "prmt") {
    auto mode = o.one_of({"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"});
    o.only({"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"});
    need_ops(in, 4);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), Ty::b32);
    I.r[2] = D.row(op(in, 2), Ty::b32);
    I.r[3] = D.row(op(in, 3), Ty::b32);
    I.fn = mode.empty()    ? &Tern<Prmt<0>>::run
           : mode == "f4e" ? &Tern<Prmt<1>>::run
           : mode == "b4e" ? &Tern<Prmt<2>>::run
           : mode == "rc8" ? &Tern<Prmt<3>>::run
           : mode == "ecl" ? &Tern<Prmt<4>>::run
           : mode == "ecr" ? &Tern<Prmt<5>>::run
                           : &Tern<Prmt<6>>::run;
    return true;
  }
  if (b == "shf") {
    o.only({"l", "r", "wrap", "clamp"});
    need_ops(in, 4);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), Ty::b32);
    I.r[2] = D.row(op(in, 2), Ty::b32);
    I.r[3] = D.row(op(in, 3), Ty::u32);
    bool l = o.has("l"), wr = o.has("wrap");
    I.fn = l ? (wr ? &Tern<Shf<true, true>>::run : &Tern<Shf<true, false>>::run)
             : (wr ? &Tern<Shf<false, true>>::run : &Tern<Shf<false, false>>::run);
    return true;
  }
  if (b == "lop3") {
    o.only({});
    need_ops(in, 5);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
    I.r[2] = D.row(op(in, 2), t);
    I.r[3] = D.row(op(in, 3), t);
    I.r[4] = D.row(op(in, 4), Ty::u32);
    I.fn = ty_bytes(t) == 8 ? &Quad<Lop3<uint64_t>>::run : &Quad<Lop3<uint32_t>>::run;
    return true;
  }
  if (b == "dp4a" || b == "dp2a") {
    o.only({"lo", "hi"});
    need_ops(in, 4);
    Ty at = o.type(0), bt = o.type(1);
    bool as = at == Ty::s32, bs = bt == Ty::s32;
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), Ty::b32);
    I.r[2] = D.row(op(in, 2), Ty::b32);
    I.r[3] = D.row(op(in, 3), as || bs ? Ty::s32 : Ty::u32);
    if (b == "dp4a") {
      I.fn = as ? (bs ? &Tern<Dp4a<true, true>>::run : &Tern<Dp4a<true, false>>::run)
                : (bs ? &Tern<Dp4a<false, true>>::run : &Tern<Dp4a<false, false>>::run);
    } else {
      bool hi = o.has("hi");
      if (hi)
        I.fn =
            as ? (bs ? &Tern<Dp2a<true, true, true>>::run : &Tern<Dp2a<true, false, true>>::run)
               : (bs ? &Tern<Dp2a<false, true, true>>::run : &Tern<Dp2a<false, false, true>>::run);
      else
        I.fn =
            as ? (bs ? &Tern<Dp2a<true, true, false>>::run : &Tern<Dp2a<true, false, false>>::run)
               : (bs ? &Tern<Dp2a<false, true, false>>::run
                     : &Tern<Dp2a<false, false, false>>::run);
    }
    return true;
  }
  if (b == "mul24" || b == "mad24") {
    o.only({"lo", "hi"});
    if (t != Ty::s32 && t != Ty::u32) throw Unsupported(b + " of this type");
    bool hi = o.has("hi"), sg = t == Ty::s32;
    if (b == "mul24") {
      dst_src2();
      I.fn = sg ? (hi ? &Bin<Mul24<int32_t, true>>::run : &Bin<Mul24<int32_t, false>>::run)
                : (hi ? &Bin<Mul24<uint32_t, true>>::run : &Bin<Mul24<uint32_t, false>>::run);
    } else {
      need_ops(in, 4);
      I.r[0] = D.dst(op(in, 0));
      I.r[1] = D.row(op(in, 1), t);
      I.r[2] = D.row(op(in, 2), t);
      I.r[3] = D.row(op(in, 3), t);
      I.fn = sg ? (hi ? &Tern<Mad24<int32_t, true>>::run : &Tern<Mad24<int32_t, false>>::run)
                : (hi ? &Tern<Mad24<uint32_t, true>>::run : &Tern<Mad24<uint32_t, false>>::run);
    }
    return true;
  }
  if (b == "sad") {
    o.only({});
    need_ops(in, 4);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), t);
    I.r[2] = D.row(op(in, 2), t);
    I.r[3] = D.row(op(in, 3), t);
    I.fn = pick_int<Sad, Tern>(t);
    return true;
  }
  (void)info;
  return false;
}

} // namespace wb::sim
