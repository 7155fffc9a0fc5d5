// The simulated address space: regions for plan buffers and module variables, the slow paths of
// address translation, and the messages for out-of-bounds, null and misaligned accesses.
#include "machine.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <new>

namespace wb::sim {

Region* Memory::add(uint64_t base, uint64_t data_off, uint64_t data_bytes, uint64_t image_bytes) {
  auto r = std::make_unique<Region>();
  r->base = base;
  r->data_lo = base + data_off;
  r->data_hi = r->data_lo + data_bytes;
  r->end = base + image_bytes;
  size_t n = size_t(std::max<uint64_t>(image_bytes, 1));
  size_t alloc = (n + 255) / 256 * 256;
  // 256-byte alignment on the host too, so host and simulated addresses share their alignment
  // (std::atomic_ref needs naturally aligned objects).
  void* p = std::aligned_alloc(256, alloc);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, alloc);
  storage.emplace_back(static_cast<std::byte*>(p), &std::free);
  r->host = static_cast<std::byte*>(p);
  regions.push_back(std::move(r));
  return regions.back().get();
}

Region* Memory::add_lazy(uint64_t base, uint64_t data_off, uint64_t data_bytes,
                         uint64_t image_bytes, LazyImage::Fill fill) {
  auto r = std::make_unique<Region>();
  r->base = base;
  r->data_lo = base + data_off;
  r->data_hi = r->data_lo + data_bytes;
  r->end = base + image_bytes;
  lazy.push_back(
      std::make_unique<LazyImage>(size_t(std::max<uint64_t>(image_bytes, 1)), std::move(fill)));
  r->host = lazy.back()->data();
  r->lazy = lazy.back().get();
  regions.push_back(std::move(r));
  return regions.back().get();
}

void* Memory::alloc_zeroed(size_t bytes) {
  size_t alloc = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, alloc);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, alloc);
  storage.emplace_back(static_cast<std::byte*>(p), &std::free);
  return p;
}

void Memory::sort() {
  std::sort(regions.begin(), regions.end(), [](auto& a, auto& b) { return a->base < b->base; });
}

Region* Memory::find(uint64_t a) const {
  if (a >= kHeapBase) return heap ? heap->find(a) : nullptr;
  auto it = std::upper_bound(regions.begin(), regions.end(), a,
                             [](uint64_t v, auto& r) { return v < r->base; });
  if (it == regions.begin()) return nullptr;
  Region* r = (it - 1)->get();
  return a < r->end ? r : nullptr;
}

uint64_t DeviceHeap::allocate(uint64_t bytes, std::string owner, uint64_t block_holds) {
  std::lock_guard lk(mu_);
  const uint64_t data = granule(bytes);
  const uint64_t others = block_holds > kLimit ? kLimit : block_holds * (sharers_ - 1);
  if (data > kLimit || used_ + data + std::min(others, kLimit) > kLimit) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  used_ += data;
  const uint64_t image = kGuard + (data + 255) / 256 * 256 + kGuard;
  auto r = std::make_unique<Region>();
  r->base = next_;
  r->data_lo = next_ + kGuard;
  r->data_hi = r->data_lo + bytes;
  r->end = next_ + image;
  storage_.emplace_back(new std::byte[image]());
  r->host = storage_.back().get();
  r->name = std::move(owner);
  next_ += image;
  const uint64_t a = r->data_lo;
  regions_[r->base] = std::move(r);
  return a;
}

std::string DeviceHeap::release(uint64_t a, const std::string& who, uint64_t* bytes) {
  std::lock_guard lk(mu_);
  auto it = regions_.upper_bound(a);
  Region* r = it == regions_.begin() ? nullptr : std::prev(it)->second.get();
  if (!r || a != r->data_lo)
    return r && a < r->end ? "a pointer inside " + r->name + ", not the start malloc returned"
                           : "a pointer malloc did not return";
  if (!r->freed_by.empty()) return r->name + ", which " + r->freed_by + " already freed";
  r->freed_by = who;
  const uint64_t data = granule(r->data_hi - r->data_lo);
  used_ -= std::min(used_, data);
  if (bytes) *bytes = data;
  std::atomic_ref<uint64_t>(r->data_hi).store(r->data_lo, std::memory_order_relaxed);
  return "";
}

Region* DeviceHeap::find(uint64_t a) const {
  std::lock_guard lk(mu_);
  auto it = regions_.upper_bound(a);
  if (it == regions_.begin()) return nullptr;
  Region* r = std::prev(it)->second.get();
  return a < r->end ? r : nullptr;
}

std::vector<std::string> DeviceHeap::leaks() const {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  for (auto& [base, r] : regions_)
    if (r->freed_by.empty()) out.push_back(r->name);
  return out;
}

