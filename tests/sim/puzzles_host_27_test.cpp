// Puzzle 27 (fused cross-entropy): the reference against an independent host computation
// (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("27 cross-entropy: reference against the host") {
  // loss[r] = logsumexp(x[r, :]) - x[r, target[r]] in long double, 0 where target is -100; the
  // reference computes in double and rounds once to f32.
  check_puzzle_reference("27-cross-entropy", {1e-6, 1e-9}, [](const Env& s, const Vals& in) {
    const int64_t rows = sz(s, "rows"), V = sz(s, "V");
    auto& x = in.at("logits");
    auto& target = in.at("target");
    std::vector<double> loss(size_t(rows), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t t = int64_t(target[size_t(r)]);
      if (t == -100) continue;
      REQUIRE(t >= 0);
      REQUIRE(t < V);
      const double* row = x.data() + r * V;
      const long double m = *std::max_element(row, row + V);
      long double sum = 0;
      for (int64_t j = 0; j < V; ++j) sum += std::exp((long double)row[j] - m);
      loss[size_t(r)] = f32(double(std::log(sum) + (m - (long double)row[t])));
    }
    return Vals{{"loss", loss}};
  });
}
