// Puzzle 19: the reference against an independent host computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("19 wmma gemm: reference against the host") {
  // The inputs arrive as doubles decoded exactly from their f16 bits. Each product of two f16
  // values is exact (22 significant bits) and so is the host's long double sum: the products are
  // multiples of 2^-48 below 2^14 and the sums stay below 2^22, within a 64-bit significand. The
  // reference sums in double (53 bits: off by a few units in the last place at most) and rounds
  // to f32 once; near an f32 rounding boundary that may move it by one f32 step, so allow one.
  check_puzzle_reference("19-wmma-gemm", {1.2e-7, 1e-30}, [](const Env& s, const Vals& in) {
    int64_t M = sz(s, "M"), N = sz(s, "N"), K = sz(s, "K");
    auto &A = in.at("A"), &B = in.at("B");
    std::vector<double> C(size_t(M * N));
    for (int64_t r = 0; r < M; ++r)
      for (int64_t c = 0; c < N; ++c) {
        long double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (long double)A[size_t(r * K + k)] * (long double)B[size_t(k * N + c)];
        C[size_t(r * N + c)] = f32(double(acc));
      }
    return Vals{{"C", C}};
  });
}
