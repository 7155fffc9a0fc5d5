// Puzzle 26 (RoPE): the reference against an independent host computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("26 rope: reference against the host") {
  // The definition: inv_freq = 10000^(-2i/dim) rounded once to f32; the angle is the f32 product
  // float(pos) * inv_freq (a double product of two floats is exact, so rounding it to float is the
  // f32 multiply); cos, sin and the rotation in long double; one rounding to bf16. The reference
  // computes in double: it may differ only where a value lies within 1e-15 of a bf16 tie.
  check_puzzle_reference("26-rope", {1e-12, 0}, [](const Env& s, const Vals& in) {
    const int64_t tokens = sz(s, "tokens"), heads = sz(s, "heads"), dim = sz(s, "dim");
    const bool interleaved = sz(s, "interleaved") != 0;
    const int64_t half = dim / 2;
    auto& x = in.at("x");
    auto& pos = in.at("pos");
    std::vector<double> y(x.size());
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < half; ++i) {
          const float inv = float(std::pow(10000.0L, -2.0L * (long double)i / (long double)dim));
          const float angle = float(double(float(pos[size_t(t)])) * double(inv));
          const long double c = std::cos((long double)angle), sn = std::sin((long double)angle);
          const size_t row = size_t((t * heads + h) * dim);
          const size_t a = row + size_t(interleaved ? 2 * i : i);
          const size_t b = row + size_t(interleaved ? 2 * i + 1 : i + half);
          const long double x0 = x[a], x1 = x[b];
          y[a] = to_bf16(x0 * c - x1 * sn);
          y[b] = to_bf16(x0 * sn + x1 * c);
        }
    return Vals{{"y", y}};
  });
}
