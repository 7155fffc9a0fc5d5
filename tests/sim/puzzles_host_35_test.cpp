// Puzzle 35 (LayerNorm backward): the reference against an independent host computation
// (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("35 layernorm backward: reference against the host") {
  // In long double, straight from the README's formulas: x-hat = (x - mean) rstd, g = gamma dy,
  // c1 = mean(x-hat g), c2 = mean(g), dx = rstd (g - c2 - x-hat c1); dgamma and dbeta are column
  // sums over every row. The reference stores dx through f32 to bf16 and the sums as f32, so the
  // host rounds the same way; what remains is double against long double, far below 1e-6.
  check_puzzle_reference("35-layernorm-backward", {1e-6, 1e-9}, [](const Env& s, const Vals& in) {
    const int64_t M = sz(s, "M"), N = sz(s, "N");
    auto& x = in.at("x");
    auto& dy = in.at("dy");
    auto& gamma = in.at("gamma");
    auto& mean = in.at("mean");
    auto& rstd = in.at("rstd");
    std::vector<double> dx(static_cast<size_t>(M * N));
    std::vector<long double> dg(static_cast<size_t>(N), 0.0L), db(static_cast<size_t>(N), 0.0L);
    for (int64_t r = 0; r < M; ++r) {
      const long double mu = mean[size_t(r)], rs = rstd[size_t(r)];
      long double c1 = 0, c2 = 0;
      for (int64_t c = 0; c < N; ++c) {
        const size_t i = size_t(r * N + c);
        const long double xh = ((long double)x[i] - mu) * rs,
                          g = (long double)gamma[size_t(c)] * dy[i];
        c1 += xh * g;
        c2 += g;
      }
      c1 /= N;
      c2 /= N;
      for (int64_t c = 0; c < N; ++c) {
        const size_t i = size_t(r * N + c);
        const long double xh = ((long double)x[i] - mu) * rs,
                          g = (long double)gamma[size_t(c)] * dy[i];
        dx[i] = to_bf16(f32(double(rs * (g - c2 - xh * c1))));
        dg[size_t(c)] += dy[i] * xh;
        db[size_t(c)] += dy[i];
      }
    }
    std::vector<double> dgamma(static_cast<size_t>(N)), dbeta(static_cast<size_t>(N));
    for (int64_t c = 0; c < N; ++c) {
      dgamma[size_t(c)] = f32(double(dg[size_t(c)]));
      dbeta[size_t(c)] = f32(double(db[size_t(c)]));
    }
    return Vals{{"dx", dx}, {"dgamma", dgamma}, {"dbeta", dbeta}};
  });
}
