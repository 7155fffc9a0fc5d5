// mbarrier: the shared-memory barrier objects behind cuda::barrier, cuda::pipeline's block scope,
// cooperative groups' memcpy_async and TMA-style transfers. mbarrier.init / arrive / arrive_drop
// (with .expect_tx and .noComplete) / expect_tx / complete_tx / test_wait / try_wait (and their
// .parity forms) / pending_count / inval, and cp.async.mbarrier.arrive.
//
// The 8-byte object in shared memory is opaque to programs, so the simulator keeps its own
// encoding there: pending arrivals (bits 0-19), the count they reset to (20-39), the pending
// transaction bytes (40-60, signed), a mark that init ran (61-62) and the phase (63). A phase
// completes when its arrivals and its transaction bytes are both down to zero. The thread's
// cp.async copies land at its cp.async.mbarrier.arrive, which then arrives at once. A thread that
// waits on an incomplete phase gives its turn to the other warps; when every live warp waits and no
// mbarrier changes, the block is deadlocked and the fault names the barrier and its counts.
#include "ops_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace wb::sim {

namespace {

constexpr uint64_t kCountMask = (1ull << 20) - 1;
constexpr uint64_t kTxMask = (1ull << 21) - 1;
constexpr uint64_t kInitMark = 2ull << 61;
constexpr uint64_t kMarkMask = 3ull << 61;
constexpr uint64_t kPhase = 1ull << 63;

struct Mbar {
  uint64_t pending, expected;
  int64_t tx;
  bool phase;
};
Mbar unpack(uint64_t v) {
  int64_t tx = int64_t((v >> 40) & kTxMask);
  if (tx & (1ll << 20)) tx -= 1ll << 21;
  return {v & kCountMask, (v >> 20) & kCountMask, tx, (v & kPhase) != 0};
}
uint64_t pack(const Mbar& m) {
  return (m.pending & kCountMask) | ((m.expected & kCountMask) << 20) |
         ((uint64_t(m.tx) & kTxMask) << 40) | kInitMark | (m.phase ? kPhase : 0);
}

enum Op : uint8_t {
  kInit,
  kArrive, // aux bits: 1 drop, 2 expect_tx first, 4 noComplete
  kExpectTx,
  kCompleteTx,
  kTestWait, // aux bit 1: .parity
  kPendingCount,
  kInval,
  kAsyncArrive, // cp.async.mbarrier.arrive; aux bit 1: .noinc
};

// The lane's mbarrier: its shared-memory offset and host pointer, or nullptr after a fault.
uint64_t* mbar_at(Exec& x, Warp& w, const Inst& in, int l, uint64_t a, Space space, uint64_t& off) {
  std::byte* p = nullptr;
  if (space == Space::shared) {
    p = shared_ptr(x, w, in, l, a, 8, true);
  } else {
    Space sp = Space::generic;
    p = generic_ptr(x, w, in, l, a, 8, true, sp);
    if (p && sp != Space::shared) {
      raise_fault(x, FaultKind::misaligned,
                  thread_name(x, w, l) + " used an mbarrier that is not in shared memory" +
                      at_line(info_of(x, in).line) + " (an mbarrier object must be __shared__)",
                  info_of(x, in).line);
      return nullptr;
    }
  }
  if (!p) return nullptr;
  off = uint64_t(p - x.B->shared);
  if (off % 8) {
    raise_fault(x, FaultKind::misaligned,
                thread_name(x, w, l) + " used an mbarrier at shared offset " + std::to_string(off) +
                    ", not a multiple of 8" + at_line(info_of(x, in).line),
                info_of(x, in).line);
    return nullptr;
  }
  return reinterpret_cast<uint64_t*>(p);
}

int uninitialised(Exec& x, Warp& w, const Inst& in, int l, uint64_t off) {
  const int line = info_of(x, in).line;
  return raise_fault(x, FaultKind::trap,
                     thread_name(x, w, l) + " used " + shared_elem_name(x, off, 8) + at_line(line) +
                         " before any thread initialised it (mbarrier.init, or init() of a "
                         "cuda::barrier, then __syncthreads() before its first use)",
                     line);
}

// The phase is complete: the next one starts, and what threads did before their arrivals is
// ordered before what they do after the wait (a new epoch for the shared-memory race check).
void complete_phase(Exec& x, Mbar& b, uint64_t off) {
  x.B->mbar_bytes.erase(uint32_t(off));
  auto& ph = x.B->mbar_phases[uint32_t(off)];
  ph.copies_last = ph.copies_now, ph.copies_now = 0, ++ph.completed;
  b.phase = !b.phase;
  b.pending = b.expected;
  b.tx = 0;
  x.B->epoch = ++x.epoch_base;
}

// The cp.async.bulk copies that complete on the mbarrier at shared offset `off` land together:
// their bytes are written and counted off the barrier's transaction count, which may then complete
// its phase. Together, because the GPU's copies land piece by piece side by side: a phase whose
// copies bring more bytes than its expect_tx announced does not complete when the first copy's
// bytes match the count, it never completes (an H100 hangs on such a kernel's first tile).
void land_bulk(Exec& x, uint64_t off) {
  auto& pend = x.B->bulk_pending;
  if (pend.empty()) return;
  auto* p = reinterpret_cast<uint64_t*>(x.B->shared + off);
  bool landed = false;
  Mbar b = unpack(*p);
  for (const auto& c : pend) {
    if (c.mbar != off) continue;
    std::memcpy(x.B->shared + c.dst, c.data.data(), c.data.size());
    x.B->mbar_bytes[uint32_t(off)].second += c.tx;
    ++x.B->mbar_phases[uint32_t(off)].copies_now;
    b.tx -= int64_t(c.tx);
    landed = true;
  }
  if (!landed) return;
  if (b.pending == 0 && b.tx == 0) complete_phase(x, b, off);
  *p = pack(b);
  ++x.B->mbar_changes;
  std::erase_if(pend, [&](const Block::PendingBulk& c) { return c.mbar == off; });
}

int h_mbarrier(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const uint8_t op = in.sub;
  uint32_t waiting = 0;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm);
    if (op == kPendingCount) { // from a state token: nothing to look up
      w.row(in.r[0])[l] = unpack(w.row(in.r[1])[l]).pending;
      continue;
    }
    uint64_t off = 0;
    uint64_t* p = mbar_at(x, w, in, l, w.row(in.r[1])[l] + uint64_t(in.imm), in.space, off);
    if (!p) return kStop;
    const int line = info_of(x, in).line;
    if (op == kInit) {
      const uint64_t n = w.row(in.r[2])[l] & 0xffffffffu;
      if (n == 0 || n > kCountMask)
        return raise_fault(x, FaultKind::trap,
                           thread_name(x, w, l) + " initialised " + shared_elem_name(x, off, 8) +
                               " with a count of " + std::to_string(n) + at_line(line) +
                               " (it must be 1 to 1048575)",
                           line);
      *p = pack({n, n, 0, false});
      x.B->mbar_bytes.erase(uint32_t(off));
      ++x.B->mbar_changes;
      continue;
    }
    if (op == kInval) {
      *p = 0;
      ++x.B->mbar_changes;
      continue;
    }
    if ((*p & kMarkMask) != kInitMark) return uninitialised(x, w, in, l, off);
    if (op == kTestWait) {
      land_bulk(x, off);
      if (w.trace && w.trace->rec) { // the performance model waits here for the copies
        w.trace->ev.back().kind = TraceKind::mbar_wait;
        w.trace->ev.back().first = uint32_t(off);
      }
    }
    Mbar b = unpack(*p);
    switch (op) {
    case kArrive:
    case kAsyncArrive: {
      // The arrive-on of cp.async.mbarrier.arrive happens once the thread's copies have landed.
      if (op == kAsyncArrive) land_copies(x, w, 1u << l, 0, true);
      const uint64_t before = *p;
      uint64_t n = 1;
      if (op == kArrive && in.r[2] != kNoRow) {
        const uint64_t v = w.row(in.r[2])[l] & 0xffffffffu;
        if (in.aux & 2) {
          b.tx += int64_t(v); // arrive.expect_tx: the operand is a byte count
          x.B->mbar_bytes[uint32_t(off)].first += v;
        } else
          n = v;
      }
      if (op == kAsyncArrive && !(in.aux & 2)) n = 0; // pending +1, then the arrive: no change
      if (n > b.pending)
        return raise_fault(
            x, FaultKind::trap,
            fmt::format("{} arrived on {}{} {} time(s) where the phase waits for {} more "
                        "arrival(s) (the count given to init is {}): more threads arrive than "
                        "the barrier was set up for",
                        thread_name(x, w, l), shared_elem_name(x, off, 8), at_line(line), n,
                        b.pending, b.expected),
            line);
      b.pending -= n;
      if (in.aux & 1) b.expected -= std::min(b.expected, n); // arrive_drop: fewer from now on
      if (b.pending == 0 && b.tx == 0 && !(in.aux & 4)) complete_phase(x, b, off);
      *p = pack(b);
      if (in.r[0] != kNoRow) w.row(in.r[0])[l] = before;
      ++x.B->mbar_changes;
      break;
    }
    case kExpectTx:
    case kCompleteTx: {
      const int64_t v = int64_t(w.row(in.r[2])[l] & 0xffffffffu);
      b.tx += op == kExpectTx ? v : -v;
      auto& mb = x.B->mbar_bytes[uint32_t(off)];
      (op == kExpectTx ? mb.first : mb.second) += uint64_t(v);
      if (b.pending == 0 && b.tx == 0) complete_phase(x, b, off);
      *p = pack(b);
      ++x.B->mbar_changes;
      break;
    }
    case kTestWait: {
      // The token's phase (or the parity given) has completed once the barrier's phase moved on.
      const bool asked =
          (in.aux & 1) ? (w.row(in.r[2])[l] & 1) != 0 : (w.row(in.r[2])[l] & kPhase) != 0;
      const bool done = asked != b.phase;
      if (done)
        w.p[in.pd] |= 1u << l;
      else
        w.p[in.pd] &= ~(1u << l), waiting |= 1u << l;
      if (w.trace && w.trace->rec) { // which phase, and how many copies completed it
        const auto& ph = x.B->mbar_phases[uint32_t(off)];
        w.trace->ev.back().count = uint16_t(done ? ph.completed - 1 : ph.completed);
        w.trace->ev.back().bytes = uint8_t(done ? std::min<uint32_t>(ph.copies_last, 255) : 0);
      }
      break;
    }
    default:
      break;
    }
  }
  if (op == kTestWait && waiting == m && m) {
    // Nobody can complete the phase while this warp spins: let the others run. (With lanes of its
    // own still to run elsewhere, the warp is not stuck yet.)
    w.mbar_waiting = !((w.run | w.wsync) & ~w.active);
    w.mbar_wait_pc = w.pc;
    w.yielded |= w.active;
    ++w.pc;
    if (w.pc >= w.resched_pc) reschedule(x, w);
    return kYield;
  }
  return kNext;
}

