// Puzzle 43 (TMA-fed, warp-specialised persistent GEMM): the reference against an independent
// host computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("43 tma warp-specialized gemm: reference against the host") {
  // C = A x B^T with B stored [N, K]. The inputs arrive as doubles decoded exactly from their bf16
  // bits; every product is exact, the host sums them in long double, the reference in double (at
  // these sizes both are exact or within ~1e-15 of it). Both round once to bf16, so they can
  // differ only where a sum lies next to a bf16 rounding boundary, by one bf16 step: at most 2^-7
  // of the value. The tensor maps the kernel also gets are not the reference's concern.
  check_puzzle_reference(
      "43-tma-warp-specialized-gemm", {7.9e-3, 1e-30}, [](const Env& s, const Vals& in) {
        const int64_t M = sz(s, "M"), N = sz(s, "N"), K = sz(s, "K");
        auto &A = in.at("A"), &B = in.at("B");
        return Vals{{"C", gemm_abt(M, N, K, A, B, [](int64_t, int64_t, long double acc) {
                       return to_bf16(acc);
                     })}};
      });
}
