// Puzzle 33: the reference against an independent host computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("33 fp8 gemm: reference against the host") {
  // The inputs arrive as doubles decoded exactly from their e4m3 codes. Each product of two e4m3
  // values is exact (4 + 4 significant bits) and a multiple of 2^-18 below 2^18, so the host's
  // long double sum is exact for any K here, and so is the reference's double sum (K = 4096 stays
  // within 49 bits). The host scales in long double and rounds once to bf16 (to_bf16); the
  // reference scales in double and rounds once with __double2bfloat16: the two differ only for a
  // product within 2^-53 of a bf16 tie, which these inputs do not produce.
  check_puzzle_reference("33-fp8-gemm", {1e-12, 1e-30}, [](const Env& s, const Vals& in) {
    int64_t M = sz(s, "M"), N = sz(s, "N"), K = sz(s, "K");
    auto &A = in.at("A"), &B = in.at("B"), &sa = in.at("a_scale"), &sb = in.at("b_scale");
    return Vals{{"C", gemm_abt(M, N, K, A, B, [&](int64_t r, int64_t c, long double acc) {
                   return to_bf16(acc * (long double)sa[size_t(r)] * (long double)sb[size_t(c)]);
                 })}};
  });
}