// A bulk copy's counts for the profile: one request of `global` bytes in whole sectors, and the
// 128-byte shared-memory wavefronts of its `shared` bytes.
void count_bulk(Exec& x, const Inst& in, uint64_t global, uint64_t shared) {
  if (!x.count) return;
  InstCount& ic = x.ic[pc_of(x, in)];
  ic.g_req += 1;
  ic.g_sect += (global + 31) / 32;
  ic.g_ideal += (global + 31) / 32;
  ic.g_bytes += global;
  ic.s_wave += (shared + 127) / 128;
  ic.s_ideal += (shared + 127) / 128;
}

} // namespace

// cp.async.bulk global -> shared, completing on an mbarrier (TMA's one-dimensional form): r[0] +
// imm the destination, r[1] + aux the source, r[2] the size, r[3] + target the mbarrier. The bytes
// are read now and land when a thread first waits on the mbarrier (land_bulk); the destination
// counts as written by the issuing thread now, so another thread reading it before its wait is a
// race.
int h_cp_async_bulk(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm);
    const int line = info_of(x, in).line;
    const uint64_t da = w.row(in.r[0])[l] + uint64_t(in.imm);
    const uint64_t sa = w.row(in.r[1])[l] + uint64_t(int64_t(int32_t(in.aux)));
    const uint64_t n = w.row(in.r[2])[l] & 0xffffffffu;
    if (n % 16 || da % 16 || sa % 16)
      return raise_fault(x, FaultKind::misaligned,
                         fmt::format("{} started a cp.async.bulk of {} bytes from global address "
                                     "{:#x} to shared offset {}{}: the size and both addresses "
                                     "must be multiples of 16",
                                     thread_name(x, w, l), n, sa, da, at_line(line)),
                         line);
    uint64_t off = 0;
    uint64_t* bar =
        mbar_at(x, w, in, l, w.row(in.r[3])[l] + uint64_t(in.target), Space::shared, off);
    if (!bar) return kStop;
    if ((*bar & kMarkMask) != kInitMark) return uninitialised(x, w, in, l, off);
    if (n == 0) continue;
    // Piece by piece (16 bytes each), so a copy that runs off a buffer or off shared memory gets
    // the same fault, naming the first byte outside, as a 16-byte load there would.
    Block::PendingBulk c{uint32_t(off), 0, std::vector<std::byte>(n), uint32_t(n)};
    for (uint64_t k = 0; k < n; k += 16) {
      std::byte* d = shared_ptr(x, w, in, l, da + k, 16, true);
      if (!d) return kStop;
      std::byte* s = global_ptr(x, w, in, l, sa + k, 16, false);
      if (!s) return kStop;
      if (k == 0) c.dst = uint32_t(d - x.B->shared);
      std::memcpy(c.data.data() + k, s, 16);
    }
    if (x.track_races &&
        shared_race_check(x, w, in, l, da, uint32_t(n), true, c.data.data()) != kNext)
      return kStop;
    count_bulk(x, in, n, n);
    if (w.trace)
      trace_bulk(w, sa, uint32_t(n), uint32_t(off), x.B->mbar_phases[uint32_t(off)].completed, 1);
    ++w.gloads[l];
    x.B->bulk_pending.push_back(std::move(c));
  }
  return kNext;
}

