// Puzzle 41: the reference against an independent host computation (host_reference.hpp), with an
// e4m3 encoder written from the format: round to nearest even on its own grid, saturate to +-448,
// NaN to 0x7f. The host follows the README's formula in the order the reference specifies (the sum
// of squares in double, channel 0 first; y rounded once to f32), so the codes and the scales are
// compared exactly, NaN where the host has NaN (the +-Inf case). The reference runs compiled for
// compute_80 (cuda_fp8.h's software conversion) and compute_90 (cvt.rn.satfinite.e4m3x2.f32).
#include "common/host_reference.hpp"

#include <cfenv>

using namespace wb;
using namespace wb::host_ref;

namespace {

// e4m3: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, S.1111.111 is NaN, so the
// largest finite value is S.1111.110 = 448. Subnormals step by 2^-9 below 2^-6.
uint8_t encode(double v) {
  if (std::isnan(v)) return 0x7f;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const double a = std::fabs(v);
  if (a >= 448) return sign | 0x7e;
  int e2 = 0;
  std::frexp(a, &e2);
  const int E = std::max(e2 - 1, -6);
  const double step = std::ldexp(1.0, E - 3);
  const double r = std::nearbyint(a / step) * step; // exact quotient: ties go to even
  if (r == 0) return sign;
  int er = 0;
  std::frexp(r, &er);
  const int Er = er - 1;
  if (Er < -6) return uint8_t(sign | uint8_t(r / std::ldexp(1.0, -9)));
  return uint8_t(sign | ((Er + 7) << 3) | (int(r / std::ldexp(1.0, Er - 3)) - 8));
}

double decode(uint8_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  double v = (e == 15 && m == 7) ? NAN
             : e == 0            ? std::ldexp(double(m), -9)
                                 : std::ldexp(double(8 + m), e - 10);
  return (b & 0x80) ? -v : v;
}

Vals host_41(const Env& e, const Vals& in) {
  const int64_t T = sz(e, "T"), H = sz(e, "H"), nb = H / 128;
  const std::vector<double>& x = in.at("x");
  const std::vector<double>& g = in.at("gamma");
  std::vector<double> q(x.size()), scales(size_t(nb * T));
  const double eps = f32(1e-6);
  for (int64_t t = 0; t < T; ++t) {
    double ss = 0;
    for (int64_t c = 0; c < H; ++c) ss += x[size_t(t * H + c)] * x[size_t(t * H + c)];
    const double rstd = 1.0 / std::sqrt(ss / double(H) + eps);
    for (int64_t b = 0; b < nb; ++b) {
      double y[128];
      double amax = 0;
      for (int j = 0; j < 128; ++j) {
        const int64_t c = b * 128 + j;
        y[j] = f32(x[size_t(t * H + c)] * rstd * g[size_t(c)]);
        if (!std::isnan(y[j])) amax = std::max(amax, std::fabs(y[j])); // the max ignores NaN
      }
      const double s = f32(std::max(amax, f32(1e-4)) / 448.0);
      scales[size_t(b * T + t)] = s;
      for (int j = 0; j < 128; ++j)
        q[size_t(t * H + b * 128 + j)] = decode(encode(f32(y[j] / s))); // the f32 quotient
    }
  }
  return Vals{{"q", q}, {"scales", scales}};
}

} // namespace

TEST_CASE("41 rmsnorm fp8: the host encoder on the format's edges") {
  CHECK(encode(448) == 0x7e);
  CHECK(encode(1e9) == 0x7e);
  CHECK(encode(NAN) == 0x7f);
  CHECK(encode(280) == 0x79); // between 256 and 288, nearer 288: the README's example
  CHECK(encode(272) == 0x78); // the tie between 256 and 288: to the even mantissa, 256
  CHECK(encode(224) == 0x76);
  CHECK(decode(0x79) == 288);
  for (int b = 0; b < 256; ++b)
    if ((b & 0x7f) != 0x7f) CHECK(encode(decode(uint8_t(b))) == b);
  for (int b = 0; b < 256; ++b)
    if ((b & 0x7f) != 0x7f) CHECK(decode(uint8_t(b)) == double(e4m3_bits_to_f32(uint8_t(b))));
}

TEST_CASE("41 rmsnorm fp8: the reference against the host, compute_80 and compute_90") {
  REQUIRE(std::fegetround() == FE_TONEAREST);
  const Puzzle* p = catalog().find_puzzle("41-rmsnorm-fp8-block-quant");
  REQUIRE(p);
  for (const char* arch : {"compute_80", "compute_90"}) {
    CAPTURE(arch);
    CompileOptions co = sim().compile_options();
    co.arch = arch;
    for (auto& t : p->tunables) co.defines[t.name] = t.default_value;
    Program prog = compile_source(slurp(p->reference), "reference.cu", co);
    REQUIRE_MESSAGE(prog.ok, prog.log);
    for (size_t ci = 0; ci < p->cases.size(); ++ci) {
      const Case& c = p->cases[ci];
      std::string label = c.label;
      for (auto& [k, v] : c.sizes) label += fmt::format(" {}={}", k, v);
      CAPTURE(label);
      Vals got = run_reference(*p, prog, c, ci, 0x5eed4100ull + ci);
      Vals want = host_41(c.sizes, got);
      size_t nans = 0;
      for (auto& [name, expect] : want) {
        const std::vector<double>& actual = got.at(name);
        REQUIRE(actual.size() == expect.size());
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < expect.size(); ++i) {
          nans += std::isnan(expect[i]);
          bool same = std::isnan(expect[i]) ? std::isnan(actual[i])
                                            : actual[i] == expect[i] && std::signbit(actual[i]) ==
                                                                            std::signbit(expect[i]);
          if (!same && bad++ == 0) first = i;
        }
        CHECK_MESSAGE(bad == 0,
                      fmt::format("{}: {} of {} differ, first {}[{}] = {} where the host says {}",
                                  name, bad, expect.size(), name, first, bad ? actual[first] : 0.0,
                                  bad ? expect[first] : 0.0));
      }
      // The +-Inf case holds NaN codes where x is infinite, and only there.
      if (c.label.find("Inf") != std::string::npos)
        CHECK(nans > 0);
      else
        CHECK(nans == 0);
    }
  }
}
