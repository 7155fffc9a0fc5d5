// The execution engine: warp scheduling inside a warp (min-pc groups), barriers, shared-memory
// race detection, the block loop, and launches with blocks spread over worker threads.
#include "exec.hpp"

#include "core/parallel.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

namespace wb::sim {

int h_nop(Exec&, Warp&, const Inst&, uint32_t) {
  return kNext;
}

int h_unsupported(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const InstInfo& inf = info_of(x, in);
  std::string src = inf.line > 0 ? ", from source line " + std::to_string(inf.line) : "";
  return raise_fault(x, FaultKind::unsupported,
                     "the simulator cannot run `" + inf.opcode + "` (PTX line " +
                         std::to_string(inf.ptx_line) + src + "): " + inf.note,
                     inf.line);
}

// ---- scheduling inside a warp ----

bool reschedule(Exec& x, Warp& w) {
  for (uint32_t mm = w.active; mm; mm &= mm - 1) w.lane_pc[std::countr_zero(mm)] = w.pc;
  w.active = 0;
  w.yielded &= w.run;
  uint32_t cand = w.run & ~w.yielded;
  if (!cand) {
    w.yielded = 0;
    cand = w.run;
  }
  bool forced = false;
  if (!cand) {
    if (!w.wsync) {
      w.resched_pc = kNoPc;
      return false;
    }
    // Nobody else can arrive: let the lowest parked warp-synchronous group go on its own.
    cand = w.wsync;
    forced = true;
  }
  uint64_t best = ~0ull;
  for (uint32_t mm = cand; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    uint64_t key = (uint64_t(0xffff - w.depth[l]) << 32) | w.lane_pc[l];
    best = std::min(best, key);
  }
  uint32_t pc = uint32_t(best);
  uint16_t d = uint16_t(0xffff - (best >> 32));
  uint32_t group = 0;
  for (uint32_t mm = cand; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    if (w.lane_pc[l] == pc && w.depth[l] == d) group |= 1u << l;
  }
  if (forced) {
    w.wsync &= ~group;
    w.run |= group;
    w.force_partial = true;
  } else if (w.wsync) {
    uint32_t ws = 0;
    for (uint32_t mm = w.wsync; mm; mm &= mm - 1) {
      int l = std::countr_zero(mm);
      if (w.lane_pc[l] == pc && w.depth[l] == d) ws |= 1u << l;
    }
    w.wsync &= ~ws;
    w.run |= ws;
    group |= ws;
  }
  w.active = group;
  w.pc = pc;
  uint32_t resched = kNoPc;
  for (uint32_t mm = (w.run | w.wsync) & ~group & ~w.yielded; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    if (w.depth[l] == d && w.lane_pc[l] > pc) resched = std::min(resched, w.lane_pc[l]);
  }
  w.resched_pc = resched;
  (void)x;
  return true;
}

// ---- barriers ----

int check_barriers(Exec& x) {
  Block& B = *x.B;
  auto& warps = *B.warps;
  for (int id = 0; id < 16; ++id) {
    if (!B.arrived[id]) continue;
    uint32_t expected = B.expected[id] ? B.expected[id] : B.nthreads - B.exited;
    if (B.arrived[id] < expected) continue;
    // Every thread that must arrive has: release. Threads of one barrier waiting at different
    // instructions are reported (a __syncthreads() in a branch not all threads take).
    uint32_t pc0 = kNoPc, pc1 = kNoPc, n0 = 0, n1 = 0;
    std::string who0, who1;
    auto note = [&](Warp& w, int l, uint32_t pc, uint32_t n) {
      if (pc0 == kNoPc || pc == pc0) {
        if (pc0 == kNoPc) who0 = thread_name(x, w, l);
        pc0 = pc;
        n0 += n;
      } else {
        if (pc1 == kNoPc) who1 = thread_name(x, w, l), pc1 = pc;
        n1 += n;
      }
    };
    for (uint32_t wi = 0; wi < B.nwarps; ++wi) {
      Warp& w = warps[wi];
      if (!w.bar) continue;
      if (w.bar_pc_all != kNoPc) {
        if (w.bar_id_all == id) note(w, std::countr_zero(w.bar), w.bar_pc_all, lanes_in(w.bar));
        continue;
      }
      for (uint32_t mm = w.bar; mm; mm &= mm - 1) {
        int l = std::countr_zero(mm);
        if (w.bar_id[l] == id) note(w, l, w.lane_pc[l], 1);
      }
    }
    if (pc1 != kNoPc) {
      int l0 = x.P->info[pc0].line, l1 = x.P->info[pc1].line;
      return raise_fault(x, FaultKind::deadlock,
                         "deadlock in " + block_name(x) +
                             ": its threads wait at different barriers, " + std::to_string(n0) +
                             " threads (" + who0 + ", ...) at line " + std::to_string(l0) +
                             " and " + std::to_string(n1) + " threads (" + who1 +
                             ", ...) at line " + std::to_string(l1) +
                             "; every thread of a block must reach the same __syncthreads() (is "
                             "one inside a branch that "
                             "not all threads take?)",
                         l0);
    }
    // Released only because the threads missing had exited: a GPU since Volta lets the others
    // through, but the programming guide requires every thread of the block to reach it.
    if (B.exited > 0 && !B.expected[id] && pc0 != kNoPc &&
        !x.L->warned_exited_barrier.exchange(true)) {
      const int line = x.P->info[pc0].line;
      x.warnings.push_back(fmt::format(
          "the __syncthreads() at line {} let {} threads of {} through after the other {} had "
          "exited without reaching it (a return before the barrier, or the barrier inside a branch "
          "that not all threads take): today's GPUs let it pass, but the CUDA programming guide "
          "says every thread of the block must reach it, and other GPUs may hang; guard the work "
          "instead of returning, and keep the barrier where every thread meets it",
          line, n0, block_name(x), B.exited));
    }
    const Inst* bi = pc0 != kNoPc ? &x.code[pc0] : nullptr;
    for (uint32_t wi = 0; wi < B.nwarps; ++wi) {
      Warp& w = warps[wi];
      if (!w.bar) continue;
      uint32_t lanes = 0;
      if (w.bar_pc_all != kNoPc) {
        if (w.bar_id_all == id) lanes = w.bar;
      } else {
        for (uint32_t mm = w.bar; mm; mm &= mm - 1) {
          int l = std::countr_zero(mm);
          if (w.bar_id[l] == id) lanes |= 1u << l;
        }
      }
      if (!lanes) continue;
      if (bi) {
        if (bi->aux == 2 && bi->r[0] != kNoRow) {
          uint64_t* d = w.row(bi->r[0]);
          each_lane(lanes, [&](int l) { d[l] = B.red_popc[id]; });
        } else if (bi->aux == 3 || bi->aux == 4) {
          bool v = bi->aux == 3 ? B.red_all[id] : B.red_any[id];
          w.p[bi->pd] = (w.p[bi->pd] & ~lanes) | (v ? lanes : 0);
        }
      }
      w.bar &= ~lanes;
      if (w.bar_pc_all != kNoPc && !w.run && !w.wsync && !w.active) {
        // The whole warp goes on together from the instruction after the barrier.
        w.active = w.run = lanes;
        w.pc = pc0 + 1;
        w.resched_pc = kNoPc;
      } else {
        for (uint32_t mm = lanes; mm; mm &= mm - 1) w.lane_pc[std::countr_zero(mm)] = pc0 + 1;
        w.run |= lanes;
      }
      if (!w.bar) w.bar_pc_all = kNoPc;
    }
    B.arrived[id] = 0;
    B.expected[id] = 0;
    B.red_popc[id] = 0;
    B.red_all[id] = true;
    B.red_any[id] = false;
    B.epoch = ++x.epoch_base; // a new interval for race detection
  }
  return kNext;
}

// ---- shared-memory races ----

namespace {
std::string lane_thread(const Exec& x, uint32_t warp, uint32_t lane) {
  uint32_t t = warp * 32 + lane;
  const Dim3& b = x.L->block;
  return "thread (" + std::to_string(t % b.x) + "," + std::to_string((t / b.x) % b.y) + "," +
         std::to_string(t / (b.x * b.y)) + ")";
}
} // namespace

const SharedSym* shared_sym_at(const Exec& x, uint64_t off) {
  for (auto& s : x.P->shared_syms) {
    uint64_t end = s.dynamic ? x.B->shared_size : uint64_t(s.offset) + s.size;
    if (off >= s.offset && off < end) return &s;
  }
  return nullptr;
}

std::string shared_elem_name(const Exec& x, uint64_t off, uint32_t n) {
  const SharedSym* s = shared_sym_at(x, off);
  if (!s) return "shared offset " + std::to_string(off);
  if (!s->dynamic && s->size <= n) return s->name; // a variable of one element
  return s->name + "[" + std::to_string((off - s->offset) / std::max<uint32_t>(n, 1)) + "]";
}

int shared_race_check(Exec& x, Warp& w, const Inst& in, int lane, uint64_t a, uint32_t n,
                      bool write, const std::byte* newval) {
  if (write && !x.B->tma_stores.empty())
    if (int r = tma_store_race(x, w, in, lane, a, n); r != kNext) return r;
  uint32_t epoch = x.B->epoch;
  uint16_t me = uint16_t(w.index);
  uint32_t pc = pc_of(x, in);
  for (uint64_t wd = a >> 2; wd <= (a + n - 1) >> 2; ++wd) {
    if (wd >= x.shared_meta.size()) break;
    WordAccess& m = x.shared_meta[wd];
    const char* kind = nullptr;
    uint32_t other_pc = 0, other_warp = 0, other_lane = 0;
    if (write) {
      if (m.w_epoch == epoch && m.w_warp != me) {
        // Writing the value already there is harmless (e.g. many threads setting a flag).
        uint64_t lo = std::max<uint64_t>(wd * 4, a), hi = std::min<uint64_t>(wd * 4 + 4, a + n);
        if (std::memcmp(x.B->shared + lo, newval + (lo - a), hi - lo) != 0) {
          kind = "wrote";
          other_pc = m.w_pc, other_warp = m.w_warp, other_lane = m.w_lane;
        }
      }
      if (!kind && m.r_epoch == epoch && m.r_warp != me) {
        kind = "read";
        other_pc = m.r_pc, other_warp = m.r_warp == 0xffff ? 0xffff : m.r_warp,
        other_lane = m.r_lane;
      }
      if (!kind) {
        m.w_epoch = epoch;
        m.w_warp = me;
        m.w_lane = uint8_t(lane);
        m.w_pc = pc;
      }
    } else {
      if (m.w_epoch == epoch && m.w_warp != me) {
        kind = "wrote";
        other_pc = m.w_pc, other_warp = m.w_warp, other_lane = m.w_lane;
      } else if (m.r_epoch != epoch) {
        m.r_epoch = epoch;
        m.r_warp = me;
        m.r_lane = uint8_t(lane);
        m.r_pc = pc;
      } else if (m.r_warp != me) {
        m.r_warp = 0xffff;
      }
    }
    if (kind) {
      const InstInfo& inf = info_of(x, in);
      int oline = x.P->info[other_pc].line;
      std::string other = other_warp == 0xffff ? "other warps"
                                               : lane_thread(x, other_warp, other_lane) +
                                                     " (warp " + std::to_string(other_warp) + ")";
      if (other_warp == 0xffff) other_warp = 0;
      std::string msg = "shared-memory race in " + block_name(x) + " on " +
                        shared_elem_name(x, wd * 4, n) + ": " + thread_name(x, w, lane) +
                        " (warp " + std::to_string(w.index) + ") " + (write ? "wrote" : "read") +
                        " it" + at_line(inf.line) + " after " + other + " " + kind + " it" +
                        at_line(oline) + ", with no __syncthreads() between them";
      // A bulk copy's bytes are there only once its mbarrier's phase completes.
      auto bulk = [&](uint32_t p) { return x.P->info[p].opcode.rfind("cp.async.bulk", 0) == 0; };
      if (bulk(pc) || bulk(other_pc)) {
        const bool tma =
            x.P->info[bulk(pc) ? pc : other_pc].opcode.find(".tensor") != std::string::npos;
        msg += std::string(" (a ") +
               (tma ? "TMA copy (cp.async.bulk.tensor) writes its box"
                    : "cp.async.bulk writes its destination") +
               " on its own time: read it only after a wait on its mbarrier completes, and start "
               "the next copy into it only after a barrier that follows the last reads)";
      }
      return raise_fault(x, FaultKind::race, msg, inf.line);
    }
  }
  return kNext;
}

// ---- warps and blocks ----

namespace {

uint64_t special_value(const Exec& x, const Warp& w, Special s, int lane) {
  const LaunchCtx& L = *x.L;
  const Block& B = *x.B;
  uint32_t t = w.tid0 + uint32_t(lane);
  switch (s) {
  case Special::tid_x:
    return t % L.block.x;
  case Special::tid_y:
    return (t / L.block.x) % L.block.y;
  case Special::tid_z:
    return t / (L.block.x * L.block.y);
  case Special::ntid_x:
    return L.block.x;
  case Special::ntid_y:
    return L.block.y;
  case Special::ntid_z:
    return L.block.z;
  case Special::ctaid_x:
    return B.idx.x;
  case Special::ctaid_y:
    return B.idx.y;
  case Special::ctaid_z:
    return B.idx.z;
  case Special::nctaid_x:
    return L.grid.x;
  case Special::nctaid_y:
    return L.grid.y;
  case Special::nctaid_z:
    return L.grid.z;
  case Special::laneid:
    return uint32_t(lane);
  case Special::warpid:
    return w.index;
  case Special::nwarpid:
    return B.nwarps;
  case Special::smid:
    return 0;
  case Special::nsmid:
    return 1;
  case Special::gridid:
    return uint64_t(L.launch_index);
  case Special::lanemask_eq:
    return 1u << lane;
  case Special::lanemask_le:
    return uint32_t((uint64_t(2) << lane) - 1);
  case Special::lanemask_lt:
    return (1u << lane) - 1;
  case Special::lanemask_ge:
    return ~((1u << lane) - 1);
  case Special::lanemask_gt:
    return uint32_t(~((uint64_t(2) << lane) - 1));
  case Special::dynamic_smem_size:
    return L.dyn_shared;
  case Special::total_smem_size:
    return B.shared_size;
  case Special::envreg1:
    return L.grid_workspace >> 32;
  case Special::envreg2:
    return L.grid_workspace & 0xffffffffu;
  default:
    return 0;
  }
}

void init_warp(Exec& x, Warp& w, uint32_t index) {
  const Program& P = *x.P;
  const Block& B = *x.B;
  const LaunchCtx& L = *x.L;
  w.index = index;
  w.tid0 = index * kWarpSize;
  uint32_t n = std::min<uint32_t>(kWarpSize, B.nthreads - w.tid0);
  w.live = n == kWarpSize ? kFull : ((1u << n) - 1);
  w.run = w.live;
  w.bar = w.wsync = 0;
  w.yielded = w.spin_mask = w.spin_count = 0;
  w.cp_pending.clear();
  std::fill(std::begin(w.cp_groups), std::end(w.cp_groups), 0u);
  w.bar_pc_all = kNoPc;
  w.active = w.live;
  w.pc = P.entry_pc;
  w.resched_pc = kNoPc;
  w.force_partial = w.warned_partial = false;
  w.executed = 0;
  std::fill(std::begin(w.depth), std::end(w.depth), uint16_t(0));
  std::fill(std::begin(w.lane_pc), std::end(w.lane_pc), P.entry_pc);
  std::fill(std::begin(w.gloads), std::end(w.gloads), 0u);
  std::fill(std::begin(w.gstores), std::end(w.gstores), 0u);
  w.gloads_all = w.gstores_all = 0;
  const uint32_t bx = L.block.x, by = L.block.y;
  // Thread coordinates of the 32 lanes, counted up without divisions.
  uint32_t tx[kWarpSize], ty[kWarpSize], tz[kWarpSize];
  {
    uint32_t x0 = w.tid0 % bx, y0 = (w.tid0 / bx) % by, z0 = w.tid0 / (bx * by);
    for (int l = 0; l < kWarpSize; ++l) {
      tx[l] = x0, ty[l] = y0, tz[l] = z0;
      if (++x0 == bx) {
        x0 = 0;
        if (++y0 == by) y0 = 0, ++z0;
      }
    }
  }
  for (auto& [row, s] : P.specials) {
    uint64_t* d = w.row(row);
    switch (s) {
    case Special::tid_x:
      for (int l = 0; l < kWarpSize; ++l) d[l] = tx[l];
      break;
    case Special::tid_y:
      for (int l = 0; l < kWarpSize; ++l) d[l] = ty[l];
      break;
    case Special::tid_z:
      for (int l = 0; l < kWarpSize; ++l) d[l] = tz[l];
      break;
    default: {
      uint64_t v0 = special_value(x, w, s, 0);
      bool uniform = s != Special::laneid && s != Special::lanemask_eq &&
                     s != Special::lanemask_le && s != Special::lanemask_lt &&
                     s != Special::lanemask_ge && s != Special::lanemask_gt;
      if (uniform)
        std::fill(d, d + kWarpSize, v0);
      else
        for (int l = 0; l < kWarpSize; ++l) d[l] = special_value(x, w, s, l);
    }
    }
  }
  for (uint32_t row : P.zero_rows) std::memset(w.row(row), 0, sizeof(uint64_t) * kWarpSize);
  if (P.npreds) std::memset(w.p, 0, sizeof(uint32_t) * P.npreds);
  for (int16_t p : P.true_preds) w.p[p] = kFull;
}

template <bool Count, bool Trace> int run_warp(Exec& x, Warp& w, uint32_t slice) {
  const Inst* code = x.code;
  uint32_t n = 0;
  int rc = kNext;
  while (n < slice) {
    const Inst& in = code[w.pc];
    uint32_t m = w.active;
    if (in.guard >= 0) m &= w.p[in.guard] ^ in.guard_xor;
    if constexpr (Count) {
      // Two counts per instruction, in their own compact array (the hot path).
      HotCount& c = x.hot[w.pc];
      ++c.warp;
      c.lanes += lanes_in(m);
    }
    if constexpr (Trace) { // a sampled run (the performance model): every instruction, in order
      WarpTrace& t = *w.trace;
      t.rec = t.ev.size() < x.L->trace_cap;
      if (t.rec)
        t.ev.push_back(TraceEvent{w.pc, m});
      else
        ++t.dropped;
    }
    ++n;
    rc = in.fn(x, w, in, m);
    if (rc == kNext) {
      if (++w.pc >= w.resched_pc && !reschedule(x, w)) {
        rc = kYield;
        break;
      }
      continue;
    }
    if (rc == kJumped) {
      rc = kNext;
      continue;
    }
    break;
  }
  w.executed += n;
  x.executed += n;
  if (rc != kStop && w.executed > x.L->warp_budget && w.live) {
    const InstInfo& inf = x.P->info[std::min<size_t>(w.pc, x.P->info.size() - 1)];
    int l = w.active ? std::countr_zero(w.active) : std::countr_zero(w.live);
    return raise_fault(x, FaultKind::timeout,
                       "the kernel seems stuck in an endless loop: warp " +
                           std::to_string(w.index) + " of " + block_name(x) + " ran more than " +
                           std::to_string(x.L->warp_budget) + " instructions (" +
                           thread_name(x, w, l) + " was" + at_line(inf.line) + ")",
                       inf.line);
  }
  return rc;
}

// A block none of whose warps can run although some threads are alive.
int report_stuck(Exec& x) {
  Block& B = *x.B;
  std::string where;
  int line = 0;
  for (uint32_t wi = 0; wi < B.nwarps && where.empty(); ++wi) {
    Warp& w = (*B.warps)[wi];
    if (w.bar) {
      int l = std::countr_zero(w.bar);
      line = x.P->info[w.bar_pc_all != kNoPc ? w.bar_pc_all : w.lane_pc[l]].line;
      where = thread_name(x, w, l) + " waits at the barrier" + at_line(line);
    }
  }
  uint32_t waiting = 0;
  for (uint32_t wi = 0; wi < B.nwarps; ++wi) waiting += lanes_in((*B.warps)[wi].bar);
  return raise_fault(x, FaultKind::deadlock,
                     "deadlock in " + block_name(x) + ": " + std::to_string(waiting) +
                         " threads wait at a barrier that the other " +
                         std::to_string(B.nthreads - B.exited - waiting) +
                         " live threads never reach (" + where + ")",
                     line);
}

void finish_block(Exec& x, Block& B) {
  for (uint32_t wi = 0; wi < B.nwarps; ++wi) {
    Warp& w = x.warps[wi];
    for (int l = 0; l < kWarpSize; ++l) {
      x.max_gloads = std::max(x.max_gloads, w.gloads[l] + w.gloads_all);
      x.max_gstores = std::max(x.max_gstores, w.gstores[l] + w.gstores_all);
    }
  }
  if (!B.printf_out.text().empty() || B.printf_out.dropped()) {
    std::lock_guard lk(x.L->mu);
    // The bound holds for the launch: a block keeps what still fits (whole characters).
    PrintfSink fit(kPrintfOutputBound - std::min(x.L->printf_bytes, kPrintfOutputBound));
    fit.add(B.printf_out);
    x.L->printf_bytes += fit.text().size();
    x.L->printf_dropped += fit.dropped();
    if (fit.dropped()) x.L->printf_bytes = kPrintfOutputBound; // nothing after a cut is kept
    if (!fit.text().empty()) x.L->printf_by_block[B.linear] = fit.text();
  }
}

// Runs a block's warps in turns until they have all exited, or a fault stops the launch.
template <bool Count, bool Trace> void run_warps(Exec& x, Block& B) {
  LaunchCtx& L = *x.L;
  std::vector<uint32_t> order(B.nwarps);
  std::iota(order.begin(), order.end(), 0u);
  // A cooperative launch's blocks each have a thread, and may wait on one another at a grid
  // barrier: short turns, and the CPU handed on after each round, so a block spinning there lets
  // the others reach it.
  uint32_t slice = L.shuffle ? 16 : L.cooperative ? 256 : 4096;
  if (L.stop_after) slice = uint32_t(std::min<size_t>(slice, L.stop_after));
  uint32_t rounds = 0;
  for (;;) {
    if (L.shuffle) {
      for (uint32_t i = B.nwarps; i > 1; --i) std::swap(order[i - 1], order[x.next_rand() % i]);
    }
    bool progress = false, alive = false, all_wait_mbar = true;
    const uint64_t mbar_changes = B.mbar_changes;
    for (uint32_t wi : order) {
      Warp& w = x.warps[wi];
      if (!w.live) continue;
      alive = true;
      if (!w.active && !reschedule(x, w)) continue;
      uint32_t s = L.shuffle ? 1 + uint32_t(x.next_rand() % slice) : slice;
      // A sampled run's stop: no warp runs past it, so its trace (capped there) is whole.
      if (L.stop_after && w.executed < L.stop_after)
        s = uint32_t(std::min<uint64_t>(s, L.stop_after - w.executed));
      w.mbar_waiting = false;
      int rc = run_warp<Count, Trace>(x, w, s);
      progress = true;
      all_wait_mbar &= w.mbar_waiting;
      if (rc == kStop) return;
      if (L.stop_after && w.executed >= L.stop_after) { // a census has seen enough of this block
        B.census_stopped = true;
        return;
      }
    }
    if (!alive) break;
    if (!progress) {
      report_stuck(x);
      return;
    }
    if (all_wait_mbar && B.mbar_changes == mbar_changes) {
      report_mbarrier_deadlock(x);
      return;
    }
    if (L.cooperative) std::this_thread::yield();
    if (L.stop.load(std::memory_order_relaxed)) return;
    if ((++rounds & 15) == 0) {
      if (cancel_requested(L.cancel)) return L.stop.store(true);
      uint64_t total = L.executed.fetch_add(x.executed, std::memory_order_relaxed) + x.executed;
      x.executed = 0;
      bool over = total > L.budget, late = std::chrono::steady_clock::now() > L.deadline;
      if (over || late) {
        // Say where a thread of this block was: most likely inside the loop that never ends.
        std::string where;
        int line = 0;
        for (uint32_t wi = 0; wi < B.nwarps && where.empty(); ++wi) {
          Warp& w = x.warps[wi];
          uint32_t lanes = w.active ? w.active : w.run;
          if (!lanes) continue;
          int l = std::countr_zero(lanes);
          uint32_t pc = (w.active >> l) & 1 ? w.pc : w.lane_pc[l];
          line = x.P->info[std::min<size_t>(pc, x.P->info.size() - 1)].line;
          where =
              " (" + thread_name(x, w, l) + " of " + block_name(x) + " was" + at_line(line) + ")";
        }
        raise_fault(x, FaultKind::timeout,
                    std::string("the kernel seems stuck in an endless loop: ") +
                        (over ? "the launch ran more than " + std::to_string(L.budget) +
                                    " warp instructions"
                              : "it ran past the time limit") +
                        " without finishing" + where,
                    line);
        return;
      }
    }
  }
}

// ---- a stopped warp's remaining work, from its loops ----
// A sampled run may stop a block before it ends (SampledRun's stop_after). The performance model
// then needs how many instructions each warp would still have run. Every counted loop the warp is
// inside says how many trips it has left: its exit test compares a counter that the body steps by
// a fixed amount (`add %r, %r, 32`) with a bound, and both are in the registers now. With the
// trips each loop has completed (the trace), the instructions per trip follow; a loop that has
// completed none is charged what its current trip has run plus its inner loops' remaining work.
namespace {

struct LoopSpan {
  uint32_t head = 0, back = 0; // pcs of the header (the back branch's target) and the back branch
};

// A stride or bound the loop computes from values set before it (`shr %r153, %ntid.x, 5` at the
// bottom of the loop, not yet run in its first trip): recomputed from them (mov, add, sub, mul.lo,
// shl, shr, and), else the register as it is now.
uint64_t invariant_value(const Exec& x, const Warp& w, uint32_t row, int lane, const LoopSpan& L,
                         int depth) {
  if (depth < 4)
    for (uint32_t pc = L.head; pc <= L.back; ++pc) {
      const Inst& d = x.code[pc];
      const auto& defs = x.P->info[pc].defs;
      if (d.guard >= 0 || std::find(defs.begin(), defs.end(), row) == defs.end()) continue;
      const std::string& o = x.P->info[pc].opcode;
      const std::string base = o.substr(0, o.find('.'));
      const bool wide = o.size() >= 3 && o.compare(o.size() - 2, 2, "64") == 0;
      auto arg = [&](int k) { return invariant_value(x, w, d.r[k], lane, L, depth + 1); };
      uint64_t v = 0;
      if (base == "mov" && d.r[1] != kNoRow)
        v = arg(1);
      else if ((base == "add" || base == "sub" || base == "shl" || base == "shr" ||
                base == "and") &&
               d.r[1] != kNoRow && d.r[2] != kNoRow && d.r[1] != row && d.r[2] != row) {
        const uint64_t a = arg(1), b = arg(2);
        v = base == "add"   ? a + b
            : base == "sub" ? a - b
            : base == "shl" ? (b >= 64 ? 0 : a << b)
            : base == "shr" ? (b >= 64 ? 0 : (wide ? a : a & 0xffffffffull) >> b)
                            : a & b;
      } else if (o.rfind("mul.lo.", 0) == 0 && d.r[1] != kNoRow && d.r[2] != kNoRow &&
                 d.r[1] != row && d.r[2] != row) {
        v = arg(1) * arg(2);
      } else {
        break; // anything else: the register as it is
      }
      return wide ? v : v & 0xffffffffull;
    }
  return w.rv(row, lane);
}

// Trips left after the current one, for the loop whose exit test the setp at `sp` is, with the
// loop going on while that setp's result XOR `invert` holds. Empty: the test is not a counter
// stepped by a constant stride against a bound.
std::optional<uint64_t> trips_left(const Exec& x, const Warp& w, uint32_t sp, bool invert,
                                   const LoopSpan& L, uint32_t lanes_in_loop) {
  const Inst& in = x.code[sp];
  const std::string& op = x.P->info[sp].opcode; // setp.lt.s32
  const size_t d1 = op.find('.'), d2 = op.find('.', d1 + 1);
  if (op.rfind("setp.", 0) != 0 || d2 == std::string::npos) return std::nullopt;
  const std::string cmp = op.substr(d1 + 1, d2 - d1 - 1), ty = op.substr(op.rfind('.') + 1);
  if (ty.size() < 2 || (ty[0] != 's' && ty[0] != 'u' && ty[0] != 'b')) return std::nullopt;
  const bool wide = ty.substr(1) == "64";
  const bool is_signed = ty[0] == 's' && cmp != "lo" && cmp != "ls" && cmp != "hi" && cmp != "hs";
  // Which operand is the counter: the one an add/sub in the loop steps by itself.
  int counter = -1;
  uint32_t stride_row = kNoRow;
  bool down = false;
  // Whether the instruction at `pc` steps `row` by itself (`add %r, %r, s` or `sub %r, %r, s`,
  // not `sub %r, s, %r`), and by what.
  auto steps = [&](uint32_t pc, uint32_t row) {
    const std::string& o = x.P->info[pc].opcode;
    const Inst& a = x.code[pc];
    if ((o.rfind("add.", 0) != 0 && o.rfind("sub.", 0) != 0) || row == kNoRow || a.r[0] != row ||
        (a.r[1] != row && (o[0] == 's' || a.r[2] != row)))
      return false;
    down = o[0] == 's';
    stride_row = a.r[1] == row ? a.r[2] : a.r[1];
    return true;
  };
  for (uint32_t pc = L.head; pc <= L.back && counter < 0; ++pc)
    for (int k = 1; k <= 2 && counter < 0; ++k)
      if (steps(pc, in.r[k])) counter = k;
  // Or an operand the loop computes from such a counter (`add %r73, %r329, 1` before the test
  // while the counter %r329 steps at the bottom): it steps by the counter's stride.
  for (int k = 1; k <= 2 && counter < 0; ++k)
    for (uint32_t pc = L.head; pc <= L.back && counter < 0; ++pc) {
      const Inst& a = x.code[pc];
      if (in.r[k] == kNoRow || x.P->info[pc].opcode.rfind("add.", 0) != 0 || a.r[0] != in.r[k] ||
          a.r[1] == a.r[0] || a.r[2] == a.r[0])
        continue;
      for (uint32_t q = L.head; q <= L.back && counter < 0; ++q)
        for (int j = 1; j <= 2 && counter < 0; ++j)
          if (steps(q, a.r[j])) counter = k;
    }
  if (counter < 0 || stride_row == kNoRow) return std::nullopt;
  auto val = [&](uint32_t row, int lane) -> __int128 {
    uint64_t v = invariant_value(x, w, row, lane, L, 0);
    if (!wide) v &= 0xffffffffull;
    if (is_signed) return wide ? __int128(int64_t(v)) : __int128(int32_t(uint32_t(v)));
    return __int128(v);
  };
  auto holds = [&](__int128 a, __int128 b) {
    bool r = cmp == "lt" || cmp == "lo"   ? a < b
             : cmp == "le" || cmp == "ls" ? a <= b
             : cmp == "gt" || cmp == "hi" ? a > b
             : cmp == "ge" || cmp == "hs" ? a >= b
             : cmp == "ne"                ? a != b
                                          : a == b;
    return r != invert;
  };
  if (cmp != "lt" && cmp != "lo" && cmp != "le" && cmp != "ls" && cmp != "gt" && cmp != "hi" &&
      cmp != "ge" && cmp != "hs" && cmp != "ne")
    return std::nullopt;
  constexpr __int128 kFar = __int128(1) << 40;
  uint64_t most = 0;
  bool any = false;
  // The lanes that entered the loop (another lane's registers may hold anything).
  for (uint32_t lanes = lanes_in_loop & w.live; lanes; lanes &= lanes - 1) {
    const int l = std::countr_zero(lanes);
    __int128 step = val(stride_row, l);
    if (!is_signed && !wide && step > 0x7fffffff) step -= __int128(1) << 32; // a negative u32
    if (down) step = -step;
    if (step == 0) return std::nullopt;
    const __int128 c = val(in.r[counter], l), b = val(in.r[3 - counter], l);
    auto at = [&](__int128 n) {
      const __int128 v = c + n * step;
      return counter == 1 ? holds(v, b) : holds(b, v);
    };
    __int128 n = 0;
    if (cmp == "ne" && !invert) { // while (i != end): exactly (end - i) / step more
      if ((b - c) % step != 0 || (b - c) / step < 0) return std::nullopt;
      n = std::max<__int128>(0, (b - c) / step - 1);
    } else {
      if (cmp == "ne" || !at(1)) {
        n = 0;
      } else { // the largest n with the test still holding (it holds for 1..n: a monotone test)
        __int128 lo = 1, hi = 2;
        while (hi < kFar && at(hi)) lo = hi, hi *= 2;
        if (hi >= kFar) return std::nullopt;
        while (hi - lo > 1) {
          const __int128 mid = (lo + hi) / 2;
          (at(mid) ? lo : hi) = mid;
        }
        n = lo;
      }
    }
    most = std::max<uint64_t>(most, uint64_t(n));
    any = true;
  }
  if (!any) return uint64_t(0);
  return most;
}

void extrapolate_stopped(const Exec& x, const Warp& w, WarpTrace& t) {
  t.loops_uncounted = 0;
  t.extrapolated = 0;
  t.extrapolated_partial = false;
  if (!w.live || t.ev.empty() || t.dropped) return;
  const uint32_t at = t.ev.back().pc;
  const auto& info = x.P->info;
  // The loops around `at`, outermost first (one per header: the farthest back branch to it).
  std::vector<LoopSpan> loops;
  for (uint32_t b = at; b < info.size(); ++b) {
    if (!info[b].branch || info[b].branch_target > at) continue;
    const uint32_t h = info[b].branch_target;
    auto it = std::find_if(loops.begin(), loops.end(), [&](auto& L) { return L.head == h; });
    if (it == loops.end())
      loops.push_back({h, b});
    else
      it->back = std::max(it->back, b);
  }
  std::sort(loops.begin(), loops.end(),
            [](auto& a, auto& b) { return a.back - a.head > b.back - b.head; });
  double rest = 0; // instructions left in the loops inside the current one
  for (size_t i = loops.size(); i-- > 0;) {
    const LoopSpan& L = loops[i];
    // This entry into the loop: from the last time its header ran after a pc outside it.
    size_t start = 0;
    for (size_t e = t.ev.size(); e-- > 0;)
      if (t.ev[e].pc == L.head && (e == 0 || t.ev[e - 1].pc < L.head || t.ev[e - 1].pc > L.back)) {
        start = e;
        break;
      }
    size_t trips = 0, last_back = 0;
    for (size_t e = start; e < t.ev.size(); ++e)
      if (t.ev[e].pc == L.back) ++trips, last_back = e;
    const double cur = double(t.ev.size() - (trips ? last_back + 1 : start));
    const double per_trip = trips ? double(last_back + 1 - start) / double(trips) : cur + rest;
    // With no trip to measure, the trip is charged what ran of it; a loop further down its body
    // (a second pass over the same data) has not run at all.
    if (!trips)
      for (uint32_t b = at + 1; b <= L.back && !t.extrapolated_partial; ++b)
        t.extrapolated_partial = info[b].branch && b != L.back && info[b].branch_target > at &&
                                 info[b].branch_target <= b;
    // The exit test: the back branch's own guard, or else the first guarded branch out of the loop.
    uint32_t br = L.back;
    bool invert = false;
    if (x.code[br].guard < 0) {
      br = kNoPc;
      for (uint32_t pc = L.head; pc < L.back && br == kNoPc; ++pc)
        if (info[pc].branch && x.code[pc].guard >= 0 &&
            (info[pc].branch_target > L.back || info[pc].branch_target < L.head))
          br = pc, invert = true; // the loop goes on while the exit branch is not taken
    }
    std::optional<uint64_t> left;
    const uint32_t lanes = t.ev[start].mask ? t.ev[start].mask : w.live;
    // The trips left by the setp that writes predicate `p` (searched back from `from`), or, for a
    // loop that goes on while two tests hold (`and.pred`), the fewer of theirs.
    auto by_pred = [&](auto& self, int16_t p, uint32_t from, bool inv,
                       int depth) -> std::optional<uint64_t> {
      for (uint32_t pc = from; pc-- > L.head;) {
        const Inst& s = x.code[pc];
        if (s.pd != p && s.pd2 != p) continue;
        const std::string& o = info[pc].opcode;
        if (o.rfind("setp.", 0) == 0)
          return s.ps < 0 ? trips_left(x, w, pc, inv ^ (s.pd2 == p), L, lanes) : std::nullopt;
        // A predicate set to a constant, then to the other one on the path a branch skips
        // (`mov.pred %p, 0; @%q bra L; ...; mov.pred %p, -1; L:`, straight-line code between):
        // %p says whether the branch was taken.
        if (o == "mov.pred" && s.r[1] == kNoRow && s.guard < 0 && depth < 2) {
          auto sets_p = [&](uint32_t q) { return x.code[q].pd == p || x.code[q].pd2 == p; };
          uint32_t b = pc;
          while (b-- > L.head && !info[b].branch && !sets_p(b)) {
          }
          if (b < L.head || b >= pc || !info[b].branch || x.code[b].guard < 0 ||
              info[b].branch_target <= pc || info[b].branch_target > from)
            return std::nullopt;
          uint32_t d = b;
          while (d-- > L.head && !info[d].branch && !sets_p(d)) {
          }
          const Inst& m0 = x.code[d];
          if (d < L.head || d >= b || info[d].branch || info[d].opcode != "mov.pred" ||
              m0.r[1] != kNoRow || m0.guard >= 0 || (m0.imm != 0) == (s.imm != 0))
            return std::nullopt;
          return self(self, x.code[b].guard, b, inv ^ (s.imm != 0) ^ (x.code[b].guard_xor != 0),
                      depth + 1);
        }
        if (o == "and.pred" && !inv && depth < 2 && !s.aux && !s.imm) {
          auto a = self(self, int16_t(s.r[1]), pc, false, depth + 1);
          auto b = self(self, int16_t(s.r[2]), pc, false, depth + 1);
          if (a && b) return std::min(*a, *b);
          return a ? a : b; // the loop ends no later than either test says
        }
        return std::nullopt;
      }
      return std::nullopt;
    };
    if (br != kNoPc) {
      const Inst& bi = x.code[br];
      left = by_pred(by_pred, bi.guard, br, invert ^ (bi.guard_xor != 0), 0);
    }
    if (!left) ++t.loops_uncounted;
    rest = std::max(rest, per_trip - cur) + double(left.value_or(0)) * per_trip;
  }
  t.extrapolated = uint64_t(std::llround(rest));
}

} // namespace

template <bool Count, bool Trace = false>
void run_block(Exec& x, uint64_t linear, BlockTrace* trace = nullptr) {
  LaunchCtx& L = *x.L;
  Block B;
  B.linear = linear;
  B.idx.x = uint32_t(linear % L.grid.x);
  B.idx.y = uint32_t((linear / L.grid.x) % L.grid.y);
  B.idx.z = uint32_t(linear / (uint64_t(L.grid.x) * L.grid.y));
  B.nthreads = uint32_t(L.block.count());
  B.nwarps = (B.nthreads + kWarpSize - 1) / kWarpSize;
  B.warps = &x.warps;
  B.shared = x.shared_mem.data();
  B.shared_size = uint32_t(x.shared_mem.size());
  // Shared memory starts out as garbage on a GPU; a NaN/-1 pattern makes reads of it visible.
  std::memset(B.shared, 0xff, B.shared_size);
  x.B = &B;
  B.epoch = ++x.epoch_base;
  for (uint32_t i = 0; i < B.nwarps; ++i) init_warp(x, x.warps[i], i);
  if constexpr (Trace) {
    trace->linear = linear;
    trace->idx = B.idx;
    trace->nthreads = B.nthreads;
    trace->warps.assign(B.nwarps, WarpTrace{});
    // Room for the events a warp may keep, reserved once: a trace grown by doubling copies its
    // events and touches fresh pages at each step (a sampled GEMM's warps keep hundreds of
    // thousands). Untouched, the room costs no memory.
    size_t room = L.trace_cap;
    if (L.stop_after) room = std::min(room, L.stop_after + 1);
    room = std::min<size_t>(room, size_t(1) << 20);
    if (const size_t most = L.trace_most.load(std::memory_order_relaxed))
      room = std::min(room, 2 * most + 64);
    for (uint32_t i = 0; i < B.nwarps; ++i) {
      trace->warps[i].ev.reserve(room);
      x.warps[i].trace = &trace->warps[i];
    }
  } else {
    for (uint32_t i = 0; i < B.nwarps; ++i) x.warps[i].trace = nullptr;
  }
  run_warps<Count, Trace>(x, B);
  if constexpr (Trace) {
    for (uint32_t i = 0; i < B.nwarps; ++i) x.warps[i].trace = nullptr;
    size_t most = 0;
    for (auto& w : trace->warps) most = std::max(most, w.ev.size());
    for (size_t seen = L.trace_most.load(); most > seen;)
      if (L.trace_most.compare_exchange_weak(seen, most)) break;
    trace->stopped = B.census_stopped;
    if (B.census_stopped && L.trace_cap >= L.stop_after)
      for (uint32_t i = 0; i < B.nwarps; ++i) extrapolate_stopped(x, x.warps[i], trace->warps[i]);
  }
  finish_block(x, B); // printf output and per-thread maxima, also after a fault
}

// Prepares a worker for a launch. Exec objects live in the Simulator between runs, so vectors
// keep their memory; registers need no clearing (a kernel reading a register it never wrote is
// undefined), only the constant rows are written.
void setup_exec(Exec& x, LaunchCtx& L) {
  const Program& P = *L.P;
  bool same_program = x.prog_uid == P.uid;
  x.prog_uid = P.uid;
  x.L = &L;
  x.P = &P;
  x.code = P.code.data();
  x.count = L.count;
  // A sampled run (the performance model) only times blocks whose races the checked runs already
  // looked for; a trusted run (the puzzle's reference) is only asked for its outputs.
  x.track_races = L.sample == nullptr && !L.trusted;
  x.rng ^= L.seed * 0x9e3779b97f4a7c15ull + 1;
  x.max_gloads = x.max_gstores = 0;
  x.executed = 0;
  x.warnings.clear();
  x.last = nullptr;
  uint32_t nthreads = uint32_t(L.block.count());
  uint32_t nwarps = (nthreads + kWarpSize - 1) / kWarpSize;
  if (x.warps.size() < nwarps) x.warps.resize(nwarps);
  size_t lpt = P.local_per_thread;
  if (x.local_mem.size() < size_t(nwarps) * kWarpSize * lpt)
    x.local_mem.resize(size_t(nwarps) * kWarpSize * lpt);
  for (uint32_t i = 0; i < nwarps; ++i) {
    Warp& w = x.warps[i];
    bool fresh = w.regs.size() < size_t(P.nrows) * kWarpSize;
    if (fresh) w.regs.resize(size_t(P.nrows) * kWarpSize, 0);
    if (w.preds.size() < std::max<uint32_t>(P.npreds, 1))
      w.preds.resize(std::max<uint32_t>(P.npreds, 1), 0);
    w.r = w.regs.data();
    w.p = w.preds.data();
    if (fresh || !same_program || !w.consts_ok)
      for (auto& [row, v] : P.consts)
        std::fill(w.r + size_t(row) * kWarpSize, w.r + size_t(row + 1) * kWarpSize, v);
    w.consts_ok = true;
    w.local = x.local_mem.data() + size_t(i) * kWarpSize * lpt;
    if (P.uses_calls && w.stack.size() < size_t(kWarpSize) * P.max_depth)
      w.stack.resize(size_t(kWarpSize) * P.max_depth);
  }
  for (size_t i = nwarps; i < x.warps.size(); ++i) x.warps[i].consts_ok = false;
  uint32_t shared = L.dyn_shared == 0 ? P.static_shared : P.dyn_shared_offset + L.dyn_shared;
  x.shared_mem.resize(shared);
  // Race records are stamped with an epoch that only grows in this Exec: old ones never match.
  if (x.shared_meta.size() < (shared + 3) / 4) x.shared_meta.resize((shared + 3) / 4);
  if (L.count) {
    x.ic.assign(P.code.size(), InstCount{});
    x.hot.assign(P.code.size(), HotCount{});
  }
  x.rcache.assign(P.code.size(), nullptr);
}

// Reports an exception escaping the interpreter (out of memory, a bug) as a fault.
void internal_fault(LaunchCtx& L, const char* what) {
  std::lock_guard lk(L.mu);
  if (!L.fault) {
    bool oom = std::string_view(what).find("bad_alloc") != std::string_view::npos;
    L.fault.kind = oom ? FaultKind::memory_limit : FaultKind::internal;
    L.fault.message = oom ? "the simulator ran out of host memory running this launch"
                          : std::string("the simulator failed (a bug in Warpbook): ") + what;
    L.fault.launch = L.launch_index;
  }
  L.stop.store(true);
}

// Runs the launch's `b`-th block (of the sampled list, when the run is sampled).
void run_nth_block(LaunchCtx& L, Exec& x, uint64_t b) {
  if (cancel_requested(L.cancel)) return L.stop.store(true);
  if (L.sample) // (no per-instruction counts: a sampled run's counters are not read)
    run_block<false, true>(x, (*L.sample)[b], &(*L.traces)[b]);
  else if (L.count)
    run_block<true>(x, b);
  else
    run_block<false>(x, b);
}

void worker(LaunchCtx& L, Exec& x, uint64_t nblocks) {
  try {
    setup_exec(x, L);
    for (;;) {
      if (L.stop.load(std::memory_order_relaxed)) break;
      uint64_t b = L.next_block.fetch_add(1, std::memory_order_relaxed);
      if (b >= nblocks) break;
      run_nth_block(L, x, b);
    }
  } catch (const std::exception& e) {
    internal_fault(L, e.what());
  }
  L.executed.fetch_add(x.executed, std::memory_order_relaxed);
  x.executed = 0;
}

} // namespace

Pool::Pool(unsigned threads, int nice) {
  for (unsigned i = 0; i < threads; ++i) {
    threads_.emplace_back([this, i, nice] {
      if (nice) lower_thread_priority(nice);
      uint64_t seen = 0;
      for (;;) {
        // Spin a little before sleeping: runs often come back to back (a checker's cases, a
        // benchmark), and waking a sleeping thread costs more than a small kernel.
        auto spin_until = std::chrono::steady_clock::now() + kSpin;
        spinning_.fetch_add(1, std::memory_order_relaxed);
        for (int k = 0; gen_.load(std::memory_order_acquire) == seen; ++k) {
#if defined(__x86_64__)
          __builtin_ia32_pause();
#endif
          if ((k & 63) == 0 && std::chrono::steady_clock::now() > spin_until) break;
        }
        spinning_.fetch_sub(1, std::memory_order_relaxed);
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return quit_ || gen_.load(std::memory_order_relaxed) != seen; });
        if (quit_) return;
        seen = gen_.load(std::memory_order_relaxed);
        if (i + 1 >= want_) continue; // not needed this time
        const auto* job = job_;
        lk.unlock();
        (*job)(i + 1);
        lk.lock();
        if (--left_ == 0) done_.notify_all();
      }
    });
  }
}

