// Puzzle 29: the reference against an independent host computation (host_reference.hpp), in
// double: amax / 127 and x / s are exact in double and rounded once to float (for a quotient of
// two floats, rounding to double and then to float gives the correctly rounded float), and
// nearbyint rounds half to even in the default rounding mode. Every output must match exactly.
#include "common/host_reference.hpp"

#include <cfenv>

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("29 int8 absmax: reference against the host") {
  REQUIRE(std::fegetround() == FE_TONEAREST);
  check_puzzle_reference("29-int8-absmax", {0, 0}, [](const Env& e, const Vals& in) {
    const int64_t rows = sz(e, "rows"), cols = sz(e, "cols");
    const std::vector<double>& x = in.at("x");
    std::vector<double> q(x.size()), y(x.size()), scale(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      double amax = 0;
      for (int64_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(x[size_t(r * cols + c)]));
      const double s = f32(amax / 127.0);
      scale[size_t(r)] = s;
      for (int64_t c = 0; c < cols; ++c) {
        const size_t i = size_t(r * cols + c);
        double v = 0;
        if (s != 0) v = std::clamp(std::nearbyint(f32(x[i] / s)), -127.0, 127.0);
        q[i] = v;
        y[i] = f32(v * s);
      }
    }
    return Vals{{"q", q}, {"scale", scale}, {"y", y}};
  });
}

TEST_CASE("29 int8 absmax: the rounding the cases must exercise") {
  // Half to even, not half away from zero (llama.cpp's roundf): the ties cases land on these.
  CHECK(std::nearbyint(0.5) == 0);
  CHECK(std::nearbyint(2.5) == 2);
  CHECK(std::nearbyint(-2.5) == -2);
  CHECK(std::round(2.5) == 3);
  // With s = 7, x * RN(1/7) misses a tie that x / 7 hits exactly (the second ties case).
  const float s = 7.0f, xv = 62.5f * 7.0f;
  CHECK(xv / s == 62.5f);
  CHECK(xv * (1.0f / s) != 62.5f);
  // A subnormal row: amax / 127 rounds to a single unit, so x / s reaches past 127 (the clamp).
  const float unit = std::ldexp(1.0f, -149), amax = 142 * unit;
  CHECK(amax / 127.0f == unit);
  CHECK(amax / (amax / 127.0f) == 142.0f);
}
