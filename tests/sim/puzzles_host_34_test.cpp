// Puzzle 34 (MoE grouped GEMM): the reference against an independent host computation
// (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("34 moe grouped gemm: reference against the host") {
  // The host works the other way round from the reference: expert by expert, as the grouped GEMM
  // does, it finds the assignments (t, j) with topk_ids[t][j] == e and adds weight x dot(X[t],
  // W[e][n]) to Y[t][n], in long double (every bf16 product and, at these sizes, every sum is
  // exact or nearly so). Experts nobody chose are skipped (their weights are NaN in one case).
  // Y is rounded once to bf16. The reference sums per token in double: the two can differ only
  // where a value lies within ~1e-15 of a bf16 rounding boundary, by one bf16 step (at most 2^-7
  // of the value).
  check_puzzle_reference("34-moe-grouped-gemm", {7.9e-3, 1e-30}, [](const Env& s, const Vals& in) {
    const int64_t T = sz(s, "T"), k = sz(s, "k"), E = sz(s, "E"), H = sz(s, "H"), N = sz(s, "N");
    auto& X = in.at("X");
    auto& ids = in.at("topk_ids");
    auto& wts = in.at("topk_weights");
    auto& W = in.at("W");
    std::vector<long double> acc(size_t(T * N), 0.0L);
    for (int64_t e = 0; e < E; ++e)
      for (int64_t f = 0; f < T * k; ++f) {
        const int64_t id = int64_t(ids[size_t(f)]);
        REQUIRE((id >= 0 && id < E));
        if (id != e) continue;
        const int64_t t = f / k;
        for (int64_t n = 0; n < N; ++n) {
          long double dot = 0;
          for (int64_t h = 0; h < H; ++h)
            dot += (long double)X[size_t(t * H + h)] * (long double)W[size_t((e * N + n) * H + h)];
          acc[size_t(t * N + n)] += (long double)wts[size_t(f)] * dot;
        }
      }
    std::vector<double> Y(acc.size());
    for (size_t i = 0; i < acc.size(); ++i) Y[i] = to_bf16(acc[i]);
    return Vals{{"Y", Y}};
  });
}
