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
    std::vector<long double> o;
    for (int64_t bh = 0; bh < B * H; ++bh) {
      const int64_t base = bh * S * D;
      for (int64_t i = 0; i < S; ++i) {
        attention_row(q, base + i * D, k, v, base, S, D, o);
        for (int64_t d = 0; d < D; ++d) out[size_t(base + i * D + d)] = to_bf16(o[size_t(d)]);
      }
    }
    return Vals{{"o", out}};
  });
}
