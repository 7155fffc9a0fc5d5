// Puzzle 32 (W4A16 GEMV on q4_0 weights): the reference against an independent host decode of
// llama.cpp's block_q4_0 (host_reference.hpp), summed in long double.
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("32 w4a16 gemv: reference against the host") {
  // The reference sums in double and rounds to f16 once; the host sums in long double. Both are
  // far more precise than an f16 step (2^-11 relative), so they agree to that step.
  check_puzzle_reference("32-w4a16-gemv", {1e-3, 1e-6}, [](const Env& s, const Vals& in) {
    const int64_t M = sz(s, "M"), K = sz(s, "K");
    REQUIRE(K % 32 == 0);
    const int64_t nb = K / 32;
    auto& W = in.at("W");
    auto& x = in.at("x");
    REQUIRE(int64_t(W.size()) == M * nb * 18);
    std::vector<double> y(static_cast<size_t>(M));
    for (int64_t r = 0; r < M; ++r) {
      long double acc = 0;
      for (int64_t b = 0; b < nb; ++b) {
        const double* blk = W.data() + (r * nb + b) * 18;
        const uint16_t bits = uint16_t(unsigned(blk[0]) | unsigned(blk[1]) << 8);
        const long double d = f16_bits_to_f32(bits);
        REQUIRE(std::isfinite(double(d)));
        for (int j = 0; j < 32; ++j) {
          const unsigned q = unsigned(blk[2 + j % 16]);
          const int nib = int(j < 16 ? q & 15u : q >> 4) - 8;
          acc += (long double)nib * d * (long double)x[size_t(b * 32 + j)];
        }
      }
      y[size_t(r)] = f16_bits_to_f32(f32_to_f16_bits(float(double(acc))));
    }
    return Vals{{"y", y}};
  });
}
