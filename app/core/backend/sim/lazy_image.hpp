// Memory that fills itself on first touch: the performance model's sampled runs give a kernel its
// puzzle's [perf]-size buffers (hundreds of MiB to GiBs) but run only a few of its blocks, so only
// the chunks those blocks touch are ever generated.
//
// The bytes live in a memfd mapped twice: `data()` starts inaccessible and `writer()` always
// writable. The first access to a chunk faults; a SIGSEGV handler (installed once, chained to the
// previous one) fills the chunk through the writer mapping, then opens it in the data mapping, so
// no thread ever sees a chunk half filled. The fill function runs inside that handler: it must not
// allocate or lock (the generators' range fills only compute).
//
// The simulator's hottest global accesses (a scalar load or store, h_access's) ask for their
// chunks with `ensure` instead and go through the writer mapping: the chunk is filled as the
// fault would fill it, with no signal, no mprotect and no second fault on the data mapping (17's
// sampled run touches 20 thousand chunks, about 9 us each through the fault). A chunk so filled
// stays closed in the data mapping until an access there faults, which then only opens it.
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
  std::byte* writer() const { return writer_; }
  size_t size() const { return bytes_; }
  // Chunks filled so far, in bytes.
  size_t touched_bytes() const;
  // Called from the SIGSEGV handler for an address inside data(): fills the chunk if it is not
  // yet, and opens it there.
  void materialize(size_t chunk);
  // Fills the chunks that bytes [offset, offset + n) of the image lie in, where not yet: then
  // they may be read and written through writer().
  void ensure(size_t offset, size_t n) {
    for (size_t c = offset / kChunk, last = (offset + n - 1) / kChunk; c <= last; ++c)
      if (state_[c].load(std::memory_order_acquire) < kFilled) fill_chunk(c);
  }
  bool contains(const void* p) const {
    auto a = static_cast<const std::byte*>(p);
    return a >= view_ && a < view_ + mapped_;
  }

private:
  size_t bytes_ = 0, mapped_ = 0;
  int fd_ = -1;
  std::byte* view_ = nullptr;
  std::byte* writer_ = nullptr;
  // Per chunk: untouched, being filled, filled (through the writer), filled and open in data().
  enum : uint8_t { kUntouched, kFilling, kFilled, kOpen };
  void fill_chunk(size_t chunk);
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  Fill fill_;
  int slot_ = -1;
};

} // namespace wb::sim
