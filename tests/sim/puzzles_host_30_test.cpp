// Puzzle 30: the reference against an independent host computation (host_reference.hpp), with an
// e4m3 encoder written here (not core/dtype.cpp's): round to nearest even on the format's own
// grid, saturate to +-448. The codes are compared exactly, the sign of zero included, and the
// reference runs twice: compiled for compute_80 (cuda_fp8.h's software conversion) and for
// compute_90 (cvt.rn.satfinite.e4m3x2.f32, the instruction the H200 runs); the solution too.
#include "common/host_reference.hpp"

#include <cfenv>

using namespace wb;
using namespace wb::host_ref;

namespace {

// e4m3: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, S.1111.111 is NaN, so the
// largest finite value is S.1111.110 = 1.75 * 2^8 = 448. Subnormals step by 2^-9 below 2^-6.
uint8_t e4m3_encode(double v) {
  if (std::isnan(v)) return 0x7f;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const double a = std::fabs(v);
  if (a >= 448) return sign | 0x7e; // satfinite
  int e2 = 0;
  std::frexp(a, &e2);                               // a = m * 2^e2, m in [0.5, 1)
  const int E = std::max(e2 - 1, -6);               // the binade; subnormals share 2^-6's step
  const double step = std::ldexp(1.0, E - 3);       // 3 mantissa bits
  const double r = std::nearbyint(a / step) * step; // a / step is exact: ties go to even
  if (r == 0) return sign;
  int er = 0;
  std::frexp(r, &er); // r may have carried into the next binade
  const int Er = er - 1;
  if (Er < -6) return uint8_t(sign | uint8_t(r / std::ldexp(1.0, -9))); // subnormal: 0.mmm
  const int mant = int(r / std::ldexp(1.0, Er - 3)) - 8;                // 1.mmm
  return uint8_t(sign | ((Er + 7) << 3) | mant);
}

double e4m3_decode(uint8_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  double v = (e == 15 && m == 7) ? NAN
             : e == 0            ? std::ldexp(double(m), -9)
                                 : std::ldexp(double(8 + m), e - 10);
  return (b & 0x80) ? -v : v;
}

// Scales and codes for one case, from the inputs the reference saw.
Vals host_fp8(const Env& e, const Vals& in) {
  const int64_t rows = sz(e, "rows"), cols = sz(e, "cols");
  const std::vector<double>& x = in.at("x");
  const std::vector<double>& st = in.at("static_scale");
  std::vector<double> q(x.size()), scale(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double s = st[size_t(r)];
    if (!(s > 0)) {
      double amax = 0;
      for (int64_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(x[size_t(r * cols + c)]));
      s = f32(std::max(amax, f32(1e-10)) / 448.0);
    }
    scale[size_t(r)] = s;
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = size_t(r * cols + c);
      q[i] = e4m3_decode(e4m3_encode(f32(x[i] / s))); // the f32 quotient, then e4m3
    }
  }
  return Vals{{"q", q}, {"scale", scale}};
}

} // namespace

TEST_CASE("30 fp8 e4m3: the host encoder on the format's edges") {
  CHECK(e4m3_encode(448) == 0x7e);
  CHECK(e4m3_encode(449) == 0x7e); // satfinite
  CHECK(e4m3_encode(-1e9) == 0xfe);
  CHECK(e4m3_encode(NAN) == 0x7f);
  CHECK(e4m3_encode(1.0) == 0x38);
  CHECK(e4m3_encode(1.0625) == 0x38); // tie between 1 and 1.125: to the even mantissa
  CHECK(e4m3_encode(1.1875) == 0x3a); // tie between 1.125 and 1.25: up, to the even one
  CHECK(e4m3_encode(15.5) ==
        0x58); // 15.5 is the tie between 15 and 16: up to 16 (exponent carries)
  CHECK(e4m3_encode(std::ldexp(1.0, -9)) == 0x01);  // the smallest subnormal
  CHECK(e4m3_encode(std::ldexp(1.0, -10)) == 0x00); // half of it: a tie, to zero
  CHECK(e4m3_encode(std::ldexp(1.5, -10)) == 0x01);
  CHECK(e4m3_encode(std::ldexp(7.5, -9)) == 0x08); // the largest subnormal rounds up to 2^-6
  CHECK(e4m3_encode(-0.0) == 0x80);
  for (int b = 0; b < 256; ++b)
    if ((b & 0x7f) != 0x7f) CHECK(e4m3_encode(e4m3_decode(uint8_t(b))) == b);
  // The encoder against core/dtype.cpp's (which the checker uses to decode).
  for (int b = 0; b < 256; ++b)
    if ((b & 0x7f) != 0x7f) CHECK(e4m3_decode(uint8_t(b)) == double(e4m3_bits_to_f32(uint8_t(b))));
}

// The solution goes through the same check: its packed conversion (__nv_fp8x4_e4m3) is another
// path to the same codes. Both run at the puzzle's default BLOCK.
TEST_CASE("30 fp8 e4m3: reference and solution against the host, compute_80 and compute_90") {
  REQUIRE(std::fegetround() == FE_TONEAREST);
  const Puzzle* p = catalog().find_puzzle("30-fp8-e4m3-quantize");
  REQUIRE(p);
  REQUIRE(fs::exists(p->solution));
  for (const fs::path& file : {p->reference, p->solution})
    for (const char* arch : {"compute_80", "compute_90"}) {
      CAPTURE(file.filename().string());
      CAPTURE(arch);
      CompileOptions co = sim().compile_options();
      co.arch = arch;
      for (auto& t : p->tunables) co.defines[t.name] = t.default_value;
      Program prog = compile_source(slurp(file), file.filename().string(), co);
      REQUIRE_MESSAGE(prog.ok, prog.log);
      if (std::string(arch) == "compute_90")
        CHECK(prog.ptx.find("cvt.rn.satfinite.e4m3x2.f32") != std::string::npos);
      else
        CHECK(prog.ptx.find("cvt.rn.satfinite.e4m3x2.f32") == std::string::npos);
      for (size_t ci = 0; ci < p->cases.size(); ++ci) {
        const Case& c = p->cases[ci];
        std::string label = c.label;
        for (auto& [k, v] : c.sizes) label += fmt::format(" {}={}", k, v);
        CAPTURE(label);
        Vals got = run_reference(*p, prog, c, ci, 0x5eed3000ull + ci);
        Vals want = host_fp8(c.sizes, got);
        for (auto& [name, expect] : want) {
          const std::vector<double>& actual = got.at(name);
          REQUIRE(actual.size() == expect.size());
          size_t bad = 0, first = 0;
          for (size_t i = 0; i < expect.size(); ++i) {
            bool same =
                std::isnan(expect[i])
                    ? std::isnan(actual[i])
                    : actual[i] == expect[i] && std::signbit(actual[i]) == std::signbit(expect[i]);
            if (!same && bad++ == 0) first = i;
          }
          CHECK_MESSAGE(bad == 0,
                        fmt::format("{}: {} of {} differ, first {}[{}] = {} where the host says {}",
                                    name, bad, expect.size(), name, first,
                                    bad ? actual[first] : 0.0, bad ? expect[first] : 0.0));
        }
      }
    }
}
