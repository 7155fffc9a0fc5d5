// Tensor maps (CUtensorMap): what a kernel's TMA copies (cp.async.bulk.tensor) read and write
// through. A puzzle declares one per [[tensor_map]] table; the checker turns it into a
// TensorMapSpec, and each backend encodes it as the 128-byte kernel parameter it passes: the CUDA
// backend with the driver's cuTensorMapEncodeTiled, the simulator in an encoding of its own
// (encode_sim_tensor_map) that cp.async.bulk.tensor decodes.
#pragma once
#include "dtype.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace wb {

enum class TmSwizzle : uint8_t { none, b32, b64, b128 };

// The span of a swizzle mode in bytes (0 for none) and its puzzle.toml spelling.
int swizzle_bytes(TmSwizzle s);
const char* swizzle_text(TmSwizzle s);
bool parse_swizzle(const std::string& s, TmSwizzle& out);

inline constexpr int kTensorMapMaxRank = 5;
inline constexpr size_t kTensorMapBytes = 128;

// One tiled tensor map, every extent evaluated. Dimensions go innermost first, as the driver API
// takes them; strides are in bytes, for dimensions 1 .. rank-1 (dimension 0 is contiguous).
struct TensorMapSpec {
  std::string name; // the kernel argument, for messages
  int buffer = -1;  // index of the global buffer it describes
  std::string buffer_name;
  uint64_t buffer_bytes = 0; // the buffer's data bytes: the map must stay inside them
  DType type = DType::f32;
  int rank = 0;
  std::array<uint64_t, kTensorMapMaxRank> dims{};
  std::array<uint64_t, kTensorMapMaxRank - 1> strides{};
  std::array<uint32_t, kTensorMapMaxRank> box{};
  TmSwizzle swizzle = TmSwizzle::none;
  int l2_promotion = 128; // 0, 64, 128 or 256 bytes

  uint32_t elem_bytes() const { return uint32_t(dtype_size(type)); }
  uint64_t box_bytes() const; // bytes one copy moves into shared memory
};

// Empty when the driver would accept the map; else why not, naming the map and the rule
// (cuTensorMapEncodeTiled's documented requirements, and that the map stays inside its buffer).
std::string tensor_map_problem(const TensorMapSpec& s);

// The simulator's 128-byte encoding: a tag, the global address and the map's fields, and a check
// word, so that bytes that are not a map (a garbage pointer, a changed map) are told apart.
void encode_sim_tensor_map(const TensorMapSpec& s, uint64_t global_address,
                           std::byte out[kTensorMapBytes]);
// False when the bytes are no map the simulator encoded.
bool decode_sim_tensor_map(const std::byte in[kTensorMapBytes], TensorMapSpec& s,
                           uint64_t& global_address);

// The hardware's shared-memory swizzle over a W-byte span (W = 128, 64 or 32): the 16-byte chunk
// bits of an absolute shared address XOR its bits 7 and up. TMA writes boxes and wgmma's
// descriptors read tiles with this one rule.
inline uint64_t swizzle_address(uint64_t addr, uint64_t span) {
  return addr ^ (((addr >> 7) & (span / 16 - 1)) << 4);
}

// Where an absolute shared address of a box lands under a tensor map's swizzle mode.
inline uint32_t swizzle_offset(TmSwizzle s, uint32_t addr) {
  const uint64_t span = s == TmSwizzle::b128  ? 128
                        : s == TmSwizzle::b64 ? 64
                        : s == TmSwizzle::b32 ? 32
                                              : 0;
  return span ? uint32_t(swizzle_address(addr, span)) : addr;
}

} // namespace wb