// ---- TMA: cp.async.bulk.tensor through a tensor map ----
// Operands: r[0] + imm the shared box address, r[1] + aux the tensor map's address (`space`
// kparam: an offset among the kernel's parameters), r[2] + target the mbarrier (loads), r[3] the
// offset in P.lists of the `vec` coordinate rows.

namespace {

// The tensor map an instruction names, decoded, and the lane's box coordinates (innermost first);
// false after a fault. The kernel passes `&tmap` of a __grid_constant__ parameter: a
// parameter-space address (an offset among the parameters) or its generic address (cvta.param); a
// map copied to global memory is found there too.
bool tma_map(Exec& x, Warp& w, const Inst& in, int l, TensorMapSpec& s, uint64_t& gaddr,
             int32_t (&c)[kTensorMapMaxRank]) {
  const int line = info_of(x, in).line;
  const uint64_t a =
      (in.r[1] == kNoRow ? 0 : w.row(in.r[1])[l]) + uint64_t(int64_t(int32_t(in.aux)));
  const std::vector<std::byte>& P = x.L->params;
  const std::byte* p = nullptr;
  uint64_t off = a;
  bool param = in.space == Space::kparam || a < P.size();
  if (!param && a - kParamWindow < kWindowSize) param = true, off = a - kParamWindow;
  if (param) {
    if (off + kTensorMapBytes <= P.size()) p = P.data() + off;
  } else if (a - kSharedWindow >= kWindowSize && a - kLocalWindow >= kWindowSize) {
    if (Region* r = x.L->mem->find(a); r && a >= r->data_lo && a + kTensorMapBytes <= r->data_hi)
      p = r->host + (a - r->base);
  }
  if (p && off % 64)
    return raise_fault(x, FaultKind::misaligned,
                       fmt::format("{} started a TMA copy (cp.async.bulk.tensor){} with a tensor "
                                   "map at {:#x}, which is not 64-byte aligned",
                                   thread_name(x, w, l), at_line(line), a),
                       line),
           false;
  if (!p || !decode_sim_tensor_map(p, s, gaddr))
    return raise_fault(
               x, FaultKind::trap,
               fmt::format(
                   "{} started a TMA copy (cp.async.bulk.tensor){} whose tensor-map operand "
                   "({:#x}) is not a tensor map: pass the address of a `const "
                   "__grid_constant__ CUtensorMap` kernel parameter that puzzle.toml "
                   "declares in [[tensor_map]], e.g. `(uint64_t)&tmA`",
                   thread_name(x, w, l), at_line(line), a),
               line),
           false;
  if (s.rank != int(in.vec))
    return raise_fault(x, FaultKind::trap,
                       fmt::format("{} started a {}-D TMA copy{} through a {}-dimensional tensor "
                                   "map: the .Nd of the instruction must match the map's dims",
                                   thread_name(x, w, l), in.vec, at_line(line), s.rank),
                       line),
           false;
  for (int i = 0; i < s.rank; ++i)
    c[i] = int32_t(uint32_t(w.row(x.P->lists[in.r[3] + uint32_t(i)])[l]));
  // The TMA unit moves 16-byte pieces of each row: a box whose innermost coordinate is not on one
  // is an illegal instruction on the GPU (H100: boxes at 30 and -5 floats, 70 bf16, 100 bytes).
  const int64_t start = int64_t(c[0]) * int64_t(s.elem_bytes());
  if (start % 16)
    return raise_fault(
               x, FaultKind::misaligned,
               fmt::format("{} started a TMA copy{} of tensor map '{}' with its box's innermost "
                           "coordinate at element {}: {} bytes from the row's start, not a "
                           "multiple of 16. The TMA unit moves 16-byte pieces, and the GPU stops "
                           "the kernel here (an illegal instruction); start boxes on multiples of "
                           "{} elements",
                           thread_name(x, w, l), at_line(line), s.name.empty() ? "?" : s.name, c[0],
                           start, 16 / std::gcd<uint64_t>(16, s.elem_bytes())),
               line),
           false;
  return true;
}

// The shared-memory alignment a box needs: 128 bytes, or the swizzle pattern's repeat (8 rows of
// its span: 1024 bytes for 128B), since the hardware swizzles by absolute address bits.
uint64_t tma_smem_align(TmSwizzle sw) {
  return sw == TmSwizzle::none ? 128 : 8 * uint64_t(swizzle_bytes(sw));
}

bool tma_smem_check(Exec& x, Warp& w, const Inst& in, int l, const TensorMapSpec& s, uint64_t sa,
                    uint64_t span, const char* what) {
  const int line = info_of(x, in).line;
  const uint64_t need = tma_smem_align(s.swizzle);
  if (sa % need)
    return raise_fault(
               x, FaultKind::misaligned,
               fmt::format("{} started a TMA {} of tensor map '{}'{} with its box at shared "
                           "offset {} ({}), which is not a multiple of {}: {} (align the buffer "
                           "with __align__({}))",
                           thread_name(x, w, l), what, s.name.empty() ? "?" : s.name, at_line(line),
                           sa, shared_elem_name(x, sa, 1), need,
                           s.swizzle == TmSwizzle::none
                               ? "a box in shared memory must start on 128 bytes"
                               : fmt::format("the {} swizzle repeats every {} bytes and is taken "
                                             "from the address, so the box must start on one",
                                             swizzle_text(s.swizzle), need),
                           need),
               line),
           false;
  return shared_ptr(x, w, in, l, sa, 16, true) &&
         shared_ptr(x, w, in, l, sa + ((span + 15) / 16 - 1) * 16, 16, true);
}

// Walks the box row by row (a row: box[0] elements along dimension 0): f(row index, global
// address of the row's first element, first and end element in bounds along dimension 0), with
// first == end for a row outside the map.
template <class F> void tma_rows(const TensorMapSpec& s, uint64_t gaddr, const int32_t* c, F&& f) {
  uint64_t rows = 1;
  for (int i = 1; i < s.rank; ++i) rows *= s.box[size_t(i)];
  const int64_t lo = std::max<int64_t>(0, -int64_t(c[0]));
  const int64_t hi = std::clamp<int64_t>(int64_t(s.dims[0]) - int64_t(c[0]), 0, int64_t(s.box[0]));
  for (uint64_t r = 0; r < rows; ++r) {
    uint64_t rest = r, addr = gaddr;
    bool in = lo < hi;
    for (int i = 1; i < s.rank; ++i) {
      const int64_t g = int64_t(c[i]) + int64_t(rest % s.box[size_t(i)]);
      rest /= s.box[size_t(i)];
      if (g < 0 || g >= int64_t(s.dims[size_t(i)])) in = false;
      addr += uint64_t(g) * s.strides[size_t(i - 1)];
    }
    addr += uint64_t(int64_t(c[0])) * s.elem_bytes();
    f(r, addr, in ? lo : 0, in ? hi : 0);
  }
}

// The host bytes of global [a, a + n) in the map's buffer, or nullptr after a fault.
std::byte* tma_global(Exec& x, Warp& w, const Inst& in, int l, uint64_t a, uint64_t n, bool write) {
  Region* r = x.L->mem->find(a);
  if (r && a >= r->data_lo && a + n <= r->data_hi && !(write && r->readonly))
    return r->host + (a - r->base);
  return global_ptr(x, w, in, l, a, 1, write); // the usual fault, naming where it went
}

} // namespace

