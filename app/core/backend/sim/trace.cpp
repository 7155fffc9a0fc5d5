// Trace recording for the performance model's sampled runs: the memory payload of a warp's last
// event (exec.cpp's run_warp<.., true> appends the event before the handler runs).
#include "machine.hpp"

namespace wb::sim {

namespace {

// The event the current instruction appended, or nullptr past the cap.
TraceEvent* current(Warp& w) {
  return w.trace && w.trace->rec ? &w.trace->ev.back() : nullptr;
}

// The bytes of sector s that [a, a + n) covers (bit i: byte i).
uint32_t sector_mask(uint64_t s, uint64_t a, uint64_t n) {
  const uint64_t lo = std::max<uint64_t>(a, s << 5) - (s << 5);
  const uint64_t hi = std::min<uint64_t>(a + n, (s + 1) << 5) - (s << 5);
  return hi - lo >= 32 ? 0xffffffffu : uint32_t(((1ull << (hi - lo)) - 1) << lo);
}

// Adds the bytes [a, a + n) to the sectors of one access, merging into sectors seen already.
// `climbing`: the access's sectors so far rise one after another (lanes walking rows or a
// stride), so a sector past the last is new and needs no search; the caller starts it true.
void add_bytes(std::vector<TraceSector>& sec, size_t first, uint64_t a, uint32_t n,
               bool& climbing) {
  for (uint64_t s = a >> 5; s <= (a + n - 1) >> 5; ++s) {
    const uint32_t m = sector_mask(s, a, n);
    if (climbing && (sec.size() == first || s > sec.back().id)) {
      sec.push_back({s, m});
      continue;
    }
    if (climbing && s < sec.back().id) climbing = false;
    bool found = false;
    for (size_t k = sec.size(); k > first; --k)
      if (sec[k - 1].id == s) {
        sec[k - 1].mask |= m;
        found = true;
        break;
      }
    if (!found) sec.push_back({s, m});
  }
}

} // namespace

void trace_global(Warp& w, const uint64_t* addr, int n, uint32_t bytes, TraceKind kind) {
  TraceEvent* e = current(w);
  if (!e || n == 0) return;
  auto& sec = w.trace->sec;
  const size_t first = sec.size();
  bool climbing = true;
  for (int i = 0; i < n; ++i) add_bytes(sec, first, addr[i], bytes, climbing);
  e->first = uint32_t(first);
  e->count = uint16_t(std::min<size_t>(sec.size() - first, 0xffff));
  e->kind = kind;
  e->bytes = uint8_t(bytes);
}

void trace_bulk(Warp& w, uint64_t a, uint32_t n, uint32_t mbar, uint32_t phase, uint32_t copies) {
  TraceEvent* e = current(w);
  if (!e || n == 0) return;
  auto& sec = w.trace->sec;
  size_t first = sec.size();
  // Several lanes of one instruction each start a copy: one event holds all their sectors, then
  // one mbarrier entry (the last lane's; lanes of one instruction normally share it).
  if (e->kind == TraceKind::bulk && e->count > 0 && size_t(e->first) + e->count == sec.size()) {
    first = e->first;
    copies += sec.back().mask >> 16;
    sec.pop_back();
  }
  for (uint64_t s = a >> 5; s <= (a + n - 1) >> 5; ++s) // contiguous: nothing to merge
    sec.push_back({s, sector_mask(s, a, n)});
  sec.push_back({mbar, (std::min<uint32_t>(copies, 0xffff) << 16) | (phase & 0xffff)});
  e->first = uint32_t(first);
  e->count = uint16_t(std::min<size_t>(sec.size() - first, 0xffff));
  e->kind = TraceKind::bulk;
  e->bytes = 16;
}

void trace_local(const Exec& x, Warp& w, const uint64_t* off, const int* lanes, int n,
                 uint32_t bytes) {
  TraceEvent* e = current(w);
  if (!e || n == 0) return;
  // A GPU interleaves local memory: word k of every lane of a warp sits in one contiguous run,
  // so lanes reading the same offset are coalesced. Addresses are synthetic, one range per warp.
  const uint64_t frame = std::max<uint64_t>(x.P->local_per_thread, 16);
  const uint64_t warp_uid = x.B->linear * uint64_t(x.B->nwarps) + w.index;
  const uint64_t base = 0x00007e2000000000ull + warp_uid * frame * kWarpSize;
  const uint32_t unit = std::max<uint32_t>(bytes, 4);
  auto& sec = w.trace->sec;
  const size_t first = sec.size();
  bool climbing = true;
  for (int i = 0; i < n; ++i) {
    uint64_t a = base + off[i] / unit * unit * kWarpSize + uint64_t(lanes[i]) * unit;
    add_bytes(sec, first, a, bytes, climbing);
  }
  e->first = uint32_t(first);
  e->count = uint16_t(std::min<size_t>(sec.size() - first, 0xffff));
  e->kind = TraceKind::local;
  e->bytes = uint8_t(bytes);
}

void trace_shared(Warp& w, uint32_t wavefronts, uint32_t bytes) {
  TraceEvent* e = current(w);
  if (!e) return;
  e->count = uint16_t(std::min<uint32_t>(wavefronts, 0xffff));
  e->kind = TraceKind::shared;
  e->bytes = uint8_t(bytes);
}

void trace_atomic(Warp& w, const uint64_t* addr, int n, uint32_t bytes, bool shared) {
  TraceEvent* e = current(w);
  if (!e || n == 0) return;
  auto& sec = w.trace->sec;
  const size_t first = sec.size();
  uint32_t most = 0;
  uint64_t hot = 0; // the word most lanes share
  for (int i = 0; i < n; ++i) {
    uint64_t word = addr[i] >> 2;
    bool found = false;
    for (size_t k = sec.size(); k > first; --k)
      if (sec[k - 1].id == word) {
        if (++sec[k - 1].mask > most) most = sec[k - 1].mask, hot = word;
        found = true;
        break;
      }
    if (!found) {
      sec.push_back({word, 1});
      if (most < 1) most = 1, hot = word;
    }
  }
  if (shared) {
    sec.resize(first); // only the serialisation counts for shared memory
    return trace_shared_atomic(w, most, uint32_t(hot), bytes);
  }
  e->bytes = uint8_t(bytes);
  e->first = uint32_t(first);
  e->count = uint16_t(std::min<size_t>(sec.size() - first, 0xffff));
  e->kind = TraceKind::global_atomic;
}

void trace_shared_atomic(Warp& w, uint32_t most, uint32_t hot, uint32_t bytes) {
  TraceEvent* e = current(w);
  if (!e || most == 0) return;
  e->bytes = uint8_t(bytes);
  e->first = hot; // the block's shared word it serialises on
  e->count = uint16_t(most);
  e->kind = TraceKind::shared_atomic;
}

} // namespace wb::sim
