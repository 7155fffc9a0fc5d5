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

// Where byte `off` of a box's shared-memory image lands under a swizzle mode: 16-byte chunk bits
// 4-6 (4-5, 4) of the absolute shared address XOR bits 7-9 (7-8, 7), as the hardware does.
inline uint32_t swizzle_offset(TmSwizzle s, uint32_t addr) {
  const uint32_t mask = s == TmSwizzle::b128  ? 7u
                        : s == TmSwizzle::b64 ? 3u
                        : s == TmSwizzle::b32 ? 1u
                                              : 0u;
  return addr ^ (((addr >> 7) & mask) << 4);
}

} // namespace wb
