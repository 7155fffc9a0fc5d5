// The wgmma GEMM cases of tests/kernels/wgmma_gemm.cu with their inputs and an independent host
// reference, shared by the simulator's test (tests/sim/sim_wgmma_test.cpp) and the GPU's
// (tests/gpu/wgmma_gpu_test.cpp). The narrow formats are decoded here from their definitions
// (no code shared with the simulator's fp.hpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace wgmma_cases {

enum class Ty { e4m3, e5m2, f16, bf16 };

struct Case {
  const char* kernel;
  Ty ty;
  int n, k;     // D is 64 x n; A is 64 x k, B is n x k
  bool swizzle; // swizzled (128, 64 or 32 bytes: see the kernel's name), else none
  bool neg_a;   // imm-scale-a = -1
};

inline const std::vector<Case>& cases() {
  static const std::vector<Case> v = {
      {"wgmma_e4m3_n64_sw128", Ty::e4m3, 64, 128, true, false},
      {"wgmma_e4m3_n256_sw128", Ty::e4m3, 256, 128, true, false},
      {"wgmma_e5m2_n64_sw128_k256", Ty::e5m2, 64, 256, true, false},
      {"wgmma_f16_n64_sw128_k128", Ty::f16, 64, 128, true, false},
      {"wgmma_bf16_n128_sw128", Ty::bf16, 128, 64, true, false},
      {"wgmma_e4m3_n64_neg_sw128", Ty::e4m3, 64, 128, true, true},
      {"wgmma_e4m3_n64_none", Ty::e4m3, 64, 128, false, false},
      {"wgmma_f16_n128_none", Ty::f16, 128, 64, false, false},
      {"wgmma_e4m3_n64_sw64", Ty::e4m3, 64, 128, true, false},
      {"wgmma_f16_n64_sw32", Ty::f16, 64, 64, true, false},
      {"wgmma_f16_n64_rega", Ty::f16, 64, 64, true, false},
      {"wgmma_e4m3_n64_rega", Ty::e4m3, 64, 128, true, false},
      {"wgmma_bf16_n128_tb_sw128", Ty::bf16, 128, 64, true, false},
      {"wgmma_f16_n64_tb_none", Ty::f16, 64, 64, false, false},
      {"wgmma_f16_n64_ta_tb_sw128", Ty::f16, 64, 64, true, false},
      {"wgmma_bf16_n128_rega_tb_sw128", Ty::bf16, 128, 128, true, false},
  };
  return v;
}

inline int elem_bytes(Ty t) {
  return t == Ty::e4m3 || t == Ty::e5m2 ? 1 : 2;
}
inline bool fp8(Ty t) {
  return elem_bytes(t) == 1;
}

// A binary float of `e` exponent and `m` mantissa bits with bias 2^(e-1) - 1; e4m3 has no
// infinities (its all-ones exponent is a normal binade; only S.1111.111 is NaN).
inline double decode(uint32_t code, int e, int m) {
  const uint32_t ex = (code >> m) & ((1u << e) - 1), man = code & ((1u << m) - 1);
  const bool neg = (code >> (e + m)) & 1;
  const int bias = (1 << (e - 1)) - 1;
  double v = ex == 0 ? std::ldexp(double(man), 1 - bias - m)
                     : std::ldexp(double(man + (1u << m)), int(ex) - bias - m);
  return neg ? -v : v;
}
inline double value(Ty t, const unsigned char* p) {
  switch (t) {
  case Ty::e4m3:
    return decode(p[0], 4, 3);
  case Ty::e5m2:
    return decode(p[0], 5, 2);
  case Ty::f16:
    return decode(uint32_t(p[0]) | uint32_t(p[1]) << 8, 5, 10);
  default:
    return decode(uint32_t(p[0]) | uint32_t(p[1]) << 8, 8, 7);
  }
}