Region* Memory::nearest(uint64_t a) const {
  Region* best = nullptr;
  uint64_t bd = ~0ull;
  for (auto& r : regions) {
    uint64_t d = a < r->data_lo ? r->data_lo - a : (a >= r->data_hi ? a - r->data_hi : 0);
    if (d < bd) {
      bd = d;
      best = r.get();
    }
  }
  return best;
}

const InstInfo& info_of(const Exec& x, const Inst& in) {
  return x.P->info[&in - x.code];
}
std::string at_line(int line) {
  return line > 0 ? " at line " + std::to_string(line) : "";
}

std::string thread_name(const Exec& x, const Warp& w, int lane) {
  uint32_t t = w.tid0 + uint32_t(lane);
  const Dim3& b = x.L->block;
  uint32_t tx = t % b.x, ty = (t / b.x) % b.y, tz = t / (b.x * b.y);
  return "thread (" + std::to_string(tx) + "," + std::to_string(ty) + "," + std::to_string(tz) +
         ")";
}
std::string block_name(const Exec& x) {
  const Dim3& i = x.B->idx;
  return "block (" + std::to_string(i.x) + "," + std::to_string(i.y) + "," + std::to_string(i.z) +
         ")";
}

int raise_fault(Exec& x, FaultKind k, std::string msg, int line) {
  std::lock_guard lk(x.L->mu);
  uint64_t blk = x.B ? x.B->linear : 0;
  if (!x.L->fault || blk < x.L->fault_block) {
    x.L->fault.kind = k;
    x.L->fault.message = std::move(msg);
    x.L->fault.source_line = line;
    x.L->fault.launch = x.L->launch_index;
    x.L->fault_block = blk;
  }
  x.L->stop.store(true, std::memory_order_relaxed);
  return kStop;
}

namespace {

std::string hex(uint64_t a) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%" PRIx64, a);
  return b;
}
std::string who(const Exec& x, const Warp& w, int lane) {
  return thread_name(x, w, lane) + " of " + block_name(x);
}
const char* verb(bool write) {
  return write ? "wrote" : "read";
}

// "c[1027], 4 bytes past its end" / "c[-1], 4 bytes before its start"
std::string describe_in_region(const Region& r, uint64_t a, uint32_t n) {
  const int64_t es = std::max<int64_t>(r.elem, 1);
  int64_t off = int64_t(a - r.data_lo);
  int64_t idx = off >= 0 ? off / es : -((-off + es - 1) / es);
  std::string s = r.name + "[" + std::to_string(idx) + "]";
  if (int64_t within = off - idx * es; within != 0) // an address inside an element (misaligned)
    s += " + " + std::to_string(within) + " byte" + (within == 1 ? "" : "s");
  if (a + n > r.data_hi && a >= r.data_lo) {
    if (a < r.data_hi) // partly inside: the access is wider than what is left
      s += ", the last " + std::to_string(a + n - r.data_hi) + " of its " + std::to_string(n) +
           " bytes past its end";
    else
      s += ", " + std::to_string(a + n - r.data_hi) + " bytes past its end";
  } else if (a < r.data_lo) {
    s += ", " + std::to_string(r.data_lo - a) + " bytes before its start";
  }
  uint64_t count = (r.data_hi - r.data_lo) / uint64_t(es);
  s += " (" + r.name + " has " + std::to_string(count) + " element" + (count == 1 ? "" : "s") +
       " of " + std::to_string(es) + (es == 1 ? " byte" : " bytes");
  if (int64_t(n) > es)
    s += "; this access reads or writes " + std::to_string(n) +
         " bytes at once: a pointer cast to a wider type?";
  return s + ")";
}

} // namespace

