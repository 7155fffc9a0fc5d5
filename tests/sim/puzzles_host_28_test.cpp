// Puzzle 28 (top-k of each row): the reference against an independent host computation
// (host_reference.hpp): std::partial_sort of the column numbers in the order "larger value first,
// then lower column", the first k kept. Values are copied, not computed, so both outputs are exact.
#include "common/host_reference.hpp"

#include <numeric>

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("28 top-k rows: reference against the host") {
  check_puzzle_reference("28-topk-rows", {0, 0}, [](const Env& s, const Vals& in) {
    const int64_t rows = sz(s, "rows"), V = sz(s, "V"), k = sz(s, "k");
    REQUIRE(k >= 1);
    REQUIRE(k <= std::min<int64_t>(V, 64));
    const std::vector<double>& x = in.at("x");
    std::vector<double> vals(size_t(rows * k)), idx(size_t(rows * k));
    std::vector<int64_t> cols(static_cast<size_t>(V));
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * V;
      std::iota(cols.begin(), cols.end(), int64_t{0});
      std::partial_sort(cols.begin(), cols.begin() + k, cols.end(), [&](int64_t a, int64_t b) {
        return row[a] > row[b] || (row[a] == row[b] && a < b);
      });
      for (int64_t j = 0; j < k; ++j) {
        vals[size_t(r * k + j)] = row[cols[size_t(j)]];
        idx[size_t(r * k + j)] = double(cols[size_t(j)]);
      }
    }
    return Vals{{"vals", vals}, {"idx", idx}};
  });
}
