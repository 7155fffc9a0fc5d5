// Puzzle 21: the reference against an independent host computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("21 gemm + bias + gelu: reference against the host") {
  // Y = bf16(gelu_tanh(A x B^T + bias)), B stored [N, K]. The host sums in long double and
  // evaluates the tanh form of GELU in long double, then rounds to bf16 straight from there
  // (to_bf16: one rounding). The reference does the same in double: where gelu(x) lies within a
  // few double ulps of a bf16 rounding boundary the two may round apart, one bf16 step (at most
  // 2^-7 of the value); anywhere else they agree exactly. Allow that one step.
  check_puzzle_reference("21-gemm-bias-gelu", {7.9e-3, 1e-30}, [](const Env& s, const Vals& in) {
    int64_t M = sz(s, "M"), N = sz(s, "N"), K = sz(s, "K");
    auto &A = in.at("A"), &B = in.at("B"), &bias = in.at("bias");
    std::vector<double> Y(size_t(M * N));
    const long double k0 = std::sqrt(2.0L / 3.14159265358979323846264338327950288L);
    for (int64_t r = 0; r < M; ++r)
      for (int64_t c = 0; c < N; ++c) {
        long double x = bias[size_t(c)];
        for (int64_t k = 0; k < K; ++k)
          x += (long double)A[size_t(r * K + k)] * (long double)B[size_t(c * K + k)];
        long double g = 0.5L * x * (1.0L + std::tanh(k0 * (x + 0.044715L * x * x * x)));
        Y[size_t(r * N + c)] = to_bf16(g);
      }
    return Vals{{"Y", Y}};
  });
}
