#include "tensor_map.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace wb {

int swizzle_bytes(TmSwizzle s) {
  switch (s) {
  case TmSwizzle::b32:
    return 32;
  case TmSwizzle::b64:
    return 64;
  case TmSwizzle::b128:
    return 128;
  default:
    return 0;
  }
}

const char* swizzle_text(TmSwizzle s) {
  switch (s) {
  case TmSwizzle::b32:
    return "32B";
  case TmSwizzle::b64:
    return "64B";
  case TmSwizzle::b128:
    return "128B";
  default:
    return "none";
  }
}

bool parse_swizzle(const std::string& s, TmSwizzle& out) {
  for (TmSwizzle t : {TmSwizzle::none, TmSwizzle::b32, TmSwizzle::b64, TmSwizzle::b128})
    if (s == swizzle_text(t)) {
      out = t;
      return true;
    }
  return false;
}

uint64_t TensorMapSpec::box_bytes() const {
  uint64_t n = elem_bytes();
  for (int i = 0; i < rank; ++i) n *= box[size_t(i)];
  return n;
}

std::string tensor_map_problem(const TensorMapSpec& s) {
  const std::string who = fmt::format("tensor map '{}'", s.name);
  if (s.rank < 1 || s.rank > kTensorMapMaxRank)
    return fmt::format("{} has {} dimensions: a tiled tensor map has 1 to 5", who, s.rank);
  const uint64_t es = s.elem_bytes();
  for (int i = 0; i < s.rank; ++i) {
    const uint64_t d = s.dims[size_t(i)];
    if (d == 0 || d > (1ull << 32))
      return fmt::format("{}: dims[{}] = {}, where each extent must be 1 to 2^32", who, i, d);
    const uint32_t b = s.box[size_t(i)];
    if (b == 0 || b > 256)
      return fmt::format("{}: box[{}] = {}, where each box extent must be 1 to 256", who, i, b);
  }
  for (int i = 1; i < s.rank; ++i) {
    const uint64_t st = s.strides[size_t(i - 1)];
    if (st % 16 || st == 0 || st >= (1ull << 40))
      return fmt::format("{}: the stride of dimension {} is {} bytes; strides must be positive "
                         "multiples of 16 below 2^40 (pad the rows of '{}' to 16 bytes)",
                         who, i, st, s.buffer_name);
  }
  const uint64_t inner = uint64_t(s.box[0]) * es;
  if (inner % 16)
    return fmt::format("{}: the box's inner extent is {} bytes ({} x {}-byte elements); it must "
                       "be a multiple of 16 bytes",
                       who, inner, s.box[0], es);
  if (const int span = swizzle_bytes(s.swizzle); span && inner > uint64_t(span))
    return fmt::format("{}: the box's inner extent is {} bytes, more than the {}-byte span of "
                       "swizzle \"{}\": make box[0] at most {} elements",
                       who, inner, span, swizzle_text(s.swizzle), uint64_t(span) / es);
  if (s.l2_promotion != 0 && s.l2_promotion != 64 && s.l2_promotion != 128 && s.l2_promotion != 256)
    return fmt::format("{}: l2_promotion = {}; it must be 0, 64, 128 or 256", who, s.l2_promotion);
  // The furthest byte the map reaches must lie inside the buffer, or a copy reads past it.
  uint64_t last = (s.dims[0] - 1) * es + es;
  for (int i = 1; i < s.rank; ++i) last += (s.dims[size_t(i)] - 1) * s.strides[size_t(i - 1)];
  if (last > s.buffer_bytes)
    return fmt::format("{} reaches {} bytes into '{}', which has only {}: its dims and strides "
                       "describe more than the buffer holds",
                       who, last, s.buffer_name, s.buffer_bytes);
  return {};
}

namespace {

constexpr uint32_t kMagic = 0x4d544257; // "WBTM"

uint32_t check_word(const std::byte* p) {
  uint32_t h = 2166136261u; // FNV-1a over the first 124 bytes
  for (size_t i = 0; i < kTensorMapBytes - 4; ++i) h = (h ^ uint32_t(p[i])) * 16777619u;
  return h;
}

template <class T> void put(std::byte* out, size_t at, T v) {
  std::memcpy(out + at, &v, sizeof v);
}
template <class T> T get(const std::byte* in, size_t at) {
  T v;
  std::memcpy(&v, in + at, sizeof v);
  return v;
}

} // namespace

// Layout: 0 tag, 4 rank, 5 element bytes, 6 swizzle, 7 dtype, 8 global address, 16 dims - 1
// (5 x u32), 40 strides (4 x u64), 72 box (5 x u16), 82 L2 promotion (u16), 84 the name (up to
// 39 bytes, NUL-padded), 124 check word.
void encode_sim_tensor_map(const TensorMapSpec& s, uint64_t global_address,
                           std::byte out[kTensorMapBytes]) {
  std::memset(out, 0, kTensorMapBytes);
  put(out, 0, kMagic);
  put(out, 4, uint8_t(s.rank));
  put(out, 5, uint8_t(s.elem_bytes()));
  put(out, 6, uint8_t(s.swizzle));
  put(out, 7, uint8_t(s.type));
  put(out, 8, global_address);
  for (int i = 0; i < kTensorMapMaxRank; ++i)
    put(out, 16 + 4 * size_t(i), uint32_t(s.dims[size_t(i)] ? s.dims[size_t(i)] - 1 : 0));
  for (int i = 0; i < kTensorMapMaxRank - 1; ++i)
    put(out, 40 + 8 * size_t(i), s.strides[size_t(i)]);
  for (int i = 0; i < kTensorMapMaxRank; ++i)
    put(out, 72 + 2 * size_t(i), uint16_t(s.box[size_t(i)]));
  put(out, 82, uint16_t(s.l2_promotion));
  std::memcpy(out + 84, s.name.data(), std::min<size_t>(s.name.size(), 39)); // for messages
  put(out, 124, check_word(out));
}

bool decode_sim_tensor_map(const std::byte in[kTensorMapBytes], TensorMapSpec& s,
                           uint64_t& global_address) {
  if (get<uint32_t>(in, 0) != kMagic || get<uint32_t>(in, 124) != check_word(in)) return false;
  s.rank = get<uint8_t>(in, 4);
  s.type = DType(get<uint8_t>(in, 7));
  s.swizzle = TmSwizzle(get<uint8_t>(in, 6));
  global_address = get<uint64_t>(in, 8);
  for (int i = 0; i < kTensorMapMaxRank; ++i) {
    s.dims[size_t(i)] = i < s.rank ? uint64_t(get<uint32_t>(in, 16 + 4 * size_t(i))) + 1 : 1;
    s.box[size_t(i)] = i < s.rank ? get<uint16_t>(in, 72 + 2 * size_t(i)) : 1;
  }
  for (int i = 0; i < kTensorMapMaxRank - 1; ++i)
    s.strides[size_t(i)] = get<uint64_t>(in, 40 + 8 * size_t(i));
  s.l2_promotion = get<uint16_t>(in, 82);
  const char* name = reinterpret_cast<const char*>(in + 84);
  s.name.assign(name, strnlen(name, 39));
  return s.rank >= 1 && s.rank <= kTensorMapMaxRank && s.elem_bytes() == get<uint8_t>(in, 5);
}

} // namespace wb