// Random finite inputs: FP8 codes over their whole range but NaN (and e5m2's infinities), 16-bit
// values with exponents in [-6, 1] (no overflow of f32 sums, no cancellation to nothing).
inline std::vector<unsigned char> random_matrix(Ty t, int rows, int cols, uint64_t seed) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 12345;
  auto next = [&] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return uint32_t(s >> 16);
  };
  std::vector<unsigned char> v(size_t(rows) * cols * elem_bytes(t));
  for (size_t i = 0; i < size_t(rows) * cols; ++i) {
    uint32_t r = next();
    if (t == Ty::e4m3) {
      uint32_t c = r & 0xff;
      while ((c & 0x7f) == 0x7f) c = next() & 0xff;
      v[i] = uint8_t(c);
    } else if (t == Ty::e5m2) {
      uint32_t c = r & 0xff;
      while ((c & 0x7c) == 0x7c) c = next() & 0xff;
      v[i] = uint8_t(c);
    } else {
      const int e = int(r % 8) - 6; // 2^-6 .. 2^1
      const uint32_t sign = (r >> 3) & 1, mant = r >> 4;
      uint32_t code = t == Ty::f16 ? (sign << 15) | uint32_t(e + 15) << 10 | (mant & 0x3ff)
                                   : (sign << 15) | uint32_t(e + 127) << 7 | (mant & 0x7f);
      v[2 * i] = uint8_t(code), v[2 * i + 1] = uint8_t(code >> 8);
    }
  }
  return v;
}

// D = (neg_a ? -1 : 1) A B^T in long double, and the sum of the products' magnitudes (the scale
// the tolerance is a fraction of).
struct Reference {
  std::vector<double> d, mag;
};
inline Reference reference(const Case& c, const std::vector<unsigned char>& A,
                           const std::vector<unsigned char>& B) {
  const int eb = elem_bytes(c.ty);
  Reference R;
  R.d.resize(size_t(64) * c.n);
  R.mag.resize(R.d.size());
  for (int r = 0; r < 64; ++r)
    for (int n = 0; n < c.n; ++n) {
      long double acc = 0, mag = 0;
      for (int k = 0; k < c.k; ++k) {
        const long double p = (long double)value(c.ty, &A[(size_t(r) * c.k + k) * eb]) *
                              value(c.ty, &B[(size_t(n) * c.k + k) * eb]);
        acc += p;
        mag += std::fabs(p);
      }
      R.d[size_t(r) * c.n + n] = double(c.neg_a ? -acc : acc);
      R.mag[size_t(r) * c.n + n] = double(mag);
    }
  return R;
}

// How far a result may be from the exact one, as a fraction of the products' magnitudes. The
// simulator sums each instruction's products in double and rounds once to f32; the accumulator is
// f32 between the K / (32 bytes) instructions, so one f32 rounding (2^-24) each, doubled. A GPU's
// tensor cores truncate inner sums; Hopper's FP8 wgmma keeps about 14 bits of the accumulator
// between additions (DeepSeek-V3 report, section 3.3.2), so FP8 on a GPU gets 2^-9 of the
// magnitudes for these short sums, f16/bf16 (f32 accumulation, truncated) 2^-18.
inline double tolerance(const Case& c, bool gpu) {
  const int slices = c.k * elem_bytes(c.ty) / 32;
  if (!gpu) return slices * std::ldexp(1.0, -23);
  return fp8(c.ty) ? std::ldexp(1.0, -9) : std::ldexp(1.0, -18);
}

// The first element out of tolerance, or "" when all are within.
inline std::string compare(const Case& c, const Reference& R, const std::vector<float>& got,
                           bool gpu) {
  const double tol = tolerance(c, gpu);
  for (size_t i = 0; i < R.d.size(); ++i) {
    const double want = R.d[i], g = double(got[i]);
    if (!(std::fabs(g - want) <= tol * R.mag[i] + 1e-30))
      return std::string(c.kernel) + ": D[" + std::to_string(i / size_t(c.n)) + "][" +
             std::to_string(i % size_t(c.n)) + "] = " + std::to_string(g) + ", want " +
             std::to_string(want) + " (within " + std::to_string(tol * R.mag[i]) + ")";
  }
  return "";
}

} // namespace wgmma_cases
