// Puzzle 23 (causal flash attention with GQA): the reference against an independent host
// computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("23 causal flash attention: reference against the host") {
  // The definition in long double, row by row: query i of head h is position i + Sk - Sq and sees
  // keys 0 .. i + Sk - Sq of KV head h / (Hq / Hkv); their scores, the max subtracted, the softmax
  // weights, the weighted sum of V, one rounding to bf16.
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
    std::vector<long double> o;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t qb = (b * Hq + h) * Sq * D, kb = (b * Hkv + h / G) * Sk * D;
        for (int64_t i = 0; i < Sq; ++i) {
          attention_row(q, qb + i * D, k, v, kb, i + Sk - Sq + 1, D, o);
          for (int64_t d = 0; d < D; ++d) out[size_t(qb + i * D + d)] = to_bf16(o[size_t(d)]);
        }
      }
    return Vals{{"o", out}};
  });
}
