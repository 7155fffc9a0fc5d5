// Puzzle 42 (top-p sampling): the reference against an independent host computation
// (host_reference.hpp), straight from the statement: sort the columns ("larger weight first, then
// lower column"), take the shortest prefix whose mass reaches p * M, then walk the nucleus in
// column order. Sums are in long double; the weights make every f32 partial sum exact, so the
// reference's f32 sums must agree exactly. The two products the statement rounds (p * M and u * Mn)
// are rounded to f32 here too: a product of two floats is exact in double, then rounded once.
#include "common/host_reference.hpp"

#include <algorithm>
#include <numeric>

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("42 top-p sampling: reference against the host") {
  check_puzzle_reference("42-top-p-sampling", {0, 0}, [](const Env& s, const Vals& in) {
    const int64_t rows = sz(s, "rows"), V = sz(s, "V");
    const std::vector<double>&x = in.at("probs"), &top_p = in.at("top_p"), &u = in.at("u");
    std::vector<double> token(static_cast<size_t>(rows)), mass(static_cast<size_t>(rows));
    std::vector<int64_t> order(static_cast<size_t>(V));
    std::vector<char> member(static_cast<size_t>(V));
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * V;
      long double M = 0;
      for (int64_t c = 0; c < V; ++c) {
        REQUIRE(row[c] >= 0);
        M += row[c];
      }
      REQUIRE(M < 16777216.0L); // the exact-sum precondition (for integer weights)
      const double target = f32(top_p[size_t(r)] * double(M));
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return row[a] > row[b]; });
      std::fill(member.begin(), member.end(), 0);
      long double Mn = 0;
      for (int64_t i = 0; i < V; ++i) { // at least one token, then until the mass reaches p * M
        member[size_t(order[size_t(i)])] = 1;
        Mn += row[order[size_t(i)]];
        if (Mn >= target) break;
      }
      const double xs = f32(u[size_t(r)] * double(Mn));
      long double run = 0;
      int64_t pick = -1, last = -1;
      for (int64_t c = 0; c < V && pick < 0; ++c) {
        if (!member[size_t(c)]) continue;
        last = c;
        run += row[c];
        if (run > xs) pick = c;
      }
      token[size_t(r)] = double(pick >= 0 ? pick : last);
      mass[size_t(r)] = double(Mn);
    }
    return Vals{{"token", token}, {"mass", mass}};
  });
}