std::byte* global_ptr(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n,
                      bool write) {
  const InstInfo& inf = info_of(x, in);
  if ((a & (n - 1)) != 0) {
    Region* r = x.L->mem->find(a);
    std::string where = r ? " (" + describe_in_region(*r, a, n) + ")" : "";
    raise_fault(x, FaultKind::misaligned,
                who(x, w, lane) + " " + verb(write) + " " + std::to_string(n) +
                    " bytes at address " + hex(a) + where + ", which is not " + std::to_string(n) +
                    "-byte aligned" + at_line(inf.line),
                inf.line);
    return nullptr;
  }
  if (a < kNullPage) {
    std::string why;
    if (const DeviceHeap* h = x.L->mem->heap; h && h->refused())
      why = fmt::format(
          "; malloc (or new) returned NULL {} time{} in this launch because the device heap was "
          "full: it is {} MiB by default (cudaLimitMallocHeapSize), and a GPU runs up to {} "
          "blocks of this launch at once, each holding its threads' allocations",
          h->refused(), h->refused() == 1 ? "" : "s", kDeviceHeapBytes >> 20, h->sharers());
    raise_fault(x, FaultKind::out_of_bounds,
                who(x, w, lane) + " " + verb(write) + " through a null pointer (address " + hex(a) +
                    ")" + at_line(inf.line) + why,
                inf.line);
    return nullptr;
  }
  Region* r = x.L->mem->find(a);
  if (r && a >= r->data_lo && a + n <= r->data_hi) {
    if (write && r->readonly) {
      raise_fault(x, FaultKind::illegal_address,
                  who(x, w, lane) + " wrote to __constant__ memory (" + r->name + ")" +
                      at_line(inf.line),
                  inf.line);
      return nullptr;
    }
    x.last = r;
    return r->host + (a - r->base);
  }
  if (r && !r->freed_by.empty() && a >= r->data_lo && a < r->end - DeviceHeap::kGuard) {
    raise_fault(x, FaultKind::out_of_bounds,
                who(x, w, lane) + " " + verb(write) + " " + r->name + " after " + r->freed_by +
                    " freed it (a use after free)" + at_line(inf.line),
                inf.line);
    return nullptr;
  }
  if (r) {
    // Inside a guard band: the access lands (as it would on a GPU, corrupting the band, which the
    // checker inspects) and is reported.
    std::byte* p = a + n <= r->end ? r->host + (a - r->base) : nullptr;
    raise_fault(x, FaultKind::out_of_bounds,
                who(x, w, lane) + " " + verb(write) + " " + describe_in_region(*r, a, n) +
                    at_line(inf.line),
                inf.line);
    if (p && write) return p; // let the caller store it, then stop
    return nullptr;
  }
  Region* nb = x.L->mem->nearest(a);
  std::string near;
  if (nb) near = "; the nearest buffer is " + describe_in_region(*nb, a, n);
  raise_fault(x, FaultKind::out_of_bounds,
              who(x, w, lane) + " " + verb(write) + " address " + hex(a) +
                  ", outside every buffer" + near + at_line(inf.line),
              inf.line);
  return nullptr;
}

std::byte* shared_ptr(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n,
                      bool write) {
  const InstInfo& inf = info_of(x, in);
  uint32_t size = x.B->shared_size;
  if ((a & (n - 1)) != 0) {
    raise_fault(x, FaultKind::misaligned,
                who(x, w, lane) + " " + verb(write) + " " + std::to_string(n) +
                    " bytes of shared memory at offset " + std::to_string(int64_t(a)) +
                    ", which is not " + std::to_string(n) + "-byte aligned" + at_line(inf.line),
                inf.line);
    return nullptr;
  }
  if (a + n <= size && a < size) return x.B->shared + a;
  std::string what;
  const SharedSym* last = nullptr;
  for (auto& s : x.P->shared_syms)
    if (!last || s.offset >= last->offset) last = &s;
  if (int64_t(a) < 0) {
    what = std::to_string(-int64_t(a)) + " bytes before the start of shared memory";
  } else {
    what = std::to_string(a + n - size) + " bytes past the end of the block's " +
           std::to_string(size) + " bytes of shared memory";
    if (last) {
      if (last->dynamic)
        what += " (the dynamic array " + last->name + " has " +
                std::to_string(size - last->offset) +
                " bytes: is the launch's shared-memory size right?)";
      else
        what += " (the last array is " + last->name + ")";
    }
  }
  raise_fault(x, FaultKind::out_of_bounds,
              who(x, w, lane) + " " + verb(write) + " shared memory at offset " +
                  std::to_string(int64_t(a)) + ", " + what + at_line(inf.line),
              inf.line);
  return nullptr;
}

int variable_check(Exec& x, Warp& w, const Inst& in, int lane, Space sp, uint64_t off, uint32_t n,
                   bool write) {
  const InstInfo& inf = info_of(x, in);
  const uint32_t es = in.width ? in.width : n; // element size, for indices and counts
  if (sp == Space::shared && inf.shared_sym >= 0) {
    const SharedSym& s = x.P->shared_syms[size_t(inf.shared_sym)];
    if (off >= s.offset && off + n <= uint64_t(s.offset) + s.size) return kNext;
    int64_t idx = (int64_t(off) - int64_t(s.offset)) / int64_t(es);
    const SharedSym* other = shared_sym_at(x, off);
    std::string landed = shared_elem_name(x, off, es);
    std::string what = who(x, w, lane) + " " + verb(write) + " " + s.name + "[" +
                       std::to_string(idx) + "]" + at_line(inf.line) + ", outside " + s.name +
                       ", which has " + std::to_string(s.size / es) + " elements of " +
                       std::to_string(es) + " bytes";
    if (!other)
      what += " (those bytes belong to no variable)";
    else if (write)
      what += ". It landed in " + landed +
              ": a block's shared variables lie side by side, so on a GPU this write silently "
              "changes " +
              other->name;
    else
      what += ". It read " + landed +
              ": a block's shared variables lie side by side, so on a GPU this read silently "
              "returns " +
              other->name + "'s value";
    return raise_fault(x, FaultKind::out_of_bounds, what, inf.line);
  }
  if (sp == Space::local && inf.local_frame != kNoRow) {
    uint64_t rel = off - w.row(inf.local_frame)[lane];
    if (rel >= inf.local_lo && rel + n <= inf.local_hi) return kNext;
    uint32_t len = inf.local_hi - inf.local_lo;
    int64_t idx = (int64_t(rel) - int64_t(inf.local_lo)) / int64_t(es);
    return raise_fault(
        x, FaultKind::out_of_bounds,
        who(x, w, lane) + " " + verb(write) + " element " + std::to_string(idx) +
            " of a local array" + at_line(inf.line) + ", which has " + std::to_string(len / es) +
            " elements of " + std::to_string(es) + " bytes: " +
            (int64_t(rel) < int64_t(inf.local_lo) ? "before its start" : "past its end") +
            ", inside the thread's own stack, so on a GPU it " + (write ? "overwrites" : "reads") +
            " the thread's other local variables without a fault",
        inf.line);
  }
  return kNext;
}