int h_tma_load(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm);
    TensorMapSpec s;
    uint64_t gaddr = 0;
    int32_t c[kTensorMapMaxRank] = {};
    if (!tma_map(x, w, in, l, s, gaddr, c)) return kStop;
    const uint64_t da = w.row(in.r[0])[l] + uint64_t(in.imm);
    const uint64_t box = s.box_bytes();
    const bool swz = s.swizzle != TmSwizzle::none;
    const uint64_t span = swz ? (box + 127) / 128 * 128 : box;
    if (!tma_smem_check(x, w, in, l, s, da, span, "load")) return kStop;
    uint64_t off = 0;
    uint64_t* bar =
        mbar_at(x, w, in, l, w.row(in.r[2])[l] + uint64_t(in.target), Space::shared, off);
    if (!bar) return kStop;
    if ((*bar & kMarkMask) != kInitMark) return uninitialised(x, w, in, l, off);
    // The box as shared memory will hold it: rows of box[0] elements, swizzled, zeros outside
    // the map. A swizzled box that ends inside a 128-byte row keeps what that row held.
    Block::PendingBulk cp{uint32_t(off), uint32_t(da), std::vector<std::byte>(span), uint32_t(box)};
    if (span > box) std::memcpy(cp.data.data(), x.B->shared + da, span);
    const uint64_t es = s.elem_bytes(), row_bytes = uint64_t(s.box[0]) * es;
    std::vector<std::byte> row(row_bytes);
    uint64_t moved = 0;
    bool ok = true;
    tma_rows(s, gaddr, c, [&](uint64_t r, uint64_t addr, int64_t lo, int64_t hi) {
      if (!ok) return;
      std::fill(row.begin(), row.end(), std::byte{0});
      if (hi > lo) {
        const uint64_t n = uint64_t(hi - lo) * es;
        const std::byte* src = tma_global(x, w, in, l, addr + uint64_t(lo) * es, n, false);
        if (!src) {
          ok = false;
          return;
        }
        std::memcpy(row.data() + uint64_t(lo) * es, src, n);
        moved += n;
        if (w.trace) // the box is one copy, however many rows it traces
          trace_bulk(w, addr + uint64_t(lo) * es, uint32_t(n), uint32_t(off),
                     x.B->mbar_phases[uint32_t(off)].completed, moved == n);
      }
      for (uint64_t k = 0; k < row_bytes; k += 16) {
        const uint64_t o = r * row_bytes + k;
        const uint64_t d = swz ? swizzle_offset(s.swizzle, uint32_t(da + o)) - da : o;
        std::memcpy(cp.data.data() + d, row.data() + k, 16);
      }
    });
    if (!ok) return kStop;
    if (x.track_races &&
        shared_race_check(x, w, in, l, da, uint32_t(span), true, cp.data.data()) != kNext)
      return kStop;
    count_bulk(x, in, moved, box);
    if (moved == 0) { // a box wholly outside the tensor: legal, and almost always a mistake
      if (w.trace)
        trace_bulk(w, gaddr, 16, uint32_t(off), x.B->mbar_phases[uint32_t(off)].completed, 1);
      const int line = info_of(x, in).line;
      std::string coords;
      for (int i = 0; i < s.rank; ++i) coords += fmt::format("{}{}", i ? ", " : "", c[i]);
      std::string dims;
      for (int i = 0; i < s.rank; ++i)
        dims += fmt::format("{}{}", i ? " x " : "", s.dims[size_t(i)]);
      std::string msg = fmt::format("a TMA load{} at coordinates ({}) lies wholly outside tensor "
                                    "map '{}' ({} elements, innermost first) and brings only "
                                    "zeros: are the coordinates innermost first, in elements?",
                                    at_line(line), coords, s.name, dims);
      if (std::find(x.warnings.begin(), x.warnings.end(), msg) == x.warnings.end() &&
          x.warnings.size() < 8)
        x.warnings.push_back(std::move(msg));
    }
    ++w.gloads[l];
    x.B->bulk_pending.push_back(std::move(cp));
  }
  return kNext;
}

