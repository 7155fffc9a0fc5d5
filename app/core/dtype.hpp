// Element types of puzzle buffers and scalars, and exact host conversions to and from double
// (round to nearest even, as the GPU's cvt.rn does; fp8 saturates to the largest finite value
// for e4m3 like __nv_cvt_float_to_fp8 with __NV_SATFINITE).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wb {

enum class DType { f64, f32, f16, bf16, fp8e4m3, fp8e5m2, i64, i32, u32, i16, i8, u8 };

std::optional<DType> parse_dtype(std::string_view name);
std::string_view dtype_name(DType t);
size_t dtype_size(DType t);
bool is_float(DType t);
bool is_signed_int(DType t);
// The C++ type a kernel uses for it, for messages ("const __half*").
std::string_view dtype_ctype(DType t);

// Read or write one element at p (unaligned access is fine).
double load_element(DType t, const std::byte* p);
void store_element(DType t, std::byte* p, double v); // rounds; integers wrap like a C cast

// Scalar conversions that the generators, the checker and the simulator share.
uint16_t f32_to_f16_bits(float f);
float f16_bits_to_f32(uint16_t h);
uint16_t f32_to_bf16_bits(float f);
float bf16_bits_to_f32(uint16_t h);
uint8_t f32_to_e4m3_bits(float f); // saturating, NaN -> 0x7f
float e4m3_bits_to_f32(uint8_t b);
uint8_t f32_to_e5m2_bits(float f); // saturating to +-57344, NaN -> 0x7f
float e5m2_bits_to_f32(uint8_t b);

// The byte an unwritten output element is filled with: 0xff makes every float type a NaN.
// Integers get a pattern unlikely to be a right answer.
uint8_t poison_byte(DType t);

} // namespace wb
