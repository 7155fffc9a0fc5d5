// Puzzle 23 (causal flash attention with GQA): the reference against an independent host
// computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("23 causal flash attention: reference against the host") {
  // The definition in long double, row by row: query i of head h is position i + Sk - Sq and sees
  // keys 0 .. i + Sk - Sq of KV head h / (Hq / Hkv); their scores, the max subtracted, the softmax weights, the weighted sum of V,
  // one rounding to bf16.
  check_puzzle_reference("23-causal-flash-attention", {1e-12, 0}, [](const Env& s, const Vals& in) {
    const int64_t B = sz(s, "B"), Hq = sz(s, "Hq"), Hkv = sz(s, "Hkv"), Sq = sz(s, "Sq"),
                  Sk = sz(s, "Sk"), D = sz(s, "D");
    REQUIRE(Hq % Hkv == 0);
    REQUIRE(Sq <= Sk);
    const int64_t G = Hq / Hkv;
    auto& q = in.at("q");
    auto& k = in.at("k");
    auto& v = in.at("v");
    std::vector<double> out(static_cast<size_t>(B * Hq * Sq * D));
    const long double scale = 1.0L / std::sqrt((long double)D);
    std::vector<long double> w(static_cast<size_t>(Sk));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t qb = (b * Hq + h) * Sq * D, kb = (b * Hkv + h / G) * Sk * D;
        for (int64_t i = 0; i < Sq; ++i) {
          const int64_t last = i + Sk - Sq; // the last key row i sees
          long double m = -INFINITY;
          for (int64_t j = 0; j <= last; ++j) {
            long double dot = 0;
            for (int64_t d = 0; d < D; ++d)
              dot +=
                  (long double)q[size_t(qb + i * D + d)] * (long double)k[size_t(kb + j * D + d)];
            w[size_t(j)] = dot * scale;
            m = std::max(m, w[size_t(j)]);
          }
          long double l = 0;
          for (int64_t j = 0; j <= last; ++j) l += (w[size_t(j)] = std::exp(w[size_t(j)] - m));
          for (int64_t d = 0; d < D; ++d) {
            long double acc = 0;
            for (int64_t j = 0; j <= last; ++j)
              acc += w[size_t(j)] * (long double)v[size_t(kb + j * D + d)];
            out[size_t(qb + i * D + d)] = to_bf16(acc / l);
          }
        }
      }
    return Vals{{"o", out}};
  });
}