// The store: the box is read from shared memory now and written to the map's elements inside its
// bounds (those outside are dropped), so cp.async.bulk.wait_group has nothing left to wait for.
int h_tma_store(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  std::vector<uint64_t> traced; // 16-byte pieces written, for the performance model
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm);
    TensorMapSpec s;
    uint64_t gaddr = 0;
    int32_t c[kTensorMapMaxRank] = {};
    if (!tma_map(x, w, in, l, s, gaddr, c)) return kStop;
    const uint64_t sa = w.row(in.r[0])[l] + uint64_t(in.imm);
    const uint64_t box = s.box_bytes();
    const bool swz = s.swizzle != TmSwizzle::none;
    if (!tma_smem_check(x, w, in, l, s, sa, box, "store")) return kStop;
    if (x.track_races && shared_race_check(x, w, in, l, sa, uint32_t(box), false, nullptr) != kNext)
      return kStop;
    if (x.track_races)
      x.B->tma_stores.push_back(
          {uint32_t(sa), uint32_t(sa + box), w.tid0 + uint32_t(l), pc_of(x, in), 0});
    const uint64_t es = s.elem_bytes(), row_bytes = uint64_t(s.box[0]) * es;
    std::vector<std::byte> row(row_bytes);
    uint64_t moved = 0;
    bool ok = true;
    tma_rows(s, gaddr, c, [&](uint64_t r, uint64_t addr, int64_t lo, int64_t hi) {
      if (!ok || hi <= lo) return;
      for (uint64_t k = 0; k < row_bytes; k += 16) {
        const uint64_t o = r * row_bytes + k;
        const uint64_t d = swz ? swizzle_offset(s.swizzle, uint32_t(sa + o)) - sa : o;
        std::memcpy(row.data() + k, x.B->shared + sa + d, 16);
      }
      // The TMA unit writes whole 16-byte pieces: a row cut at the tensor's innermost edge is
      // written on to the next 16-byte boundary when the edge falls inside one (a 70-float row
      // gets 72 written, the rest of its 16 bytes; the row's pitch holds them).
      uint64_t end = uint64_t(hi) * es;
      if (int64_t(c[0]) + hi == int64_t(s.dims[0]))
        end = std::min(row_bytes, (uint64_t(int64_t(c[0]) + hi) * es + 15) / 16 * 16 -
                                      uint64_t(int64_t(c[0])) * es);
      const uint64_t n = end - uint64_t(lo) * es, a = addr + uint64_t(lo) * es;
      std::byte* dst = tma_global(x, w, in, l, a, n, true);
      if (!dst) {
        ok = false;
        return;
      }
      std::memcpy(dst, row.data() + uint64_t(lo) * es, n);
      if (w.trace)
        for (uint64_t k = 0; k < n; k += 16) traced.push_back(a + k);
      if (Region* rg = x.L->mem->find(a); rg && rg->writers)
        for (uint64_t e = 0; e < n; e += rg->elem) note_writer(x, w, l, rg, a + e);
      moved += n;
    });
    if (!ok) return kStop;
    count_bulk(x, in, moved, box);
    ++w.gstores[l];
  }
  if (w.trace) trace_global(w, traced.data(), int(traced.size()), 16, TraceKind::global);
  return kNext;
}

