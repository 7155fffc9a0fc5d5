// What the benchmarks share: a filled f32 buffer with 256-byte guards.
#pragma once
#include "core/backend.hpp"

#include <cstring>
#include <string>

namespace wb::bench {

inline HostBuffer filled_f32(const std::string& name, size_t n, float v = 0.0f) {
  HostBuffer b;
  b.name = name;
  b.type = DType::f32;
  b.data_bytes = n * 4;
  b.guard_bytes = 256;
  b.image.assign(512 + n * 4, std::byte{0});
  for (size_t i = 0; i < n; ++i) std::memcpy(b.image.data() + 256 + 4 * i, &v, 4);
  return b;
}

} // namespace wb::bench
