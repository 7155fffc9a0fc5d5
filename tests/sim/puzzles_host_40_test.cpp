// Puzzle 40: the reference against an independent host computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("40 fp8 block-scaled gemm: reference against the host") {
  // The inputs arrive as doubles decoded exactly from their e4m3 codes. Each product of two e4m3
  // values is exact and a multiple of 2^-18 below 2^18, so a K block's sum is exact in long double
  // and in the reference's double alike. The host applies the scales block by block in long
  // double, reading a_scale as [K / 128][M] and b_scale as [cdiv(N, 128)][K / 128] written out
  // independently of the reference, and rounds once to bf16; the reference does the same in
  // double: the two can differ only for a total within 2^-50 or so of a bf16 tie.
  check_puzzle_reference(
      "40-fp8-block-scaled-gemm", {1e-12, 1e-30}, [](const Env& s, const Vals& in) {
        int64_t M = sz(s, "M"), N = sz(s, "N"), K = sz(s, "K"), KB = K / 128;
        REQUIRE(K % 128 == 0); // the format: a scale per 128 of K
        auto &A = in.at("A"), &B = in.at("B"), &sa = in.at("a_scale"), &sb = in.at("b_scale");
        REQUIRE(sa.size() == size_t(KB * M));
        REQUIRE(sb.size() == size_t((N + 127) / 128 * KB));
        std::vector<double> C(size_t(M * N));
        for (int64_t r = 0; r < M; ++r)
          for (int64_t c = 0; c < N; ++c) {
            long double total = 0;
            for (int64_t kb = 0; kb < KB; ++kb) {
              long double block = 0;
              for (int64_t k = kb * 128; k < kb * 128 + 128; ++k)
                block += (long double)A[size_t(r * K + k)] * (long double)B[size_t(c * K + k)];
              const long double a = sa[size_t(kb * M + r)], b = sb[size_t((c / 128) * KB + kb)];
              total += block * a * b;
            }
            C[size_t(r * N + c)] = to_bf16(total);
          }
        return Vals{{"C", C}};
      });
}

TEST_CASE("40 fp8 block-scaled gemm: the small-integer case is exact in f32") {
  // With codes in [-8, 8] and whole scales in [1, 4], every block sum (at most 128 x 64) and every
  // scaled total (at most 4 x 8192 x 16) is a whole number below 2^24: f32 holds each exactly, in
  // any order of addition, so any correct kernel rounds the exact total to bf16 and matches the
  // reference bit for bit. Check the bound the case's label relies on.
  const Puzzle* p = catalog().find_puzzle("40-fp8-block-scaled-gemm");
  REQUIRE(p);
  bool found = false;
  for (const Case& c : p->cases) {
    if (c.label.find("small whole numbers") == std::string::npos) continue;
    found = true;
    const int64_t K = c.sizes.at("K");
    CHECK(K / 128 * 128 * 8 * 8 * 4 * 4 < (int64_t(1) << 24));
  }
  CHECK(found);
}