Pool::~Pool() {
  {
    std::lock_guard lk(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void Pool::start(unsigned n, const std::function<void(unsigned)>& f) {
  n = std::min(n, size());
  if (n <= 1) return;
  {
    std::lock_guard lk(mu_);
    job_ = &f;
    want_ = n;
    left_ = n - 1;
    gen_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();
  started_ = true;
}

void Pool::wait() {
  if (!started_) return;
  std::unique_lock lk(mu_);
  done_.wait(lk, [&] { return left_ == 0; });
  job_ = nullptr;
  started_ = false;
}

namespace {

// What the workers counted, merged into the launch's totals.
void merge_totals(LaunchCtx& L, std::vector<Exec>& ex, size_t n, LaunchTotals& out) {
  if (L.count) {
    out.ic.assign(L.P->code.size(), InstCount{});
    for (size_t wi = 0; wi < n; ++wi) {
      Exec& x = ex[wi];
      for (size_t i = 0; i < x.ic.size(); ++i) {
        InstCount& a = out.ic[i];
        const InstCount& b = x.ic[i];
        a.warp += x.hot[i].warp;
        a.lanes += x.hot[i].lanes;
        a.g_req += b.g_req;
        a.g_sect += b.g_sect;
        a.g_ideal += b.g_ideal;
        a.g_bytes += b.g_bytes;
        a.s_wave += b.s_wave;
        a.s_ideal += b.s_ideal;
        a.divergent += b.divergent;
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    Exec& x = ex[i];
    out.max_gloads = std::max(out.max_gloads, x.max_gloads);
    out.max_gstores = std::max(out.max_gstores, x.max_gstores);
    for (auto& w : x.warnings) L.warnings.push_back(w);
  }
}

// A cooperative launch: every block at once, each on a thread of its own with its own worker
// state, so blocks that wait for each other at a grid barrier all get there.
void run_cooperative(LaunchCtx& L, uint64_t nblocks, LaunchTotals& out) {
  std::vector<Exec> ex(nblocks);
  std::vector<std::thread> threads;
  threads.reserve(nblocks);
  for (uint64_t b = 0; b < nblocks; ++b)
    threads.emplace_back([&L, &ex, b] {
      try {
        setup_exec(ex[b], L);
        if (!L.stop.load(std::memory_order_relaxed)) run_nth_block(L, ex[b], b);
      } catch (const std::exception& e) {
        internal_fault(L, e.what());
      }
      L.executed.fetch_add(ex[b].executed, std::memory_order_relaxed);
      ex[b].executed = 0;
    });
  for (auto& t : threads) t.join();
  merge_totals(L, ex, nblocks, out);
}

} // namespace

void run_launch(LaunchCtx& L, Pool& pool, unsigned max_workers, LaunchTotals& out) {
  uint64_t nblocks = L.sample ? L.sample->size() : L.grid.count();
  if (L.sample) L.traces->assign(nblocks, BlockTrace{});
  if (L.cooperative && !L.sample) {
    run_cooperative(L, nblocks, out);
    return;
  }
  unsigned nw = unsigned(std::min<uint64_t>(max_workers ? max_workers : pool.size(), nblocks));
  nw = std::max(1u, std::min(nw, pool.size()));
  std::vector<Exec>& ex = pool.execs();
  if (ex.size() < nw) ex.resize(nw);
  // This thread starts on the blocks alone; helpers join only when the launch turns out to take
  // longer than waking them costs (a small launch is done before a sleeping thread wakes up).
  std::function<void(unsigned)> helper = [&](unsigned i) { worker(L, ex[i], nblocks); };
  Exec& x = ex[0];
  auto t0 = std::chrono::steady_clock::now();
  bool helping = false;
  try {
    setup_exec(x, L);
    for (;;) {
      if (L.stop.load(std::memory_order_relaxed)) break;
      // Helpers that are still spinning from the last run start at once; sleeping ones only once
      // the launch has shown it is worth waking them.
      if (!helping && nw > 1 && L.next_block.load(std::memory_order_relaxed) + 1 < nblocks &&
          (pool.spinning() ||
           std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(25))) {
        pool.start(nw, helper);
        helping = true;
      }
      uint64_t b = L.next_block.fetch_add(1, std::memory_order_relaxed);
      if (b >= nblocks) break;
      run_nth_block(L, x, b);
    }
  } catch (const std::exception& e) {
    internal_fault(L, e.what());
  }
  L.executed.fetch_add(x.executed, std::memory_order_relaxed);
  x.executed = 0;
  if (helping)
    pool.wait();
  else
    nw = 1;
  merge_totals(L, ex, nw, out);
}

} // namespace wb::sim