namespace {

// cp.async.bulk.commit_group: the thread's TMA stores not yet in a group form its next one.
int h_bulk_commit(Exec& x, Warp& w, const Inst&, uint32_t m) {
  auto& st = x.B->tma_stores;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const uint32_t t = w.tid0 + uint32_t(std::countr_zero(mm));
    const uint32_t g = ++x.B->bulk_groups[t];
    for (auto& p : st)
      if (p.thread == t && p.group == 0) p.group = g;
  }
  return kNext;
}

// cp.async.bulk.wait_group[.read] N: the thread's groups but the newest N are done (the simulator
// wrote their global bytes when they were issued), so their boxes may be written again.
int h_bulk_wait(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  auto& st = x.B->tma_stores;
  if (st.empty()) return kNext;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const uint32_t t = w.tid0 + uint32_t(std::countr_zero(mm));
    const uint32_t done = x.B->bulk_groups[t];
    std::erase_if(st, [&](const Block::PendingStore& p) {
      return p.thread == t && p.group != 0 && uint64_t(p.group) + uint64_t(in.imm) <= done;
    });
  }
  return kNext;
}

} // namespace

int tma_store_race(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n) {
  for (const auto& p : x.B->tma_stores) {
    if (a + n <= p.lo || a >= p.hi) continue;
    const int line = info_of(x, in).line, sline = x.P->info[p.pc].line;
    const Dim3& b = x.L->block;
    const std::string starter = fmt::format("thread ({},{},{})", p.thread % b.x,
                                            (p.thread / b.x) % b.y, p.thread / (b.x * b.y));
    return raise_fault(
        x, FaultKind::race,
        fmt::format("shared-memory race in {} on {}: {} wrote it{} while the TMA store that {} "
                    "started{} may still be reading it (the copy reads its box on its own time: "
                    "the thread that started it must commit it and wait with "
                    "cp.async.bulk.wait_group.read, then a barrier, before the box is written "
                    "again)",
                    block_name(x), shared_elem_name(x, a, std::min<uint32_t>(n, 4)),
                    thread_name(x, w, lane), at_line(line), starter, at_line(sline)),
        line);
  }
  return kNext;
}

