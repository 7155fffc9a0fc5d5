// Puzzle 39 (Marlin-style W4A16 GEMM): the reference against an independent host computation
// (host_reference.hpp). The host unpacks B the way the packer built it, from Marlin's
// permutation (lane l's 8 places of a 16 x 16 tile listed in row order, then interleaved
// 0, 2, 4, 6, 1, 3, 5, 7), not from the reference's closed form for a code's place.
#include "common/host_reference.hpp"

#include <array>

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("39 marlin w4a16 gemm: reference against the host") {
  // Both round each weight (q - 8) s once to f16 (the product is exact in f32) and C once at the
  // end; the reference sums in double, the host in long double, so they agree to an f16 step.
  check_puzzle_reference("39-marlin-w4a16-gemm", {1e-3, 1e-6}, [](const Env& e, const Vals& in) {
    const int64_t M = sz(e, "M"), N = sz(e, "N"), K = sz(e, "K");
    REQUIRE(N % 64 == 0);
    REQUIRE(K % 128 == 0);
    auto &A = in.at("A"), &B = in.at("B"), &s = in.at("s");
    REQUIRE(int64_t(B.size()) == K / 16 * 2 * N);
    // Lane l's places (row, column) in a 16 x 16 tile, in the order of its word's nibbles.
    std::array<std::array<std::pair<int, int>, 8>, 32> place{};
    for (int l = 0; l < 32; ++l) {
      std::array<std::pair<int, int>, 8> rowwise{};
      int n = 0;
      for (int half = 0; half < 2; ++half)
        for (int r : {2 * (l % 4), 2 * (l % 4) + 1, 2 * (l % 4 + 4), 2 * (l % 4 + 4) + 1})
          rowwise[size_t(n++)] = {r, l / 4 + 8 * half};
      const int interleave[8] = {0, 2, 4, 6, 1, 3, 5, 7};
      for (int i = 0; i < 8; ++i) place[size_t(l)][size_t(i)] = rowwise[size_t(interleave[i])];
    }
    std::vector<int> q(size_t(K * N), -1);
    for (int64_t kt = 0; kt < K / 16; ++kt)
      for (int64_t c = 0; c < N / 64; ++c)
        for (int l = 0; l < 32; ++l)
          for (int j = 0; j < 4; ++j) {
            const uint32_t word = uint32_t(B[size_t(kt * 2 * N + c * 128 + 4 * l + j)]);
            for (int i = 0; i < 8; ++i) {
              const auto [r, col] = place[size_t(l)][size_t(i)];
              const int64_t k = 16 * kt + r, n = 64 * c + 16 * j + col;
              REQUIRE(q[size_t(k * N + n)] == -1); // each place once: a permutation
              q[size_t(k * N + n)] = int((word >> (4 * i)) & 15u);
            }
          }
    std::vector<double> w(size_t(K * N));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) {
        const float prod = float(q[size_t(k * N + n)] - 8) * float(s[size_t((k / 128) * N + n)]);
        w[size_t(k * N + n)] = f16_bits_to_f32(f32_to_f16_bits(prod)); // the product is exact
      }
    std::vector<double> C(size_t(M * N));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        long double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (long double)A[size_t(m * K + k)] * (long double)w[size_t(k * N + n)];
        C[size_t(m * N + n)] = f16_bits_to_f32(f32_to_f16_bits(float(double(acc))));
      }
    return Vals{{"C", C}};
  });
}
