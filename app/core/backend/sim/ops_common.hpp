// Helpers shared by the handler files: typed views of a register value and handler shapes.
// A register row holds one 64-bit slot per lane; a value narrower than 64 bits sits in the low
// bits and is always written zero-extended, so a 32-bit register can be used as an address.
#pragma once
#include "core/host_cpu.hpp"
#include "decode.hpp"
#include "machine.hpp"

#include <type_traits>

namespace wb::sim {

template <class T> inline T get(uint64_t v) {
  if constexpr (std::is_same_v<T, float>)
    return f32(v);
  else if constexpr (std::is_same_v<T, double>)
    return f64(v);
  else
    return T(v);
}
template <class T> inline uint64_t put(T v) {
  if constexpr (std::is_same_v<T, float>)
    return bits(v);
  else if constexpr (std::is_same_v<T, double>)
    return bits(v);
  else if constexpr (std::is_same_v<T, bool>)
    return v ? 1 : 0;
  else
    return uint64_t(std::make_unsigned_t<T>(v));
}

// Wrapping arithmetic type for T (no signed overflow, no promotion to int for 8/16-bit types).
template <class T>
using Wrap = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

// A whole warp's element-wise work with AVX2 where the CPU has it: the same operations on each
// lane (no fused multiply-add: fma is not enabled), four 64-bit slots at a time.
template <class F>
__attribute__((target("avx2"))) void un_full_avx2(uint64_t* d, const uint64_t* a) {
#pragma GCC ivdep
  for (int l = 0; l < kWarpSize; ++l) d[l] = F::f(a[l]);
}
template <class F>
__attribute__((target("avx2"))) void bin_full_avx2(uint64_t* d, const uint64_t* a,
                                                   const uint64_t* b) {
#pragma GCC ivdep
  for (int l = 0; l < kWarpSize; ++l) d[l] = F::f(a[l], b[l]);
}
// Shapes: F::f takes the source slots and returns the destination slot.
template <class F> int h_un(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  if (m == kFull && host_cpu::kAvx2)
    un_full_avx2<F>(d, a);
  else
    each_lane_ew(m, [&](int l) { d[l] = F::f(a[l]); });
  return kNext;
}
template <class F> int h_bin(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  if (m == kFull && host_cpu::kAvx2)
    bin_full_avx2<F>(d, a, b);
  else
    each_lane_ew(m, [&](int l) { d[l] = F::f(a[l], b[l]); });
  return kNext;
}
template <class F> int h_tern(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  const uint64_t* c = w.row(in.r[3]);
  each_lane_ew(m, [&](int l) { d[l] = F::f(a[l], b[l], c[l]); });
  return kNext;
}
template <class F> int h_quad(Exec&, Warp& w, const Inst& in, uint32_t m) {
  uint64_t* d = w.row(in.r[0]);
  const uint64_t* a = w.row(in.r[1]);
  const uint64_t* b = w.row(in.r[2]);
  const uint64_t* c = w.row(in.r[3]);
  const uint64_t* e = w.row(in.r[4]);
  each_lane_ew(m, [&](int l) { d[l] = F::f(a[l], b[l], c[l], e[l]); });
  return kNext;
}

// Writes the bits of `v` into predicate `p` for the lanes in `m` only.
inline void set_pred(Warp& w, int16_t p, uint32_t m, uint32_t v) {
  if (p >= 0) w.p[p] = (w.p[p] & ~m) | (v & m);
}

// Operand helpers for decoders.
inline const ptx::Operand& op(const ptx::Instr& in, size_t i) {
  if (i >= in.ops.size()) throw Unsupported(in.opcode + " needs more operands");
  return in.ops[i];
}
inline void need_ops(const ptx::Instr& in, size_t n) {
  if (in.ops.size() != n)
    throw Unsupported(in.opcode + " takes " + std::to_string(n) + " operands, found " +
                      std::to_string(in.ops.size()));
}

// Picks F<T> for an integer/bit type.
template <template <class> class F, template <class> class Shape> ExecFn pick_int(Ty t) {
  switch (t) {
  case Ty::b8:
  case Ty::u8:
    return &Shape<F<uint8_t>>::run;
  case Ty::s8:
    return &Shape<F<int8_t>>::run;
  case Ty::b16:
  case Ty::u16:
    return &Shape<F<uint16_t>>::run;
  case Ty::s16:
    return &Shape<F<int16_t>>::run;
  case Ty::b32:
  case Ty::u32:
    return &Shape<F<uint32_t>>::run;
  case Ty::s32:
    return &Shape<F<int32_t>>::run;
  case Ty::b64:
  case Ty::u64:
    return &Shape<F<uint64_t>>::run;
  case Ty::s64:
    return &Shape<F<int64_t>>::run;
  default:
    throw Unsupported(std::string("type .") + std::string(ty_name(t)) + " is not supported here");
  }
}
template <class F> struct Un {
  static int run(Exec& x, Warp& w, const Inst& i, uint32_t m) { return h_un<F>(x, w, i, m); }
};
template <class F> struct Bin {
  static int run(Exec& x, Warp& w, const Inst& i, uint32_t m) { return h_bin<F>(x, w, i, m); }
};
template <class F> struct Tern {
  static int run(Exec& x, Warp& w, const Inst& i, uint32_t m) { return h_tern<F>(x, w, i, m); }
};
template <class F> struct Quad {
  static int run(Exec& x, Warp& w, const Inst& i, uint32_t m) { return h_quad<F>(x, w, i, m); }
};

} // namespace wb::sim