// The deadlock report: every live warp waits on an mbarrier phase that nobody can complete.
int report_mbarrier_deadlock(Exec& x) {
  Block& B = *x.B;
  for (uint32_t wi = 0; wi < B.nwarps; ++wi) {
    Warp& w = (*B.warps)[wi];
    if (!w.live || !w.mbar_waiting) continue;
    const Inst& in = x.code[w.mbar_wait_pc];
    const int l = std::countr_zero(w.active ? w.active : w.live);
    const int line = x.P->info[w.mbar_wait_pc].line;
    uint64_t a = w.row(in.r[1])[l] + uint64_t(in.imm);
    std::string what = "an mbarrier";
    if (in.space == Space::shared && a + 8 <= B.shared_size) {
      Mbar b = unpack(*reinterpret_cast<const uint64_t*>(B.shared + a));
      what = fmt::format("{} (phase {}: {} of {} arrivals still missing{})",
                         shared_elem_name(x, a, 8), b.phase ? 1 : 0, b.pending, b.expected,
                         b.tx ? fmt::format(", {} transaction bytes outstanding", b.tx) : "");
      if (auto it = B.mbar_bytes.find(uint32_t(a)); b.tx > 0 && it != B.mbar_bytes.end())
        what += fmt::format(": it expects {} bytes this phase and {} arrived, so the copies "
                            "started on it bring fewer bytes than its expect_tx counts",
                            it->second.first, it->second.second);
      else if (b.tx < 0) // a phase completes when the count reaches zero; the bytes past it count
                         // against the next phase, whose count then never reaches zero
        what += ": more bytes landed on it than expect_tx announced, so the copies started on it "
                "bring more bytes than its expect_tx counts (every byte of a TMA box counts, the "
                "zeros filled past the tensor's edges too)";
    }
    return raise_fault(x, FaultKind::deadlock,
                       "deadlock in " + block_name(x) + ": every live warp waits on an mbarrier, " +
                           thread_name(x, w, l) + " on " + what + at_line(line) +
                           ", and no thread is left to arrive on it",
                       line);
  }
  return kStop;
}

namespace {

bool decode_tma(Dec& D, Inst& I, InstInfo& info, const Opc& o, const ptx::Instr& in) {
  if (o.has("reduce")) throw Unsupported("cp.reduce.async.bulk.tensor (a reduction into global)");
  if (o.has("multicast::cluster"))
    throw Unsupported("cp.async.bulk.tensor with .multicast::cluster (one copy into several "
                      "blocks of a cluster)");
  if (o.has("im2col") || o.has("im2col_no_offs") || o.has("tile::gather4") ||
      o.has("tile::scatter4") || o.has("im2col::w") || o.has("im2col::w::128"))
    throw Unsupported("cp.async.bulk.tensor in im2col or gather/scatter mode (.tile is simulated)");
  int rank = 0;
  for (int r = 1; r <= kTensorMapMaxRank; ++r)
    if (o.has(std::to_string(r) + "d")) rank = r;
  if (!rank) throw Unsupported("cp.async.bulk.tensor without .1d to .5d");
  const bool load = o.has("shared::cluster") || (o.has("shared::cta") && o.has("global") &&
                                                 o.has("mbarrier::complete_tx::bytes"));
  const size_t mi = load ? 1 : 0; // the [tensorMap, {coordinates}] operand
  if (in.ops.size() < (load ? 3u : 2u) || op(in, mi).kind != ptx::Operand::Kind::addr ||
      op(in, mi).elems.size() != 1)
    throw Unsupported("cp.async.bulk.tensor needs [tensorMap, {coordinates}] and its shared box");
  const ptx::Operand& mo = op(in, mi);
  ptx::Operand bare = mo;
  bare.elems.clear();
  Dec::Addr ma = D.addr(bare, Space::generic);
  I.r[1] = ma.base;
  I.aux = uint32_t(int32_t(ma.disp));
  I.space = ma.space == Space::kparam ? Space::kparam : Space::generic;
  I.r[3] = D.vec_rows(mo.elems[0], Ty::s32, rank);
  I.vec = uint8_t(rank);
  Dec::Addr sa = D.addr(op(in, load ? 0 : 1), Space::shared);
  if (sa.base == kNoRow) {
    I.r[0] = D.const_row(0);
  } else {
    I.r[0] = sa.base;
  }
  I.imm = sa.disp;
  if (load) {
    if (!o.has("global") || !o.has("mbarrier::complete_tx::bytes"))
      throw Unsupported("this form of cp.async.bulk.tensor (global to shared completing on an "
                        "mbarrier, and shared to global in a bulk group, are simulated)");
    Dec::Addr ba = D.addr(op(in, 2), Space::shared);
    I.r[2] = ba.base == kNoRow ? D.const_row(0) : ba.base;
    I.target = uint32_t(ba.disp);
    I.fn = h_tma_load;
    info.mem = MemKind::load;
  } else {
    if (!o.has("global") || !o.has("bulk_group"))
      throw Unsupported("this form of cp.async.bulk.tensor (global to shared completing on an "
                        "mbarrier, and shared to global in a bulk group, are simulated)");
    I.fn = h_tma_store;
    info.mem = MemKind::store;
  }
  return true;
}

} // namespace

