#include "lazy_image.hpp"

#include <csignal>
#include <cstring>
#include <mutex>
#include <new>
#include <sys/mman.h>
#include <unistd.h>

namespace wb::sim {

namespace {

// The images alive now, for the handler (a fixed table: the handler must not allocate or lock).
constexpr int kSlots = 256;
std::atomic<LazyImage*> g_images[kSlots];
struct sigaction g_previous;
std::mutex g_install;

void on_segv(int sig, siginfo_t* si, void* ctx) {
  for (auto& slot : g_images) {
    LazyImage* img = slot.load(std::memory_order_acquire);
    if (img && img->contains(si->si_addr)) {
      img->materialize(size_t(static_cast<std::byte*>(si->si_addr) - img->data()) /
                       LazyImage::kChunk);
      return; // the access runs again and now succeeds
    }
  }
  // Not ours: hand it on (the previous handler, or the default action: a crash as usual). A
  // handler we hand on to may raise the signal again, back into us: then crash plainly.
  static volatile sig_atomic_t handing_on = 0;
  if (handing_on) {
    signal(SIGSEGV, SIG_DFL);
    return;
  }
  handing_on = 1;
  if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
    g_previous.sa_sigaction(sig, si, ctx);
    return;
  }
  sigaction(SIGSEGV, &g_previous, nullptr);
}

// Checked at every new image, not once: a test framework (or anything else) may install its own
// crash handler after ours, and ours must sit in front of it while an image is alive.
void install_handler() {
  std::lock_guard lock(g_install);
  struct sigaction now {};
  sigaction(SIGSEGV, nullptr, &now);
  if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_segv) return;
  struct sigaction sa {};
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_previous);
}

} // namespace

LazyImage::LazyImage(size_t bytes, Fill fill) : bytes_(bytes), fill_(std::move(fill)) {
  mapped_ = std::max<size_t>(1, (bytes + kChunk - 1) / kChunk) * kChunk;
  fd_ = memfd_create("warpbook-lazy", MFD_CLOEXEC);
  if (fd_ < 0 || ftruncate(fd_, off_t(mapped_)) != 0) {
    if (fd_ >= 0) close(fd_);
    throw std::bad_alloc();
  }
  void* v = mmap(nullptr, mapped_, PROT_NONE, MAP_SHARED | MAP_NORESERVE, fd_, 0);
  void* w = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_, 0);
  if (v == MAP_FAILED || w == MAP_FAILED) {
    if (v != MAP_FAILED) munmap(v, mapped_);
    if (w != MAP_FAILED) munmap(w, mapped_);
    close(fd_);
    throw std::bad_alloc();
  }
  view_ = static_cast<std::byte*>(v);
  writer_ = static_cast<std::byte*>(w);
  const size_t chunks = mapped_ / kChunk;
  state_.reset(new std::atomic<uint8_t>[chunks]);
  for (size_t i = 0; i < chunks; ++i) state_[i].store(kUntouched, std::memory_order_relaxed);
  install_handler();
  for (int i = 0; i < kSlots; ++i) {
    LazyImage* expected = nullptr;
    if (g_images[i].compare_exchange_strong(expected, this)) {
      slot_ = i;
      break;
    }
  }
  if (slot_ < 0) { // every slot taken: fill it all now instead
    for (size_t c = 0; c < chunks; ++c) materialize(c);
  }
}

LazyImage::~LazyImage() {
  if (slot_ >= 0) g_images[slot_].store(nullptr, std::memory_order_release);
  munmap(view_, mapped_);
  munmap(writer_, mapped_);
  close(fd_);
}

void LazyImage::fill_chunk(size_t chunk) {
  uint8_t expected = kUntouched;
  if (state_[chunk].compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) {
    const size_t off = chunk * kChunk;
    if (off < bytes_) fill_(off, writer_ + off, std::min(kChunk, bytes_ - off));
    state_[chunk].store(kFilled, std::memory_order_release);
    return;
  }
  while (state_[chunk].load(std::memory_order_acquire) < kFilled) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
}

void LazyImage::materialize(size_t chunk) {
  if (state_[chunk].load(std::memory_order_acquire) < kFilled) fill_chunk(chunk);
  if (state_[chunk].load(std::memory_order_acquire) == kOpen) return;
  // Another thread may open it at the same time: opening twice does no harm.
  mprotect(view_ + chunk * kChunk, kChunk, PROT_READ | PROT_WRITE);
  state_[chunk].store(kOpen, std::memory_order_release);
}

size_t LazyImage::touched_bytes() const {
  size_t n = 0;
  for (size_t c = 0; c < mapped_ / kChunk; ++c)
    if (state_[c].load(std::memory_order_relaxed) >= kFilled) n += kChunk;
  return n;
}

} // namespace wb::sim
