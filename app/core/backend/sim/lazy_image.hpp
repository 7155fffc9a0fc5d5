// Memory that fills itself on first touch: the performance model's sampled runs give a kernel its
// puzzle's [perf]-size buffers (hundreds of MiB to GiBs) but run only a few of its blocks, so only
// the chunks those blocks touch are ever generated.
//
// The bytes live in a memfd mapped twice: `data()` starts inaccessible and `writer` always
// writable. The first access to a chunk faults; a SIGSEGV handler (installed once, chained to the
// previous one) fills the chunk through the writer mapping, then opens it in the data mapping, so
// no thread ever sees a chunk half filled. The fill function runs inside that handler: it must not
// allocate or lock (the generators' range fills only compute).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace wb::sim {

class LazyImage {
public:
  // Fills bytes [offset, offset + n) of the image into `dst`.
  using Fill = std::function<void(uint64_t offset, std::byte* dst, size_t n)>;
  static constexpr size_t kChunk =
      size_t(4) << 10; // a page: sampled blocks of a grid-stride loop touch 1 KiB here and there

  // Throws std::bad_alloc when the mappings cannot be made.
  LazyImage(size_t bytes, Fill fill);
  ~LazyImage();
  LazyImage(const LazyImage&) = delete;
  LazyImage& operator=(const LazyImage&) = delete;

  std::byte* data() const { return view_; }
  size_t size() const { return bytes_; }
  // Chunks filled so far, in bytes.
  size_t touched_bytes() const;
  // Called from the SIGSEGV handler for an address inside data().
  void materialize(size_t chunk);
  bool contains(const void* p) const {
    auto a = static_cast<const std::byte*>(p);
    return a >= view_ && a < view_ + mapped_;
  }

private:
  size_t bytes_ = 0, mapped_ = 0;
  int fd_ = -1;
  std::byte* view_ = nullptr;
  std::byte* writer_ = nullptr;
  std::unique_ptr<std::atomic<uint8_t>[]> state_; // per chunk: 0 untouched, 1 filling, 2 ready
  Fill fill_;
  int slot_ = -1;
};

} // namespace wb::sim