bool decode_sync(Dec& D, Inst& I, InstInfo& info, const Opc& o, const ptx::Instr& in) {
  if (o.base == "cp" && o.has("async") && o.has("bulk")) {
    if (o.has("prefetch")) { // cp.async.bulk.prefetch.L2: a hint
      I.fn = h_nop;
      return true;
    }
    if (o.has("commit_group")) {
      I.fn = h_bulk_commit;
      return true;
    }
    if (o.has("wait_group")) {
      need_ops(in, 1);
      if (op(in, 0).kind != ptx::Operand::Kind::integer)
        throw Unsupported("cp.async.bulk.wait_group needs a constant");
      I.imm = int64_t(op(in, 0).bits);
      I.fn = h_bulk_wait;
      return true;
    }
    if (o.has("tensor")) return decode_tma(D, I, info, o, in);
    if (o.has("multicast::cluster"))
      throw Unsupported("cp.async.bulk to several blocks of a cluster");
    if (!o.has("global") || !(o.has("shared::cluster") || o.has("shared::cta")) ||
        !o.has("mbarrier::complete_tx::bytes"))
      throw Unsupported("this form of cp.async.bulk (global to shared, completing on an mbarrier, "
                        "is the one simulated)");
    if (in.ops.size() < 4)
      throw Unsupported("cp.async.bulk needs a destination, a source, a size "
                        "and an mbarrier");
    Dec::Addr da = D.addr(op(in, 0), Space::shared);
    Dec::Addr sa = D.addr(op(in, 1), Space::global);
    Dec::Addr ba = D.addr(op(in, 3), Space::shared);
    if (da.base == kNoRow || sa.base == kNoRow || ba.base == kNoRow)
      throw Unsupported("cp.async.bulk with absolute addresses");
    I.r[0] = da.base;
    I.imm = da.disp;
    I.r[1] = sa.base;
    I.aux = uint32_t(int32_t(sa.disp));
    I.r[2] = op(in, 2).kind == ptx::Operand::Kind::integer ? D.const_row(op(in, 2).bits)
                                                           : D.row(op(in, 2), Ty::u32);
    I.r[3] = ba.base;
    I.target = uint32_t(ba.disp);
    I.space = Space::shared;
    I.fn = h_cp_async_bulk;
    info.mem = MemKind::load;
    return true;
  }
  const bool async_arrive = o.base == "cp" && o.has("async") && o.has("mbarrier");
  if (o.base != "mbarrier" && !async_arrive) return false;
  auto addr = [&](size_t k) {
    Dec::Addr a = D.addr(op(in, k), o.space() == Space::shared ? Space::shared : Space::generic);
    if (a.base == kNoRow) throw Unsupported("an mbarrier at an absolute address");
    I.r[1] = a.base;
    I.imm = a.disp;
    I.space =
        a.space == Space::shared || o.space() == Space::shared ? Space::shared : Space::generic;
  };
  (void)info;
  if (async_arrive) {
    need_ops(in, 1);
    addr(0);
    I.sub = kAsyncArrive;
    I.aux = o.has("noinc") ? 2 : 0;
  } else if (o.has("init")) {
    need_ops(in, 2);
    addr(0);
    I.r[2] = D.row(op(in, 1), Ty::u32);
    I.sub = kInit;
  } else if (o.has("inval")) {
    need_ops(in, 1);
    addr(0);
    I.sub = kInval;
  } else if (o.has("pending_count")) {
    need_ops(in, 2);
    I.r[0] = D.dst(op(in, 0));
    I.r[1] = D.row(op(in, 1), Ty::b64);
    I.sub = kPendingCount;
  } else if (o.has("arrive") || o.has("arrive_drop")) {
    if (in.ops.size() < 2) throw Unsupported("mbarrier.arrive needs a state and an address");
    if (op(in, 0).kind != ptx::Operand::Kind::sink) I.r[0] = D.dst(op(in, 0));
    addr(1);
    if (in.ops.size() > 2) I.r[2] = D.row(op(in, 2), Ty::u32);
    I.sub = kArrive;
    I.aux = uint32_t((o.has("arrive_drop") ? 1 : 0) | (o.has("expect_tx") ? 2 : 0) |
                     (o.has("noComplete") ? 4 : 0));
    if (o.has("shared::cluster") && !o.has("shared::cta"))
      throw Unsupported("mbarrier arrivals on another block of a cluster");
  } else if (o.has("expect_tx") || o.has("complete_tx")) {
    need_ops(in, 2);
    addr(0);
    I.r[2] = D.row(op(in, 1), Ty::u32);
    I.sub = o.has("expect_tx") ? kExpectTx : kCompleteTx;
  } else if (o.has("test_wait") || o.has("try_wait")) {
    if (in.ops.size() < 3) throw Unsupported("mbarrier wait needs a predicate, address and state");
    I.pd = D.pred(op(in, 0));
    addr(1);
    I.aux = o.has("parity") ? 1 : 0;
    I.r[2] = D.row(op(in, 2), I.aux ? Ty::u32 : Ty::b64);
    I.sub = kTestWait;
  } else {
    throw Unsupported("this form of mbarrier");
  }
  I.fn = h_mbarrier;
  return true;
}

} // namespace wb::sim
