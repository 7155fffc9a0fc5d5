// Puzzle 25 (paged decode attention): the reference against an independent host computation
// (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("25 paged decode attention: reference against the host") {
  // Token j of sequence b is slot j % 16 of page block_table[b][j / 16]; only the table entries of
  // pages that hold keys are looked at (one case pads the rest with -1). The definition in long
  // double: scores over the valid keys only (slots at or past lens[b] are
  // never looked at: in some cases they are NaN), softmax with its max subtracted, the weighted
  // sum of V, one rounding to bf16. The reference computes in double: it may differ only where
  // a value lies within ~1e-15 of a bf16 tie.
  check_puzzle_reference("25-paged-decode-attention", {1e-12, 0}, [](const Env& s, const Vals& in) {
    const int64_t B = sz(s, "B"), Hq = sz(s, "Hq"), Hkv = sz(s, "Hkv"), D = sz(s, "D"),
                  MB = sz(s, "max_blocks"), NB = sz(s, "num_blocks"), L = 16 * MB;
    const int64_t G = Hq / Hkv;
    auto& q = in.at("q");
    auto& k = in.at("k_cache");
    auto& v = in.at("v_cache");
    auto& table = in.at("block_table");
    auto& lens = in.at("lens");
    std::vector<double> out(static_cast<size_t>(B * Hq * D));
    const long double scale = 1.0L / std::sqrt((long double)D);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n = int64_t(lens[size_t(b)]);
      REQUIRE((n >= 1 && n <= L));
      // The element offset of token j's row for KV head 0.
      std::vector<int64_t> row(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) {
        const int64_t page = int64_t(table[size_t(b * MB + j / 16)]);
        REQUIRE((page >= 0 && page < NB));
        row[size_t(j)] = (page * 16 + j % 16) * Hkv * D;
      }
      for (int64_t hq = 0; hq < Hq; ++hq) {
        const int64_t h = hq / G;
        std::vector<long double> sc(static_cast<size_t>(n));
        long double m = -INFINITY;
        for (int64_t j = 0; j < n; ++j) {
          long double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += (long double)q[size_t((b * Hq + hq) * D + d)] *
                   (long double)k[size_t(row[size_t(j)] + h * D + d)];
          sc[size_t(j)] = dot * scale;
          m = std::max(m, sc[size_t(j)]);
        }
        long double l = 0;
        for (auto& x : sc) l += (x = std::exp(x - m));
        for (int64_t d = 0; d < D; ++d) {
          long double acc = 0;
          for (int64_t j = 0; j < n; ++j)
            acc += sc[size_t(j)] * (long double)v[size_t(row[size_t(j)] + h * D + d)];
          out[size_t((b * Hq + hq) * D + d)] = to_bf16(acc / l);
        }
      }
    }
    return Vals{{"out", out}};
  });
}
