// Puzzle 20: the reference against an independent host computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("20 mma bf16 gemm: reference against the host") {
  // C = A x B^T with B stored [N, K]. The inputs arrive as doubles decoded exactly from their bf16
  // bits. Each product of two bf16 values is exact (16 significant bits); the host sums them in
  // long double (64-bit significand: its rounding is far below f32's), the reference in double,
  // and both round to f32 once. Near an f32 rounding boundary the two may land one f32 step
  // apart, so allow one.
  check_puzzle_reference("20-mma-bf16-gemm", {1.2e-7, 1e-30}, [](const Env& s, const Vals& in) {
    int64_t M = sz(s, "M"), N = sz(s, "N"), K = sz(s, "K");
    auto &A = in.at("A"), &B = in.at("B");
    return Vals{{"C", gemm_abt(M, N, K, A, B, [](int64_t, int64_t, long double acc) {
                   return f32(double(acc));
                 })}};
  });
}
