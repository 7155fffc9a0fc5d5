// The simulator's conversion shortcuts give exactly the bits of its general rounding: every f16 and
// bf16 value widened, and f32 values narrowed over every exponent (each with mantissas at the
// rounding boundaries and a spread of others), both signs, infinities and NaNs.
#include "core/backend/sim/fp_fast.hpp"
#include "core/dtype.hpp"

#include <bit>
#include <cstdint>
#include <doctest/doctest.h>
#include <initializer_list>

using namespace wb::sim;

namespace {
uint32_t widened(uint16_t h, const FFmt& f) {
  const double v = fmt_to_double(h, f);
  return v != v ? 0x7fffffffu : std::bit_cast<uint32_t>(float(v));
}
} // namespace

TEST_CASE("f16 and bf16 widen to f32 exactly, every value") {
  for (uint32_t h = 0; h < 65536; ++h) {
    CHECK_MESSAGE(f16_to_f32_bits(uint16_t(h)) == widened(uint16_t(h), kF16), "f16 ", h);
    CHECK_MESSAGE(bf16_to_f32_bits(uint16_t(h)) == widened(uint16_t(h), kBF16), "bf16 ", h);
  }
}

TEST_CASE("f32 rounds to f16 and bf16 to nearest even as the general rounding does") {
  int64_t checked = 0, wrong = 0;
  auto check = [&](uint32_t u) {
    const double d = double(std::bit_cast<float>(u));
    const bool f16_ok = f32_to_f16_rn(u) == uint16_t(round_double(d, 0, kF16, {Rnd::rn}));
    const bool bf16_ok = f32_to_bf16_rn(u) == uint16_t(round_double(d, 0, kBF16, {Rnd::rn}));
    if (!f16_ok || !bf16_ok) {
      if (++wrong < 5) FAIL_CHECK("bits ", u, ": f16 ", f16_ok, ", bf16 ", bf16_ok);
    }
    ++checked;
  };
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t ex = 0; ex < 256; ++ex) {
      const uint32_t hi = sign << 31 | ex << 23;
      // Around every rounding boundary of f16 (13 dropped bits) and bf16 (16), and their halves.
      for (uint32_t base :
           {0u, 0x1000u, 0x2000u, 0x8000u, 0x10000u, 0x18000u, 0x7fe000u, 0x7f0000u})
        for (int32_t d = -2; d <= 2; ++d) check(hi | (uint32_t(int32_t(base) + d) & 0x7fffffu));
      for (uint32_t m = 0; m < 0x800000u; m += 4099) check(hi | m);
    }
  CHECK(wrong == 0);
  CHECK(checked > 1000000);
}

TEST_CASE("the generators' encoders round as the simulator does (two implementations agree)") {
  int64_t wrong = 0;
  auto check = [&](uint32_t u) {
    const float f = std::bit_cast<float>(u);
    if (f != f) return; // NaN: the generators never make one, and the two keep different signs
    const double d = f;
    const bool f16 = wb::f32_to_f16_bits(f) == f32_to_f16_rn(u);
    const bool bf16 = wb::f32_to_bf16_bits(f) == f32_to_bf16_rn(u);
    const bool e4m3 = wb::f32_to_e4m3_bits(f) ==
                      uint8_t(round_double(d, 0, kE4M3, {Rnd::rn, /*satfinite=*/true}));
    const bool e5m2 = wb::f32_to_e5m2_bits(f) ==
                      uint8_t(round_double(d, 0, kE5M2, {Rnd::rn, /*satfinite=*/true}));
    if (!(f16 && bf16 && e4m3 && e5m2) && ++wrong < 5)
      FAIL_CHECK("bits ", u, ": f16 ", f16, " bf16 ", bf16, " e4m3 ", e4m3, " e5m2 ", e5m2);
  };
  for (uint64_t i = 0; i <= 0xffffffffull; i += 9973) check(uint32_t(i));
  for (uint32_t ex = 0; ex < 256; ++ex)
    for (uint32_t m : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x7fffu, 0x8000u, 0x8001u, 0x7fffffu})
      for (uint32_t s : {0u, 1u}) check(s << 31 | ex << 23 | m);
  CHECK(wrong == 0);
}
