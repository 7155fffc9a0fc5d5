// Puzzle 31 (NF4 dequantization): the reference against an independent host decode
// (host_reference.hpp): bitsandbytes' NF4 table, element 2j in the high nibble of byte j.
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("31 nf4 dequantize: reference against the host") {
  // bitsandbytes' nf4_dequantization_lut, written out again here (not read from the kernel).
  static const float kTable[16] = {-1.0f,
                                   -0.6961928009986877f,
                                   -0.5250730514526367f,
                                   -0.39491748809814453f,
                                   -0.28444138169288635f,
                                   -0.18477343022823334f,
                                   -0.09105003625154495f,
                                   0.0f,
                                   0.07958029955625534f,
                                   0.16093020141124725f,
                                   0.24611230194568634f,
                                   0.33791524171829224f,
                                   0.44070982933044434f,
                                   0.5626170039176941f,
                                   0.7229568362236023f,
                                   1.0f};
  // Exact: the f32 product rounded once to bf16 is fully specified.
  check_puzzle_reference("31-nf4-dequantize", {0, 0}, [](const Env& s, const Vals& in) {
    const int64_t n = sz(s, "n");
    REQUIRE(n % 2 == 0);
    auto& packed = in.at("packed");
    auto& absmax = in.at("absmax");
    REQUIRE(int64_t(packed.size()) == n / 2);
    REQUIRE(int64_t(absmax.size()) == (n + 63) / 64);
    std::vector<double> y(static_cast<size_t>(n));
    for (int64_t j = 0; j < n / 2; ++j) {
      const unsigned byte = unsigned(packed[size_t(j)]);
      const unsigned code[2] = {byte >> 4, byte & 15u}; // element 2j first: the high nibble
      for (int h = 0; h < 2; ++h) {
        const int64_t i = 2 * j + h;
        const float prod = kTable[code[h]] * float(absmax[size_t(i / 64)]); // one f32 rounding
        y[size_t(i)] = bf16_bits_to_f32(f32_to_bf16_bits(prod));            // one bf16 rounding
      }
    }
    return Vals{{"y", y}};
  });
}
