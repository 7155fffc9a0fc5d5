// Puzzle 22 (flash attention): the reference against an independent host computation
// (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("22 flash attention: reference against the host") {
  // The definition in long double, row by row: every score, its max subtracted, the softmax
  // weights, the weighted sum of V, one rounding to bf16. The reference computes in double: it
  // may differ only where a value lies within ~1e-15 of a bf16 tie.
  check_puzzle_reference("22-flash-attention", {1e-12, 0}, [](const Env& s, const Vals& in) {
    const int64_t B = sz(s, "B"), H = sz(s, "H"), S = sz(s, "S"), D = sz(s, "D");
    auto& q = in.at("q");
    auto& k = in.at("k");
    auto& v = in.at("v");
    std::vector<double> out(static_cast<size_t>(B * H * S * D));
    const long double scale = 1.0L / std::sqrt((long double)D);
    std::vector<long double> w(static_cast<size_t>(S));
    for (int64_t bh = 0; bh < B * H; ++bh) {
      const int64_t base = bh * S * D;
      for (int64_t i = 0; i < S; ++i) {
        long double m = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          long double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot +=
                (long double)q[size_t(base + i * D + d)] * (long double)k[size_t(base + j * D + d)];
          w[size_t(j)] = dot * scale;
          m = std::max(m, w[size_t(j)]);
        }
        long double l = 0;
        for (int64_t j = 0; j < S; ++j) l += (w[size_t(j)] = std::exp(w[size_t(j)] - m));
        for (int64_t d = 0; d < D; ++d) {
          long double acc = 0;
          for (int64_t j = 0; j < S; ++j)
            acc += w[size_t(j)] * (long double)v[size_t(base + j * D + d)];
          out[size_t(base + i * D + d)] = to_bf16(acc / l);
        }
      }
    }
    return Vals{{"o", out}};
  });
}
