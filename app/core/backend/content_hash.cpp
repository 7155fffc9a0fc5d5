// content_hash (backend.hpp): one definition for the host; backend/cuda.cpp holds the GPU's.
#include "core/backend.hpp"
#include "core/generate.hpp"
#include "core/parallel.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace wb {

uint64_t content_hash_part(const std::byte* data, size_t bytes, uint64_t first_word) {
  const size_t words = bytes / 8;
  uint64_t sum = 0;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, data + i * 8, 8);
    sum += w * (2 * (first_word + i) + 1); // odd weights: any single change moves the sum
  }
  if (size_t tail = bytes % 8) {
    uint64_t w = 0;
    std::memcpy(&w, data + words * 8, tail);
    sum += w * (2 * (first_word + words) + 1);
  }
  return sum;
}

uint64_t content_hash_finish(uint64_t sum, size_t bytes) {
  return mix64(sum ^ mix64(bytes));
}

uint64_t content_hash(const std::byte* data, size_t bytes) {
  const int64_t words = int64_t((bytes + 7) / 8);
  std::vector<uint64_t> parts(std::max(1u, std::thread::hardware_concurrency()), 0);
  const int used = parallel_chunks(
      words,
      [&](int t, int64_t lo, int64_t hi) {
        const size_t end = std::min(bytes, size_t(hi) * 8);
        parts[size_t(t)] = content_hash_part(data + lo * 8, end - size_t(lo) * 8, uint64_t(lo));
      },
      1 << 20);
  uint64_t sum = 0;
  for (int t = 0; t < used; ++t) sum += parts[size_t(t)];
  return content_hash_finish(sum, bytes);
}

} // namespace wb
