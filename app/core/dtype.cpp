#include "dtype.hpp"

#include <algorithm>
#include <bit>

#include <cmath>
#include <cstring>
#include <limits>

namespace wb {

namespace {

struct Info {
  DType t;
  std::string_view name, ctype;
  size_t size;
};
constexpr Info kInfo[] = {
    {DType::f64, "f64", "double", 8},
    {DType::f32, "f32", "float", 4},
    {DType::f16, "f16", "__half", 2},
    {DType::bf16, "bf16", "__nv_bfloat16", 2},
    {DType::fp8e4m3, "fp8e4m3", "__nv_fp8_e4m3", 1},
    {DType::fp8e5m2, "fp8e5m2", "__nv_fp8_e5m2", 1},
    {DType::i64, "i64", "long long", 8},
    {DType::i32, "i32", "int", 4},
    {DType::u32, "u32", "unsigned int", 4},
    {DType::i16, "i16", "short", 2},
    {DType::i8, "i8", "signed char", 1},
    {DType::u8, "u8", "unsigned char", 1},
};
const Info& info(DType t) {
  return kInfo[static_cast<int>(t)];
}

// A small binary float format: `mbits` mantissa bits, exponent bias, largest finite value, and
// whether the all-ones exponent means Inf/NaN (IEEE) or only the all-ones code is NaN (e4m3fn).
struct MiniFloat {
  int ebits, mbits, bias;
  double max_finite;
  bool ieee;
};
constexpr MiniFloat kF16{5, 10, 15, 65504.0, true};
constexpr MiniFloat kBF16{8, 7, 127, 3.3895313892515355e38, true};
constexpr MiniFloat kE4M3{4, 3, 7, 448.0, false};
constexpr MiniFloat kE5M2{5, 2, 15, 57344.0, true};

// Round-to-nearest-even encode. Every step is exact in double except the one rounding.
uint32_t encode(const MiniFloat& f, double x, bool saturate) {
  uint32_t sign = std::signbit(x) ? 1u << (f.ebits + f.mbits) : 0u;
  uint32_t exp_all = (1u << f.ebits) - 1;
  if (std::isnan(x)) {
    if (f.ieee) return sign | (exp_all << f.mbits) | (1u << (f.mbits - 1));
    return sign | (exp_all << f.mbits) | ((1u << f.mbits) - 1); // e4m3: S.1111.111
  }
  double a = std::fabs(x);
  if (std::isinf(a)) {
    if (saturate || !f.ieee) return sign | encode(f, f.max_finite, false);
    return sign | (exp_all << f.mbits);
  }
  if (a == 0) return sign;
  int emin = 1 - f.bias;
  // A normal double (every value a generator makes): the rounding done on its significand's bits.
  // The same steps as below, without ilogb/ldexp, which cost more than the generators themselves.
  if (const uint64_t u = std::bit_cast<uint64_t>(a); (u >> 52) != 0) {
    const int de = int(u >> 52) - 1023; // a = m * 2^(de - 52)
    const uint64_t m = (u & ((1ull << 52) - 1)) | (1ull << 52);
    int qe = std::max(de, emin) - f.mbits; // the quantum: a multiple of 2^qe
    const int drop = qe - (de - 52);       // 52 - mbits and up
    if (drop >= 54) return sign;           // below half the smallest subnormal
    uint64_t q = m >> drop;
    const uint64_t rem = m & ((1ull << drop) - 1), half = 1ull << (drop - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    if (q == 0) return sign;
    if (q >= (2ull << f.mbits)) q >>= 1, ++qe;            // rounded up into the next binade
    if (q < (1ull << f.mbits)) return sign | uint32_t(q); // a subnormal (qe is emin - mbits)
    const int er = qe + f.mbits;
    const double r = std::bit_cast<double>(uint64_t(er + 1023) << 52 | (q - (1ull << f.mbits))
                                                                           << (52 - f.mbits));
    if (r > f.max_finite) {
      if (saturate || !f.ieee) return sign | encode(f, f.max_finite, false);
      return sign | (exp_all << f.mbits);
    }
    return sign | (uint32_t(er + f.bias) << f.mbits) | uint32_t(q - (1ull << f.mbits));
  }
  int e = std::max(std::ilogb(a), emin);
  double q = std::ldexp(1.0, e - f.mbits);
  double r = std::nearbyint(a / q) * q;
  if (r > f.max_finite) {
    if (saturate || !f.ieee) return sign | encode(f, f.max_finite, false);
    return sign | (exp_all << f.mbits);
  }
  if (r == 0) return sign;
  int er = std::ilogb(r);
  if (er < emin) return sign | uint32_t(r / std::ldexp(1.0, emin - f.mbits)); // subnormal
  uint32_t mant = uint32_t(r / std::ldexp(1.0, er - f.mbits)) - (1u << f.mbits);
  return sign | (uint32_t(er + f.bias) << f.mbits) | mant;
}

// encode(f, x, false) for a 16-bit IEEE format and a double whose exponent is in the format's
// normal range (most of what a generator makes): the rounding done on the double's own bits, a
// carry out of the significand moving into the exponent as it should (and at the top into
// infinity's pattern, which encode gives for anything rounded past the largest finite value).
// Others take encode.
template <const MiniFloat& F> inline uint32_t encode_normal16(double x) {
  static_assert(F.ieee && F.ebits + F.mbits == 15);
  constexpr int drop = 52 - F.mbits;
  const uint64_t u = std::bit_cast<uint64_t>(x), mag = u & ~(1ull << 63);
  const uint64_t e = mag >> 52;
  if (e < uint64_t(1023 + 1 - F.bias) || e > uint64_t(1023 + F.bias)) return encode(F, x, false);
  const uint64_t r = (mag + ((1ull << (drop - 1)) - 1) + ((mag >> drop) & 1)) >> drop;
  const uint32_t b = std::min(uint32_t(r - (uint64_t(1023 - F.bias) << F.mbits)),
                              uint32_t(((1u << F.ebits) - 1) << F.mbits));
  return uint32_t(u >> 48 & 0x8000) | b;
}

double decode(const MiniFloat& f, uint32_t bits) {
  uint32_t mant = bits & ((1u << f.mbits) - 1);
  uint32_t exp = (bits >> f.mbits) & ((1u << f.ebits) - 1);
  bool neg = (bits >> (f.ebits + f.mbits)) & 1;
  uint32_t exp_all = (1u << f.ebits) - 1;
  double v;
  if (f.ieee && exp == exp_all)
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (!f.ieee && exp == exp_all && mant == (1u << f.mbits) - 1)
    v = std::numeric_limits<double>::quiet_NaN();
  else if (exp == 0)
    v = std::ldexp(double(mant), 1 - f.bias - f.mbits);
  else
    v = std::ldexp(double(mant + (1u << f.mbits)), int(exp) - f.bias - f.mbits);
  return neg ? -v : v;
}

int64_t to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

template <class T> T load_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T> void store_as(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

} // namespace

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.t;
  return std::nullopt;
}
std::string_view dtype_name(DType t) {
  return info(t).name;
}
std::string_view dtype_ctype(DType t) {
  return info(t).ctype;
}
size_t dtype_size(DType t) {
  return info(t).size;
}
bool is_float(DType t) {
  return t <= DType::fp8e5m2;
}
bool is_signed_int(DType t) {
  return t == DType::i64 || t == DType::i32 || t == DType::i16 || t == DType::i8;
}

uint16_t f32_to_f16_bits(float f) {
  return uint16_t(encode(kF16, f, false));
}
float f16_bits_to_f32(uint16_t h) {
  return float(decode(kF16, h));
}
uint16_t f32_to_bf16_bits(float f) {
  return uint16_t(encode(kBF16, f, false));
}
float bf16_bits_to_f32(uint16_t h) {
  return float(decode(kBF16, h));
}
uint8_t f32_to_e4m3_bits(float f) {
  return uint8_t(encode(kE4M3, f, true));
}
float e4m3_bits_to_f32(uint8_t b) {
  return float(decode(kE4M3, b));
}
uint8_t f32_to_e5m2_bits(float f) {
  return uint8_t(encode(kE5M2, f, true));
}
float e5m2_bits_to_f32(uint8_t b) {
  return float(decode(kE5M2, b));
}

double load_element(DType t, const std::byte* p) {
  switch (t) {
  case DType::f64:
    return load_as<double>(p);
  case DType::f32:
    return load_as<float>(p);
  case DType::f16:
    return decode(kF16, load_as<uint16_t>(p));
  case DType::bf16:
    return decode(kBF16, load_as<uint16_t>(p));
  case DType::fp8e4m3:
    return decode(kE4M3, load_as<uint8_t>(p));
  case DType::fp8e5m2:
    return decode(kE5M2, load_as<uint8_t>(p));
  case DType::i64:
    return double(load_as<int64_t>(p));
  case DType::i32:
    return load_as<int32_t>(p);
  case DType::u32:
    return load_as<uint32_t>(p);
  case DType::i16:
    return load_as<int16_t>(p);
  case DType::i8:
    return load_as<int8_t>(p);
  case DType::u8:
    return load_as<uint8_t>(p);
  }
  return 0;
}

void store_element(DType t, std::byte* p, double v) {
  switch (t) {
  case DType::f64:
    store_as<double>(p, v);
    break;
  // double -> float rounds to nearest even; going through float first would round twice.
  case DType::f32:
    store_as<float>(p, static_cast<float>(v));
    break;
  case DType::f16:
    store_as<uint16_t>(p, uint16_t(encode_normal16<kF16>(v)));
    break;
  case DType::bf16:
    store_as<uint16_t>(p, uint16_t(encode_normal16<kBF16>(v)));
    break;
  case DType::fp8e4m3:
    store_as<uint8_t>(p, uint8_t(encode(kE4M3, v, true)));
    break;
  case DType::fp8e5m2:
    store_as<uint8_t>(p, uint8_t(encode(kE5M2, v, true)));
    break;
  case DType::i64:
    store_as<int64_t>(p, to_int(v));
    break;
  case DType::i32:
    store_as<int32_t>(p, int32_t(uint32_t(to_int(v))));
    break;
  case DType::u32:
    store_as<uint32_t>(p, uint32_t(to_int(v)));
    break;
  case DType::i16:
    store_as<int16_t>(p, int16_t(uint16_t(to_int(v))));
    break;
  case DType::i8:
    store_as<int8_t>(p, int8_t(uint8_t(to_int(v))));
    break;
  case DType::u8:
    store_as<uint8_t>(p, uint8_t(to_int(v)));
    break;
  }
}

uint8_t poison_byte(DType t) {
  return is_float(t) ? 0xff : 0xa5;
}

} // namespace wb
