// Puzzle 44 (FlashAttention-3-style forward): the reference against an independent host
// computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("44 flash attention 3: reference against the host") {
  // The definition in long double, row by row, over the keys the row sees (0 .. i under the causal
  // mask): every score, its max subtracted, the weights, their sum l, the weighted sum of V rounded
  // once to bf16, and lse = max + log(l) rounded to f32. The reference computes in double; o may
  // differ only where a value lies within ~1e-15 of a bf16 tie, lse by an f32 rounding (6e-8
  // relative: the 1e-7 here).
  check_puzzle_reference("44-flash-attention-3", {1e-7, 1e-12}, [](const Env& s, const Vals& in) {
    const int64_t BH = sz(s, "B") * sz(s, "H"), S = sz(s, "S"), D = sz(s, "D");
    const bool causal = sz(s, "causal") != 0;
    auto &q = in.at("q"), &k = in.at("k"), &v = in.at("v");
    Vals out{{"o", std::vector<double>(size_t(BH * S * D))},
             {"lse", std::vector<double>(size_t(BH * S))}};
    std::vector<long double> o;
    for (int64_t bh = 0; bh < BH; ++bh) {
      const int64_t base = bh * S * D;
      for (int64_t i = 0; i < S; ++i) {
        const long double lse =
            attention_row(q, base + i * D, k, v, base, causal ? i + 1 : S, D, o);
        for (int64_t d = 0; d < D; ++d) out["o"][size_t(base + i * D + d)] = to_bf16(o[size_t(d)]);
        out["lse"][size_t(bh * S + i)] = double(float(lse));
      }
    }
    return out;
  });
}