std::byte* local_ptr(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n,
                     bool write) {
  const InstInfo& inf = info_of(x, in);
  uint32_t size = x.P->local_per_thread;
  if ((a & (n - 1)) != 0) {
    raise_fault(x, FaultKind::misaligned,
                who(x, w, lane) + " " + verb(write) + " " + std::to_string(n) +
                    " bytes of local memory at offset " + std::to_string(int64_t(a)) +
                    ", which is not " + std::to_string(n) + "-byte aligned" + at_line(inf.line),
                inf.line);
    return nullptr;
  }
  if (a < size && a + n <= size) return w.local + size_t(lane) * size + a;
  raise_fault(x, FaultKind::out_of_bounds,
              who(x, w, lane) + " " + verb(write) + " local memory (its stack) at offset " +
                  std::to_string(int64_t(a)) + ", outside its " + std::to_string(size) +
                  " bytes: an array on the stack indexed out of range?" + at_line(inf.line),
              inf.line);
  return nullptr;
}

std::byte* generic_ptr(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n,
                       bool write, Space& space) {
  if (a - kSharedWindow < kWindowSize) {
    space = Space::shared;
    return shared_ptr(x, w, in, lane, a - kSharedWindow, n, write);
  }
  if (a - kLocalWindow < kWindowSize) {
    space = Space::local;
    return local_ptr(x, w, in, lane, a - kLocalWindow, n, write);
  }
  if (a - kParamWindow < kWindowSize) {
    space = Space::kparam;
    const uint64_t o = a - kParamWindow;
    const InstInfo& inf = info_of(x, in);
    if (write)
      raise_fault(x, FaultKind::trap,
                  who(x, w, lane) + " wrote to a kernel parameter through its address" +
                      at_line(inf.line) + ": a __grid_constant__ parameter is read-only",
                  inf.line);
    else if (o + n > x.L->params.size())
      raise_fault(x, FaultKind::out_of_bounds,
                  who(x, w, lane) + " read past the kernel's parameters" + at_line(inf.line),
                  inf.line);
    else
      return x.L->params.data() + o;
    return nullptr;
  }
  space = Space::global;
  Region* r = x.last;
  if (r && a >= r->data_lo && a + n <= r->data_hi && (a & (n - 1)) == 0 && !(write && r->readonly))
    return r->host + (a - r->base);
  return global_ptr(x, w, in, lane, a, n, write);
}

std::string read_cstring(Exec& x, Warp& w, int lane, uint64_t a, size_t max) {
  std::string s;
  for (size_t i = 0; i < max; ++i) {
    uint64_t p = a + i;
    const std::byte* h = nullptr;
    if (p - kSharedWindow < kWindowSize) {
      uint64_t o = p - kSharedWindow;
      if (o < x.B->shared_size) h = x.B->shared + o;
    } else if (p - kLocalWindow < kWindowSize) {
      uint64_t o = p - kLocalWindow;
      if (o < x.P->local_per_thread) h = w.local + size_t(lane) * x.P->local_per_thread + o;
    } else if (Region* r = x.L->mem->find(p)) {
      h = r->host + (p - r->base);
    }
    if (!h) break;
    char c = char(*h);
    if (!c) break;
    s += c;
  }
  return s;
}

void note_writer(Exec& x, Warp& w, int lane, Region* r, uint64_t a) {
  if (!r->writers) return;
  size_t idx = (a - r->data_lo) >> r->elem_shift;
  if (idx >= r->nelem) return;
  uint64_t t = w.tid0 + uint64_t(lane);
  store_writer(&r->writers[idx], ((x.B->linear << 11) | t) + 1);
}

} // namespace wb::sim
