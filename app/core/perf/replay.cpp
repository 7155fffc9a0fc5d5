#include "replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <unordered_map>

namespace wb::perf {

const char* stall_name(Stall s) {
  switch (s) {
  case Stall::dram:
    return "loads from DRAM";
  case Stall::l2:
    return "loads from the L2";
  case Stall::l1:
    return "L1 hits";
  case Stall::shared:
    return "shared memory";
  case Stall::atomic:
    return "atomics";
  case Stall::alu:
    return "dependent arithmetic";
  case Stall::pipe:
    return "a busy pipe";
  case Stall::mio:
    return "the load/store queue";
  case Stall::store:
    return "stores waiting for DRAM";
  case Stall::barrier:
    return "barriers";
  case Stall::issue:
    return "other warps issuing";
  default:
    return "?";
  }
}

namespace {

constexpr double kMioDepth = 16; // clocks of work the memory-instruction queue takes ahead
// A wait on an mbarrier phase whose copies no warp has started yet looks again after this many
// clocks (the order of try_wait's own suspend before it tests again).
constexpr double kMbarPoll = 64;
constexpr size_t kChunk = 512; // events per chunk when long traces are thinned
constexpr uint32_t kNoReg = 0xffffffffu;

// A set-associative LRU cache of 128-byte lines with a valid bit per 32-byte sector.
class L1 {
public:
  explicit L1(double bytes) {
    const size_t lines = std::max<size_t>(64, size_t(bytes / 128));
    ways_ = 8;
    sets_ = std::max<size_t>(1, lines / ways_);
    tag_.assign(sets_ * ways_, ~0ull);
    stamp_.assign(sets_ * ways_, 0);
    valid_.assign(sets_ * ways_, 0);
  }
  // true on a hit; a miss allocates the sector when `fill`. `when` is the access's place in the
  // order the GPU would make it (the warp's fair clock, below): the least recent line goes first.
  bool access(uint64_t sector, bool fill, double when) {
    const uint64_t line = sector >> 2;
    const uint8_t bit = uint8_t(1u << (sector & 3));
    const size_t set = size_t((line * 0x9e3779b97f4a7c15ull) >> 40) % sets_;
    const size_t base = set * ways_;
    size_t victim = base;
    for (size_t w = base; w < base + ways_; ++w) {
      if (tag_[w] == line) {
        stamp_[w] = std::max(stamp_[w], when);
        if (valid_[w] & bit) return true;
        if (fill) valid_[w] |= bit;
        return false;
      }
      if (stamp_[w] < stamp_[victim]) victim = w;
    }
    if (fill) {
      tag_[victim] = line;
      stamp_[victim] = when;
      valid_[victim] = bit;
    }
    return false;
  }

private:
  size_t sets_ = 1, ways_ = 8;
  std::vector<uint64_t> tag_;
  std::vector<double> stamp_;
  std::vector<uint8_t> valid_;
};

struct Slot {
  int block = -1;          // index into in.blocks; -1: empty
  uint32_t first_warp = 0; // its warps in `warps`
  uint32_t nwarps = 0, live = 0, arrived = 0;
  double start = 0;
  std::unordered_set<uint64_t> stored; // sectors it has written (each charged to DRAM once)
  // cp.async.bulk: per mbarrier (its shared offset) and phase (its low 16 bits), how many of the
  // copies completing that phase the replay has issued, and when the last of them lands. A phase
  // is its own: a producer may already have started the copies of the ring's later phases.
  struct Bulk {
    uint32_t copies = 0;
    double landed = 0;
  };
  std::unordered_map<uint64_t, Bulk> bulk_done;
  Bulk& bulk_at(uint32_t mbar, uint32_t phase) {
    return bulk_done[(uint64_t(mbar) << 16) | (phase & 0xffff)];
  }
  // A bulk-copy event started: its copies count toward their phase, landing at `landed`. Its last
  // trace entry names the mbarrier, the phase (low 16 bits of the mask) and the copies (high 16).
  void start_bulk(const sim::WarpTrace& tr, const sim::TraceEvent& e, double landed) {
    const sim::TraceSector& mb = tr.sec[e.first + e.sectors()];
    Bulk& b = bulk_at(uint32_t(mb.id), mb.mask);
    b.copies += mb.mask >> 16;
    b.landed = std::max(b.landed, landed);
  }
  // Shared words that float atomics serialise on (offset / 4), and when each is free next.
  std::vector<std::pair<uint32_t, double>> word_free;
  double& word_at(uint32_t word) {
    for (auto& [w, t] : word_free)
      if (w == word) return t;
    return word_free.emplace_back(word, 0.0).second;
  }
};

struct WarpState {
  int slot = -1;
  const sim::WarpTrace* tr = nullptr;
  size_t pos = 0;
  double next_issue = 0;
  // cp.async: when the open (uncommitted) group's copies land, and each committed group's.
  double cp_open = 0;
  std::vector<double> cp_groups;
  // wgmma: when the open (uncommitted) group's MMAs complete, and each committed group in flight.
  double wg_open = 0;
  std::vector<double> wg_groups;
  bool at_bar = false, done = true;
  bool polling = false; // waiting on an mbarrier phase whose copies no warp has started yet
  int smsp = 0;
  std::vector<double> done_at;    // per event of the trace: when its result is ready
  std::vector<uint8_t> done_kind; // and what it waited for (Stall)
  // The latest of the operands of the event at dep_pos, and the first of them that is ready
  // then (its index): they are all earlier events, whose times are fixed once issued, so a warp
  // that must wait for something else looks them up once, not at every look.
  size_t dep_pos = ~size_t(0);
  double dep_t = 0;
  uint32_t dep_src = 0;
  bool dep_any = false;
  size_t played_chunk = ~size_t(0); // a chunk of the trace known to be played (thinning)
  uint32_t lanes = 0;               // the warp's threads (every event's lanes are among them)
  // The work each replayed event stands for: a trace cut at the cap holds a part of the warp's
  // instructions, and what it counts (issue slots, units, bytes) stands for the whole, as the
  // prediction's time does. Only the counts are weighed; the replay's clock runs on the events.
  double weight = 1;
  // Where the warp's L1 accesses fall in the SM's order as the GPU makes it. The H100 serves its
  // waiting warps in turn (bench/perfmodel/experiments/l1-stores: warps on one walk all end in
  // the last 4.5-17% of the launch), so between two of a warp's sectors every live warp touches
  // one: the clock advances by the live warps a sector. The replay's own order (lowest warp first
  // when the memory queue holds them back) let a few warps reuse their lines before the others
  // touched theirs, keeping 87% of hits where the H100 keeps 30% with 256 KB of lines in use.
  double fair = 0;
};

// When each 64-byte granule last came into the L2 (the replay's l2_seen): an open-addressing
// table, since the replay looks one up or sets one for every sector it plays or passes over (a
// node-based map allocated a node for each new one). Only found and set, never walked.
class GranuleTimes {
public:
  GranuleTimes() { rehash(1 << 12); }
  const double* find(uint64_t g) const {
    for (size_t i = slot(g);; i = (i + 1) & mask_) {
      if (!used_[i]) return nullptr;
      if (keys_[i] == g) return &vals_[i];
    }
  }
  bool contains(uint64_t g) const { return find(g) != nullptr; }
  void set(uint64_t g, double v) {
    if (2 * (n_ + 1) > keys_.size()) rehash(2 * keys_.size());
    size_t i = slot(g);
    for (; used_[i]; i = (i + 1) & mask_)
      if (keys_[i] == g) {
        vals_[i] = v;
        return;
      }
    used_[i] = 1, keys_[i] = g, vals_[i] = v, ++n_;
  }

private:
  size_t slot(uint64_t g) const { return size_t((g * 0x9e3779b97f4a7c15ull) >> 20) & mask_; }
  void rehash(size_t cap) {
    std::vector<uint64_t> k = std::move(keys_);
    std::vector<double> v = std::move(vals_);
    std::vector<uint8_t> u = std::move(used_);
    keys_.assign(cap, 0), vals_.assign(cap, 0), used_.assign(cap, 0);
    mask_ = cap - 1, n_ = 0;
    for (size_t i = 0; i < u.size(); ++i)
      if (u[i]) set(k[i], v[i]);
  }
  std::vector<uint64_t> keys_;
  std::vector<double> vals_;
  std::vector<uint8_t> used_;
  size_t mask_ = 0, n_ = 0;
};

struct Item {
  double t;
  uint32_t w;
  bool operator>(const Item& o) const { return t > o.t || (t == o.t && w > o.w); }
};

// A binary min-heap of Items, earliest (then lowest warp) on top: std::priority_queue's order,
// kept inline in the replay's loop (two items are never equal unless they are the same item, so
// any heap pops the same sequence).
class ReadyQueue {
public:
  bool empty() const { return v_.empty(); }
  const Item& top() const { return v_.front(); }
  void push(Item it) {
    size_t i = v_.size();
    v_.push_back(it);
    while (i > 0) {
      const size_t up = (i - 1) / 2;
      if (!(v_[up] > it)) break;
      v_[i] = v_[up];
      i = up;
    }
    v_[i] = it;
  }
  void pop() {
    const Item last = v_.back();
    v_.pop_back();
    const size_t n = v_.size();
    if (n == 0) return;
    size_t i = 0;
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && v_[c] > v_[c + 1]) ++c;
      if (!(last > v_[c])) break;
      v_[i] = v_[c];
      i = c;
    }
    v_[i] = last;
  }

private:
  std::vector<Item> v_;
};

} // namespace

ReplayResult replay(const ReplayInput& in) {
  const Machine& M = *in.m;
  const sim::SampledLaunch& L = *in.launch;
  const std::vector<OpCost>& cost = *in.cost;
  const LaunchMemory& mem = *in.mem;
  ReplayResult R;
  R.pc.assign(L.code.size(), PcStats{});
  if (in.blocks.empty() || L.blocks.empty()) return R;

  const uint32_t wpb = uint32_t((L.launch.block.count() + 31) / 32);
  const int slots_n = std::max(1, in.resident);
  std::vector<Slot> slots(static_cast<size_t>(slots_n));
  std::vector<WarpState> warps(size_t(slots_n) * wpb);
  for (size_t i = 0; i < warps.size(); ++i) {
    warps[i].slot = int(i / wpb);
    warps[i].smsp = int(i % 4);
  }
  for (int s = 0; s < slots_n; ++s) slots[size_t(s)].first_warp = uint32_t(s) * wpb;

  // What the loop asks of each pc's opcode, once: a float atomic (.f32, .f64, .f16...), a double
  // one, a cp.async.
  enum : uint8_t { kFloatOp = 1, kF64Op = 2, kCpAsync = 4 };
  std::vector<uint8_t> opflags(L.code.size(), 0);
  for (size_t pc = 0; pc < L.code.size(); ++pc) {
    const std::string& o = L.code[pc].opcode;
    opflags[pc] = uint8_t((o.find(".f") != std::string::npos ? kFloatOp : 0) |
                          (o.find(".f64") != std::string::npos ? kF64Op : 0) |
                          (o.rfind("cp.async", 0) == 0 ? kCpAsync : 0));
  }

  L1 l1(in.l1_bytes);
  const double clk = M.clock_ghz;
  const double thin = std::max(1, in.thin);
  // Per-SMSP pipes and the SM-wide queues (times in clocks).
  double smsp_free[4] = {0, 0, 0, 0};
  double pipe_free[4][kPipes] = {};
  const double l2_credit = M.cycles(M.lat_l2_ns);
  double mio_free = 0, port_free = 0, l2_free = 0, dram_free = 0, atom_free = 0;
  // The SM's history in the L2: when (in bytes this SM brought in) each 64-byte granule last came.
  GranuleTimes l2_seen;
  std::unordered_map<uint64_t, uint64_t> atomic_owner; // sector -> the warp that last updated it
  double fetched = 0;                                  // bytes this SM brought into the L2 so far
  struct Pending {
    double t, bytes;
    bool operator>(const Pending& o) const { return t > o.t; }
  };
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> dram_inflight;
  double dram_bytes_inflight = 0; // this SM's DRAM reads not back yet and writes not written
  double inflight_integral = 0;

  // DRAM service per byte for a stream with this launch's mix of reads and writes: the measured
  // streams (read, triad 1/3 writes, copy 1/2, write) interpolated.
  const double w = std::clamp(in.dram_mix_write, 0.0, 1.0);
  const double pts[4][2] = {{0.0, M.dram_read_gbps},
                            {1.0 / 3, M.dram_triad_gbps},
                            {0.5, M.dram_copy_gbps},
                            {1.0, M.dram_write_gbps}};
  double stream_gbps = M.dram_read_gbps;
  for (int i = 0; i < 3; ++i)
    if (w >= pts[i][0] && w <= pts[i + 1][0]) {
      double f = (w - pts[i][0]) / (pts[i + 1][0] - pts[i][0]);
      stream_gbps = pts[i][1] + f * (pts[i + 1][1] - pts[i][1]);
    }
  const double store_backlog = M.cycles(2 * M.lat_dram_ns); // clocks of stores DRAM may owe

  // Relocates a template's sector to the block it stands for (replay.hpp: PcShift).
  const int64_t kPrivate = int64_t(1) << 36;
  auto relocate = [&](uint64_t s, uint32_t pc, const ReplayBlock& b, bool local) -> uint64_t {
    const sim::BlockTrace& T = L.blocks[size_t(b.tmpl)];
    if (local) return s + uint64_t(int64_t(b.linear + 1) * kPrivate);
    const PcShift& sh = mem.shift[pc];
    int64_t off = 0;
    const int64_t db[3] = {int64_t(b.idx.x) - T.idx.x, int64_t(b.idx.y) - T.idx.y,
                           int64_t(b.idx.z) - T.idx.z};
    bool priv = false;
    for (int d = 0; d < 3; ++d) {
      if (!db[d]) continue;
      if (sh.known[d])
        off += sh.delta[d] * db[d];
      else
        priv = true;
    }
    if (priv) off += int64_t(b.linear + 1) * kPrivate;
    return uint64_t(int64_t(s) + off);
  };
  // Did an earlier block (in dispatch order) bring this template sector into the L2 recently?
  const Dim3 g = L.launch.grid;
  const double stride[3] = {1.0, double(g.x), double(g.x) * g.y};
  // The earlier block along d is either less than one round of every SM's slots back (resident
  // beside this one, or dispatched while it waited for a slot: it reads the same data at about
  // the same point of its run, so the L2 still has it however much the grid reads in all), or it
  // ran before, and then only as many bytes as the blocks between them brought in may have passed.
  // (Not "in the same round aligned at multiples of the slots": which blocks start a round is an
  // accident of timing, and the SM replayed takes every SM-th block, so an aligned test made a
  // third of its blocks round starters, against one in 264 on the GPU.)
  const uint64_t concurrent =
      std::max<uint64_t>(1, uint64_t(slots_n) * uint64_t(std::max(1, M.sm_count)));
  auto earlier_block_had = [&](uint64_t s, uint32_t pc, const ReplayBlock& b) {
    const PcShift& sh = mem.shift[pc];
    const uint32_t c[3] = {b.idx.x, b.idx.y, b.idx.z};
    for (int d = 0; d < 3; ++d) {
      if (c[d] == 0 || !sh.known[d]) continue;
      const uint64_t back = uint64_t(stride[d]);
      const bool within_a_round = back < concurrent; // c[d] > 0: the block `back` ago exists
      const double distance = stride[d] * std::max(mem.new_bytes_per_block, 32.0);
      if (!within_a_round && distance > M.l2_capacity) continue;
      if (sh.delta[d] == 0 ||
          (b.tmpl == mem.anchor && mem.anchor_footprint.count(s + uint64_t(sh.delta[d]))))
        return true;
    }
    return false;
  };

  // How many blocks of a round read this instruction's sector, b and the later blocks along each
  // dimension its address does not move with that run beside b (less than a round of every SM's
  // slots ahead). b misses where they will hit (the first in dispatch order fetches, as
  // earlier_block_had says), but the DRAM streams the sector once for all of them and each of
  // their SMs leaves its share of the bandwidth to it: b's SM pays its part of the bytes. (Without
  // this, the first block of a GEMM's grid fetched both its panels at one SM's share of the DRAM,
  // twice as long as the blocks after it.)
  auto round_sharers = [&](uint32_t pc, const ReplayBlock& b) {
    if (pc < mem.sharers.size() && mem.sharers[pc] > 0)
      return std::min(mem.sharers[pc], double(concurrent));
    const PcShift& sh = mem.shift[pc];
    const uint32_t c[3] = {b.idx.x, b.idx.y, b.idx.z}, n[3] = {g.x, g.y, g.z};
    double k = 1;
    for (int d = 0; d < 3; ++d) {
      if (!sh.known[d] || sh.delta[d] != 0 || n[d] < 2) continue;
      const uint64_t back = uint64_t(stride[d]);
      if (back >= concurrent) continue;
      k *= double(1 + std::min<uint64_t>(n[d] - 1 - c[d], (concurrent - 1) / back));
    }
    return std::min(k, double(concurrent));
  };

  // Is this 64-byte granule in the L2: brought in by this SM recently enough, or by an earlier
  // block (`id` is the template sector, `pc` the instruction)?
  auto in_l2 = [&](uint64_t gran, uint64_t id, uint32_t pc, const ReplayBlock& b) {
    if (in.l2_resident)
      for (const L2Range& r : *in.l2_resident)
        if (2 * gran + 1 >= r.first && 2 * gran <= r.last) return true;
    const double* seen = l2_seen.find(gran);
    return (seen && (fetched - *seen) * std::max(1.0, b.busy_sms) < M.l2_capacity) ||
           earlier_block_had(id, pc, b);
  };

  // Blocks: dispatch in order, each no sooner than the SM can start blocks.
  size_t next_block = 0;
  double last_dispatch = -1e30;
  const double dispatch_gap = M.cycles(std::max(M.block_ns, M.block_ns_per_warp * double(wpb)));
  const double turnover = M.cycles(M.block_turnover_ns);
  std::vector<double> retire_times, durations; // per replayed block, in the order they retired
  std::vector<ReadyQueue> ready(4);
  double now = 0;
  uint64_t events = 0;
  // WARPBOOK_REPLAY_TRACE=N prints the first N instructions one warp issues (warp 0, or
  // WARPBOOK_REPLAY_TRACE_WARP=W: a producer's consumers are further on), and every block's start
  // and end (for model work).
  const char* debug_env = std::getenv("WARPBOOK_REPLAY_TRACE");
  long debug_left = debug_env ? std::atol(debug_env) : 0;
  const char* debug_warp_env = std::getenv("WARPBOOK_REPLAY_TRACE_WARP");
  const uint32_t debug_warp = debug_warp_env ? uint32_t(std::atoi(debug_warp_env)) : 0;
  size_t empty_slots = size_t(slots_n);

  uint32_t live_warps = 0; // on the SM: a block starts only when its warps fit beside these
  auto start_block = [&](int s, double t) {
    Slot& sl = slots[size_t(s)];
    const ReplayBlock& b = in.blocks[next_block];
    const sim::BlockTrace& T = L.blocks[size_t(b.tmpl)];
    sl.block = int(next_block++);
    sl.nwarps = uint32_t(std::min<size_t>(wpb, T.warps.size()));
    sl.live = sl.nwarps;
    sl.arrived = 0;
    sl.start = t;
    sl.stored.clear();
    sl.bulk_done.clear();
    sl.word_free.clear();
    --empty_slots;
    // Its warps start at the fair clock of the warps already running (their mean), or where the
    // last ones ended: the lines earlier blocks left are older than any it touches.
    double fair_sum = 0, fair_n = 0, fair_max = 0;
    for (const WarpState& o : warps) {
      fair_max = std::max(fair_max, o.fair);
      if (!o.done) fair_sum += o.fair, ++fair_n;
    }
    const double fair0 = fair_n > 0 ? fair_sum / fair_n : fair_max;
    for (uint32_t k = 0; k < wpb; ++k) {
      WarpState& ws = warps[sl.first_warp + k];
      if (k >= sl.nwarps || T.warps[k].ev.empty()) {
        ws.done = true;
        if (k < sl.nwarps) --sl.live;
        continue;
      }
      ws.tr = &T.warps[k];
      ws.weight = double(T.warps[k].ev.size() + T.warps[k].dropped) / double(T.warps[k].ev.size());
      // Successive blocks start on successive sub-partitions: a grid of one-warp-busy blocks
      // spreads over all four schedulers (02-row-sum's reference runs at 4 warps' speed, not 1).
      ws.smsp = int((k + uint32_t(sl.block)) % 4);
      ws.pos = 0;
      ws.fair = fair0;
      ws.done = false;
      ws.at_bar = false;
      ws.next_issue = t;
      ws.cp_open = 0;
      ws.cp_groups.clear();
      ws.wg_open = 0;
      ws.wg_groups.clear();
      ws.dep_pos = ws.played_chunk = ~size_t(0);
      const uint32_t threads = T.nthreads > 32 * k ? T.nthreads - 32 * k : 0;
      ws.lanes = threads >= 32 ? ~0u : (1u << threads) - 1;
      ws.done_at.assign(ws.tr->ev.size(), 0.0);
      ws.done_kind.assign(ws.tr->ev.size(), uint8_t(Stall::alu));
      ready[size_t(ws.smsp)].push({t, sl.first_warp + k});
    }
    if (sl.live == 0) { // an empty block retires at once
      sl.block = -1;
      ++empty_slots;
      retire_times.push_back(t);
      durations.push_back(0);
    }
  };
  auto dispatch = [&](double t) {
    for (int s = 0; s < slots_n && next_block < in.blocks.size(); ++s) {
      if (slots[size_t(s)].block >= 0) continue;
      if (live_warps + wpb > uint32_t(std::max(in.warp_slots, int(wpb)))) break;
      // A slot's next block: once the SM has retired the last one (probe block_turnover) and
      // its dispatcher is free.
      double at = std::max(t + (t > 0 ? turnover : 0.0), last_dispatch + dispatch_gap);
      if (at > t) R.dispatch_wait += at - t;
      last_dispatch = at;
      start_block(s, at);
      live_warps += slots[size_t(s)].live;
    }
  };
  auto release_barrier = [&](Slot& sl, double t) {
    for (uint32_t k = 0; k < sl.nwarps; ++k) {
      WarpState& ws = warps[sl.first_warp + k];
      if (ws.at_bar && !ws.done) {
        R.barrier_wait += t - ws.next_issue;
        ws.at_bar = false;
        ws.next_issue = t + M.latency[int(Pipe::sync)];
        ready[size_t(ws.smsp)].push({ws.next_issue, sl.first_warp + k});
      }
    }
    sl.arrived = 0;
  };
  auto finish_warp = [&](WarpState& ws, double t) {
    ws.done = true;
    Slot& sl = slots[size_t(ws.slot)];
    --sl.live;
    --live_warps;
    if (sl.live > 0 && sl.arrived >= sl.live) release_barrier(sl, t);
    if (sl.live > 0 && slots_n > 1) dispatch(t); // its warp slot may let another block in
    if (sl.live == 0) {
      if (debug_env)
        std::fprintf(stderr, "replay: block %d in slot %d: %.0f to %.0f\n", sl.block, ws.slot,
                     sl.start, t);
      retire_times.push_back(t);
      durations.push_back(t - sl.start);
      R.warp_cycles += double(sl.nwarps) * (t - sl.start);
      sl.block = -1;
      ++empty_slots;
      dispatch(t);
    }
  };

  // Whether every other warp of ws's block has ended, waits at a barrier or polls an mbarrier
  // too: then no warp will start the copies ws waits for (a trace cut short lost them), and it
  // goes on rather than waiting for ever.
  auto others_stuck = [&](const WarpState& ws) {
    const Slot& sl = slots[size_t(ws.slot)];
    for (uint32_t k = 0; k < sl.nwarps; ++k) {
      const WarpState& o = warps[sl.first_warp + k];
      if (&o != &ws && !o.done && !o.at_bar && !o.polling) return false;
    }
    return true;
  };

  auto l1_when = [&](WarpState& ws) { return ws.fair += std::max<double>(1, live_warps); };

  // Skips events of thinned chunks (barriers are always kept). Their loads still pass through the
  // L1 and the L2 (untimed, uncounted): the replayed chunks then hit on what the skipped ones
  // brought in (the other half of a granule, a tile's next rows), as they would in a full run.
  // One chunk of each run of `thin` is played, which one drawn from the run's index. Playing
  // always the first beat against a loop's period: a tiled SGEMM's k-step is about a chunk long,
  // and its played chunks held a fixed share of its loads (5.3 GB through the L2 at thin 6, 3.4 GB
  // at thin 3, where the unthinned replay counts 4.33 GB; drawn, every thinning counts 4.33-4.39).
  auto played = [&](size_t chunk) {
    const size_t run = chunk / size_t(thin);
    return chunk % size_t(thin) ==
           size_t(((uint64_t(run) * 0x9e3779b97f4a7c15ull) >> 33) % uint64_t(thin));
  };
  double skipped = 0; // events passed over by thinning (`events` counts those played)
  auto skip_thinned = [&](WarpState& ws) {
    if (thin <= 1) return;
    const auto& ev = ws.tr->ev;
    const ReplayBlock& rb = in.blocks[size_t(slots[size_t(ws.slot)].block)];
    // A chunk at a time: the events up to the end of a chunk that is not played.
    if (ws.pos / kChunk == ws.played_chunk) return;
    for (size_t end = 0; ws.pos < ev.size(); ++ws.pos, ++skipped) {
      if (ws.pos >= end) {
        const size_t chunk = ws.pos / kChunk;
        if (played(chunk)) {
          ws.played_chunk = chunk;
          return;
        }
        end = std::min(ev.size(), (chunk + 1) * kChunk);
      }
      const sim::TraceEvent& e = ev[ws.pos];
      const OpCost& c = cost[e.pc];
      if (c.barrier) return;
      const bool local = e.kind == sim::TraceKind::local;
      if (((e.kind == sim::TraceKind::global || local) && c.returns) ||
          e.kind == sim::TraceKind::bulk) {
        for (uint32_t k = 0; k < e.sectors(); ++k) {
          const uint64_t s_id = relocate(ws.tr->sec[e.first + k].id, e.pc, rb, local);
          if ((c.l1_cached || local) && l1.access(s_id, true, l1_when(ws))) continue;
          if (local) continue;
          const uint64_t gran = s_id >> 1;
          if (!in_l2(gran, ws.tr->sec[e.first + k].id, e.pc, rb)) fetched += 64;
          l2_seen.set(gran, fetched);
        }
      }
      if (e.kind == sim::TraceKind::bulk) // landed at once: a wait must not hang on it
        slots[size_t(ws.slot)].start_bulk(*ws.tr, e, now);
    }
  };

  dispatch(0);
  for (uint32_t turn = 0;; ++turn) {
    if ((turn & 4095) == 0 && in.cancel && in.cancel->load(std::memory_order_relaxed)) break;
    // The earliest scheduler with a candidate.
    // A scheduler that issued this clock takes no more candidates until it is free again: its
    // waiting warps stay queued rather than being popped and pushed back once a clock each.
    double tmin = 1e300;
    for (int s = 0; s < 4; ++s)
      if (!ready[size_t(s)].empty())
        tmin = std::min(tmin, std::max(ready[size_t(s)].top().t, smsp_free[s]));
    if (tmin >= 1e299) break;
    now = std::max(now, tmin);
    for (int s = 0; s < 4; ++s) {
      auto& q = ready[size_t(s)];
      while (!q.empty() && q.top().t <= now && smsp_free[s] <= now) {
        Item it = q.top();
        q.pop();
        WarpState& ws = warps[it.w];
        if (ws.done || ws.at_bar) continue;
        skip_thinned(ws);
        if (ws.pos >= ws.tr->ev.size()) {
          finish_warp(ws, now);
          continue;
        }
        const sim::TraceEvent& e = ws.tr->ev[ws.pos];
        OpCost c = cost[e.pc];
        const sim::InstInfo& info = L.code[e.pc];
        // An integer op ptxas can put on either pipe goes to the one free sooner (IMAD forms run
        // at the integer rate of the FMA pipe's heavy half).
        if (c.flex && pipe_free[s][int(Pipe::fma)] < pipe_free[s][int(Pipe::alu)]) {
          c.pipe = Pipe::fma;
          c.issue = integer_issue(M, c.sass);
        }
        // When could it issue? The latest of: its own last issue, its scheduler, its operands,
        // its pipe, the memory queue, stores' backlog, outstanding async copies.
        double t = ws.next_issue;
        Stall why = Stall::issue;
        uint32_t why_pc = e.pc; // a dependency's wait is charged to the instruction it waits for
        if (!c.free && smsp_free[s] > t) t = smsp_free[s], why = Stall::issue;
        // Its operands: the events it reads from (perf/schedule.cpp), wherever they are now.
        // (The first operand with the latest time, where that is later than t: what a running
        // maximum over them in order finds.)
        if (!ws.tr->dep_first.empty()) {
          if (ws.dep_pos != ws.pos) {
            bool any = false, earlier = true;
            double most = 0;
            uint32_t at = 0;
            for (uint32_t q = ws.tr->dep_first[ws.pos]; q < ws.tr->dep_first[ws.pos + 1]; ++q) {
              const uint32_t src = ws.tr->deps[q];
              earlier &= src < ws.pos;
              if (!any || ws.done_at[src] > most) most = ws.done_at[src], at = src, any = true;
            }
            ws.dep_t = most, ws.dep_src = at, ws.dep_any = any;
            ws.dep_pos = earlier ? ws.pos : ~size_t(0); // kept only where no time can change
          }
          if (ws.dep_any && ws.dep_t > t) {
            const uint32_t src = ws.dep_src;
            t = ws.dep_t, why = Stall(ws.done_kind[src]), why_pc = ws.tr->ev[src].pc;
          }
        }
        if (!c.free) {
          if (c.pipe == Pipe::mio) {
            if (mio_free - kMioDepth > t) t = mio_free - kMioDepth, why = Stall::mio;
          } else if (pipe_free[s][int(c.pipe)] > t && !c.wgmma) {
            // (A wgmma goes into the tensor cores' queue and the warp goes on: it starts when the
            // pipe is free, below, and only wgmma.wait_group waits for it.)
            t = pipe_free[s][int(c.pipe)], why = Stall::pipe;
          }
        }
        if (c.memory && !c.returns && e.kind != sim::TraceKind::shared &&
            e.kind != sim::TraceKind::none && e.kind != sim::TraceKind::bulk &&
            dram_free - store_backlog > t)
          t = dram_free - store_backlog, why = Stall::store;
        // cp.async.wait_group N: all but the newest N committed groups land (wait_all: every
        // copy, the open group's too).
        size_t cp_waited = 0;
        if (c.async_wait) {
          cp_waited = c.async_all ? ws.cp_groups.size()
                                  : ws.cp_groups.size() -
                                        std::min<size_t>(c.async_keep, ws.cp_groups.size());
          double g = c.async_all ? ws.cp_open : 0;
          for (size_t k = 0; k < cp_waited; ++k) g = std::max(g, ws.cp_groups[k]);
          if (g > t) t = g, why = Stall::dram, why_pc = e.pc;
        }
        if (e.kind == sim::TraceKind::mbar_wait) { // for the bulk copies of its phase
          const Slot::Bulk& b = slots[size_t(ws.slot)].bulk_at(e.first, e.count);
          ws.polling = b.copies < e.bytes && !others_stuck(ws);
          if (ws.polling) // not all started yet: look again a little later, as try_wait does
            t = std::max(t, now + kMbarPoll), why = Stall::dram, why_pc = e.pc;
          else if (b.landed > t)
            t = b.landed, why = Stall::dram, why_pc = e.pc;
        }
        if (c.wgmma_wait && ws.wg_groups.size() > c.wgmma_keep) {
          // wgmma.wait_group N: all but the newest N committed groups complete.
          double g = 0;
          for (size_t k = 0; k + c.wgmma_keep < ws.wg_groups.size(); ++k)
            g = std::max(g, ws.wg_groups[k]);
          if (g > t) t = g, why = Stall::pipe, why_pc = e.pc;
        }
        if (why == Stall::issue || why == Stall::pipe || why == Stall::mio || why == Stall::store)
          why_pc = e.pc;
        if (t > now) {
          q.push({t, it.w});
          continue;
        }
        // Issue at `now`.
        ++events;
        if (debug_left > 0 && it.w == debug_warp) {
          --debug_left;
          std::fprintf(stderr, "replay: t=%10.1f pc=%4u line=%3d %-28s waited %7.1f (%s)\n", now,
                       e.pc, info.line, info.opcode.c_str(), now - ws.next_issue, stall_name(why));
        }
        PcStats& ps = R.pc[e.pc];
        const double wt = ws.weight;
        ps.issued += wt;
        const double waited = now - ws.next_issue;
        if (waited > 0) R.pc[why_pc].stall[int(why)] += waited;
        ps.lanes += wt * __builtin_popcount(e.mask);
        if (!c.free) {
          smsp_free[s] = now + std::max(1.0f, c.sass);
          R.issue_slots += wt * c.sass;
          if (c.pipe != Pipe::mio) {
            pipe_free[s][int(c.pipe)] =
                std::max(now, c.wgmma ? pipe_free[s][int(c.pipe)] : 0.0) + c.issue;
            R.pipe_busy[int(c.pipe)] += wt * c.issue;
          }
        }
        double done = now + c.latency;
        double hold = 0; // the warp issues nothing more until then (a loop it is inside)
        Stall kind = c.pipe == Pipe::tensor ? Stall::pipe : Stall::alu;
        const ReplayBlock& rb = in.blocks[size_t(slots[size_t(ws.slot)].block)];
        if (c.pipe == Pipe::mio) {
          double t0 = std::max(now, mio_free);
          switch (e.kind) {
          case sim::TraceKind::shared: {
            mio_free = t0 + std::max<double>(1, e.count);
            R.mio_busy += wt * std::max<double>(1, e.count);
            R.shared_wavefronts += wt * e.count;
            done = t0 + M.cycles(M.lat_shared_ns) + std::max(0, int(e.count) - 1);
            kind = Stall::shared;
            break;
          }
          case sim::TraceKind::shared_atomic: {
            const bool fp = opflags[e.pc] & kFloatOp;
            if (fp) {
              // A float add on shared memory is a compare-and-swap loop (SASS: LDS, FADD,
              // ATOMS.CAST.SPIN, branch back on failure): on one word one lane's swap succeeds
              // per trip round the loop, whichever warps wait on it, while different words go on
              // together. So a word takes one add per trip: the probe's time per add on one word,
              // its SM rate shared by the words it had on an SM (a block's each).
              // A double's trip holds a DADD where the probe's holds an FADD.
              const bool f64 = opflags[e.pc] & kF64Op;
              const double trip =
                  M.cycles(M.shared_atomic_one_words_sm * M.sm_count / M.shared_atomic_one_gops) +
                  (f64 ? M.latency[int(Pipe::fp64)] - M.latency[int(Pipe::fma)] : 0.0);
              double& word = slots[size_t(ws.slot)].word_at(e.first);
              const double start = std::max(t0, word);
              word = start + std::max<double>(1, e.count) * trip;
              // Each trip is an LDS and an ATOMS through the MIO; the warp leaves the loop when
              // its last lane has swapped.
              const double busy = 2.0 * std::max<double>(1, e.count);
              mio_free = t0 + busy;
              R.mio_busy += wt * busy;
              done = hold = word;
              kind = Stall::atomic;
              break;
            }
            // Integer lanes on one word are served one after another, a clock each (measured);
            // lanes on different words together.
            const double per = M.sm_count * clk / M.shared_atomic_u32_one_gops;
            const double busy = c.aggregated ? std::max(1.0, per) : std::max(1.0, e.count * per);
            mio_free = t0 + busy;
            R.mio_busy += wt * busy;
            done = t0 + M.cycles(M.lat_shared_ns) + busy;
            kind = Stall::atomic;
            break;
          }
          case sim::TraceKind::global:
          case sim::TraceKind::local:
          case sim::TraceKind::global_atomic:
          case sim::TraceKind::bulk: {
            const bool local = e.kind == sim::TraceKind::local;
            const bool atomic = e.kind == sim::TraceKind::global_atomic;
            // A bulk copy's sectors are contiguous and whole, and its last entry is the mbarrier.
            const bool bulk = e.kind == sim::TraceKind::bulk;
            // cp.async returns nothing to a register but reads global memory: a load.
            const bool store = !c.returns && !atomic && info.mem != sim::MemKind::load;
            // Sectors at the block's own addresses; lines are the L1's units of work.
            constexpr int kMaxSec = 2048; // 64 KB: a longer bulk copy counts its first 64 KB
            uint64_t sec[kMaxSec];
            uint32_t mask[kMaxSec];
            const int n = std::min<int>(int(e.sectors()), bulk ? kMaxSec : 256);
            for (int k = 0; k < n; ++k) {
              const sim::TraceSector& ts = ws.tr->sec[e.first + uint32_t(k)];
              sec[k] = atomic ? (relocate(ts.id, e.pc, rb, false) << 2) >> 5
                              : relocate(ts.id, e.pc, rb, local);
              mask[k] = ts.mask;
            }
            int lines = 0;
            bool alone[kMaxSec]; // the only sector of its 128-byte line in this request
            for (int k = 0; bulk && k < n; ++k) {
              alone[k] = false;
              lines += k == 0 || (sec[k] >> 2) != (sec[k - 1] >> 2);
            }
            for (int k = 0; !bulk && k < n; ++k) {
              bool dup = false;
              alone[k] = true;
              for (int j = 0; j < n; ++j) {
                if (j == k || (sec[j] >> 2) != (sec[k] >> 2)) continue;
                alone[k] = false;
                if (j < k) dup = true;
              }
              lines += !dup;
            }
            const double busy = std::max(1, lines);
            mio_free = t0 + busy;
            R.mio_busy += wt * busy;
            const double share = std::max(1.0, rb.busy_sms);
            const double port_svc = 32.0 / M.sm_max_bytes_clk;
            // The L2's per-sector work for this SM's share of the GPU: whole-line reads and writes
            // at the measured bandwidths, lone sectors at the measured sector rates.
            auto l2_cost = [&](int k, bool write) {
              double ns = write ? (mask[k] == 0xffffffffu ? 32.0 / M.l2_write_gbps
                                                          : 1.0 / M.l2_sector_write_gops)
                          : bulk && M.l2_bulk_gbps > 0
                              ? 32.0 / M.l2_bulk_gbps
                              : (alone[k] ? 1.0 / M.l2_sector_read_gops : 32.0 / M.l2_gbps);
              return ns * share * clk;
            };
            // The L2 gives this SM its share of the bandwidth on average, not at every moment: a
            // burst (a k-step's copies, all at once) is served from the share the SM left unused
            // within the last L2 latency (found on the H100, whose L2 reads 13% slower than the
            // H200's and runs puzzle 20's GEMM as fast).
            auto l2_pass = [&](int k, bool write) {
              double p0 = std::max(t0, port_free);
              port_free = p0 + port_svc;
              const double start = std::max(l2_free, p0 - l2_credit);
              const double svc = l2_cost(k, write);
              l2_free = start + svc;
              R.port_busy += wt * port_svc, R.l2_busy += wt * svc, R.l2_bytes += wt * 32;
              return std::max(p0, start);
            };
            // DRAM: a queue of this SM's share of the bandwidth (bytes at the launch's read/write
            // mix), each read also taking at least the loaded latency for the bytes in flight.
            auto dram = [&](double q0, double ns) {
              double d0 = std::max(q0, dram_free);
              dram_free = d0 + ns * share * clk;
              R.dram_busy += wt * ns * share * clk;
              return d0;
            };
            auto retire_dram = [&] {
              while (!dram_inflight.empty() && dram_inflight.top().t <= now) {
                dram_bytes_inflight -= dram_inflight.top().bytes;
                dram_inflight.pop();
              }
            };
            // A write occupies the DRAM's channels as a read does: it counts in the bytes in
            // flight that set the reads' loaded latency until it is written.
            auto write_in_flight = [&](double d0, double bytes) {
              retire_dram();
              const double lat = M.cycles(M.dram_loaded_ns((dram_bytes_inflight + bytes) * share));
              dram_inflight.push(
                  {std::max(d0 + bytes / stream_gbps * share * clk, now + lat), bytes});
              dram_bytes_inflight += bytes;
            };
            double ready = t0 + M.cycles(M.lat_l1_ns);
            kind = Stall::l1;
            if (atomic) {
              // The L2's atomic units: per distinct word, and more for lanes on the same word.
              // Float lanes at the float probe's rate where the profile measured it: on one word
              // the L2 applies an integer add in 0.73 ns and a float one in 1.76 (probes
              // atomic_one_u32 and atomic_one), so the integer one-word-per-warp rate need not
              // hold for floats.
              const double t_addr = 1.0 / M.atomic_spread_gops; // ns, whole GPU
              const bool fp_lanes = M.atomic_warp_f32_gops > 0 && (opflags[e.pc] & kFloatOp);
              const double warp_gops = fp_lanes ? M.atomic_warp_f32_gops : M.atomic_warp_gops;
              const double t_lane = std::max(0.0, (32.0 / warp_gops - t_addr) / 31.0);
              // Float lanes on a sector other warps update too (a block's warps adding into one
              // word, neighbouring blocks into the words beside it) go one after another at the
              // rate probed for that pattern (atomic_row_f32), where the profile measured it.
              const uint64_t me = uint64_t(&ws - warps.data());
              bool contended = false;
              for (int k = 0; k < n; ++k) {
                auto [owner, fresh] = atomic_owner.try_emplace(sec[k], me);
                if (!fresh && owner->second != me) contended = true, owner->second = me;
              }
              const bool row_rate = fp_lanes && contended && M.atomic_row_f32_gops > 0;
              double ns = 0;
              for (int k = 0; k < n; ++k)
                ns += row_rate ? mask[k] / M.atomic_row_f32_gops : t_addr + (mask[k] - 1) * t_lane;
              double a0 = std::max(t0, atom_free);
              atom_free = a0 + ns * share * clk;
              R.atomic_busy += wt * ns * share * clk;
              ready = atom_free + M.cycles(M.lat_atomic_ns);
              kind = Stall::atomic;
              for (int k = 0; k < n; ++k) l2_pass(k, true);
            } else if (store) {
              for (int k = 0; k < n; ++k) {
                const double q0 = l2_pass(k, true);
                if (local) continue; // a thread's own stack stays in the L2
                // Written back to DRAM once per block and sector. A sector the block writes only
                // part of is read first (read-modify-write); alone in its line that is much
                // slower (the measured rate of scattered 4-byte writes).
                if (!slots[size_t(ws.slot)].stored.insert(sec[k]).second) continue;
                const auto& bm = mem.stored[size_t(rb.tmpl)];
                auto it = bm.find(ws.tr->sec[e.first + uint32_t(k)].id);
                const bool whole = it != bm.end() && it->second == 0xffffffffu;
                if (whole) {
                  write_in_flight(dram(q0, 32.0 / stream_gbps), 32);
                  R.dram_write_bytes += wt * 32;
                } else if (alone[k]) {
                  write_in_flight(dram(q0, 32.0 / M.dram_sector_write_gbps), 32);
                  R.dram_write_bytes += wt * 32, R.dram_read_bytes += wt * 32,
                      R.dram_read_paid_bytes += wt * 32;
                } else {
                  write_in_flight(dram(q0, 64.0 / stream_gbps), 64);
                  R.dram_write_bytes += wt * 32, R.dram_read_bytes += wt * 32,
                      R.dram_read_paid_bytes += wt * 32;
                }
              }
            } else {
              for (int k = 0; k < n; ++k) {
                const uint64_t s_id = sec[k];
                if ((c.l1_cached || local) && l1.access(s_id, true, l1_when(ws))) {
                  R.l1_hits += wt;
                  continue;
                }
                R.l1_misses += wt;
                const double q0 = l2_pass(k, false);
                // The L2 has it if this SM or an earlier block brought it in recently enough;
                // else DRAM, 64 bytes at a time.
                const uint64_t gran = s_id >> 1;
                if (local || in_l2(gran, ws.tr->sec[e.first + uint32_t(k)].id, e.pc, rb)) {
                  R.l2_hits += wt;
                  l2_seen.set(gran, fetched);
                  ready = std::max(ready, q0 + M.cycles(M.lat_l2_ns));
                  if (kind != Stall::dram) kind = Stall::l2;
                  continue;
                }
                // The other half of the 128-byte line in the same request, or already in the L2:
                // a streamed line; else a lone one (the measured rate of scattered sectors).
                bool paired = l2_seen.contains(gran ^ 1);
                for (int j = 0; j < n && !paired; ++j) paired = (sec[j] >> 1) == (gran ^ 1);
                const double part = 1.0 / round_sharers(e.pc, rb);
                const double d0 =
                    dram(q0, part * (paired ? 64.0 / stream_gbps : 32.0 / M.dram_sector_read_gbps));
                R.dram_read_bytes += wt * 64; // the launch's bytes: whoever fetches them
                R.dram_read_paid_bytes += wt * 64 * part;
                R.dram_granules += wt;
                fetched += 64;
                l2_seen.set(gran, fetched);
                // Loaded latency: this SM's DRAM reads in flight, as the whole GPU's. One lane
                // walking memory in order gets no fetch ahead: its next granule is a DRAM round
                // trip like any other (probe seq_read: 618 ns per 64 bytes on the H200 in 16-byte
                // steps, a DRAM miss, an L2 hit on the granule's other sector and two L1 hits).
                retire_dram();
                const double lat =
                    M.cycles(M.dram_loaded_ns((dram_bytes_inflight + 64 * part) * share));
                const double done_at =
                    std::max(d0 + part * 64.0 / stream_gbps * share * clk, now + lat);
                dram_inflight.push({done_at, 64 * part});
                dram_bytes_inflight += 64 * part;
                ready = std::max(ready, done_at);
                kind = Stall::dram;
              }
            }
            if (c.returns) {
              done = std::max(ready, t0 + busy);
              inflight_integral += (done - now) * 32.0 * n;
            } else {
              done = now;
            }
            if (bulk)
              slots[size_t(ws.slot)].start_bulk(*ws.tr, e, ready);
            else if (opflags[e.pc] & kCpAsync)
              ws.cp_open = std::max(ws.cp_open, ready);
            break;
          }
          default: // shuffles, votes and other register work of the MIO
            mio_free = t0 + 1;
            R.mio_busy += wt;
            done = t0 + M.shfl_latency;
            kind = Stall::alu;
            break;
          }
        }
        if (c.wgmma) {
          // Asynchronous: the accumulators are ready, and its group complete, once the tensor
          // pipe has worked through it.
          done = pipe_free[s][int(c.pipe)] + c.latency; // behind the pipe's earlier work
          ws.wg_open = std::max(ws.wg_open, done);
        } else if (c.wgmma_commit) {
          ws.wg_groups.push_back(std::max(ws.wg_open, now));
          ws.wg_open = 0;
        } else if (c.async_commit) {
          ws.cp_groups.push_back(ws.cp_open); // an empty group has nothing to wait for
          ws.cp_open = 0;
        } else if (c.async_wait) {
          ws.cp_groups.erase(ws.cp_groups.begin(),
                             ws.cp_groups.begin() + std::ptrdiff_t(cp_waited));
          if (c.async_all) ws.cp_open = 0;
        } else if (c.wgmma_wait && ws.wg_groups.size() > c.wgmma_keep) {
          ws.wg_groups.erase(ws.wg_groups.begin(),
                             ws.wg_groups.end() - std::ptrdiff_t(c.wgmma_keep));
        }
        ws.done_at[ws.pos] = done;
        ws.done_kind[ws.pos] = uint8_t(kind);
        ws.next_issue = std::max(now + (c.free ? 0 : 1), hold);
        if (hold > now + 1) R.pc[e.pc].stall[int(Stall::atomic)] += hold - now - 1;
        ++ws.pos;
        // A barrier reached by some of the warp's lanes while others still have work before it
        // (code that diverged around __syncthreads(): barriers count threads, not warps): those
        // lanes wait there and the warp goes on with the others.
        // (A barrier all of the warp's lanes reach is whole: no later event holds another lane.)
        bool whole = c.barrier;
        const bool all_lanes = ws.lanes && (e.mask & ws.lanes) == ws.lanes;
        for (size_t j = ws.pos; whole && !all_lanes && j < ws.tr->ev.size(); ++j) {
          const sim::TraceEvent& later = ws.tr->ev[j];
          if (cost[later.pc].barrier) break;
          whole = (later.mask & ~e.mask) == 0;
        }
        if (c.barrier && whole) {
          Slot& sl = slots[size_t(ws.slot)];
          ws.at_bar = true;
          ++sl.arrived;
          if (sl.arrived >= sl.live) release_barrier(sl, now);
          if (ws.at_bar) continue; // waits
        }
        if (ws.pos >= ws.tr->ev.size()) {
          finish_warp(ws, now + 1);
          continue;
        }
        q.push({ws.next_issue, it.w});
        // Its next event's data, for when it comes up again (each warp's arrays are far apart).
        __builtin_prefetch(&ws.tr->ev[ws.pos]);
        if (!ws.tr->dep_first.empty()) {
          __builtin_prefetch(&ws.tr->dep_first[ws.pos + 1]);
          __builtin_prefetch(&ws.tr->deps[ws.tr->dep_first[ws.pos]]);
        }
        __builtin_prefetch(&ws.done_at[ws.pos]);
        if (!c.free) break; // one issue per scheduler per clock
      }
    }
    if (events > in.budget_events) break;
  }

  // The SM's time: its last block retired, and the stores it left DRAM to write.
  double end =
      retire_times.empty() ? now : *std::max_element(retire_times.begin(), retire_times.end());
  end = std::max(end, dram_free - store_backlog);
  // Reductions are posted (the warp goes on), but the launch is over only when the L2 has applied
  // every atomic this SM sent.
  end = std::max(end, atom_free);
  R.measured_cycles = end;
  R.blocks_replayed = retire_times.size();
  R.bytes_in_flight = end > 0 ? inflight_integral / end : 0;
  // Extrapolate from the blocks replayed to all the SM runs: each slot takes the remaining blocks
  // as it frees, each as long as a block took in the full rounds replayed (every slot busy). (A
  // steady rate read off the last retirements counts a part-filled last round as a whole one:
  // 10 blocks replayed of 16 on 4 slots ran 2.5 rounds, and the 6 left were put 1.5 rounds after
  // the end, not 1.)
  const double total = double(in.blocks_on_sm);
  const double done_n = double(retire_times.size());
  double cycles = end;
  if (done_n > 0 && done_n < total) {
    const size_t S = size_t(std::max(1, slots_n)), d = retire_times.size();
    const size_t full = d >= S ? d / S * S : d; // the blocks of full rounds, in retiring order
    double dur = 0;
    for (size_t i = 0; i < full; ++i) dur += durations[i];
    dur = dur / double(full) * in.rest_work;
    // When each slot takes its next block: the last S retirements (0 for a slot never used),
    // earliest first.
    std::sort(retire_times.begin(), retire_times.end());
    std::vector<double> free_at(S, 0.0);
    for (size_t i = 0; i < std::min(S, d); ++i) free_at[i] = retire_times[d - 1 - i];
    std::sort(free_at.begin(), free_at.end());
    const double left = total - done_n;
    const double rounds = std::floor(left / double(S));
    const size_t extra = size_t(left - rounds * double(S));
    for (size_t i = 0; i < S; ++i)
      cycles = std::max(cycles, free_at[i] + (rounds + (i < extra ? 1 : 0)) * dur);
  }
  // The counts (issue slots, units, bytes) hold the retired blocks and what the blocks still
  // running when the budget ran out had done: their share of their trace's instructions. (Scaling
  // by the retired blocks alone counted the running ones' work twice: puzzle 24 with half its
  // blocks exiting at once, 21 of 32 blocks retired and 3 part-run, read 2.42 GB for 2.16.)
  double running = 0;
  for (const Slot& sl : slots) {
    if (sl.block < 0) continue;
    const sim::BlockTrace& T = L.blocks[size_t(in.blocks[size_t(sl.block)].tmpl)];
    double did = 0, all = 0;
    for (uint32_t k = 0; k < sl.nwarps && k < T.warps.size(); ++k) {
      if (T.warps[k].ev.empty()) continue;
      did += double(warps[sl.first_warp + k].pos);
      all += double(T.warps[k].ev.size());
    }
    if (all > 0) running += did / all;
  }
  const double replayed = std::min(total, double(in.blocks.size()));
  R.scale = done_n > 0 ? (replayed + (total - replayed) * in.rest_work) / (done_n + running) : 1;
  // What the played events stand for: all the events the replay went through over those it
  // played. That is `thin` only on average: a warp whose trace is a few runs of chunks long plays
  // one or two chunks more or less than its share, and every warp draws the same chunks, so
  // scaling by `thin` itself moved puzzle 34's reference by 1.5x from one thinning to the next.
  const double thinned = thin > 1 && events > 0 ? (double(events) + skipped) / double(events) : 1;
  R.cycles = cycles * thinned * std::max(1.0, in.cut);
  // Per-block figures to the whole SM.
  const double k = R.scale * thinned;
  // The extrapolated time is no less than what the SM's own busiest unit (its share of the L2's
  // atomic units included) needs for all its blocks (a steady rate read from a few retirements can
  // run ahead of it).
  {
    double floor = std::max({R.issue_slots / 4, R.mio_busy, R.atomic_busy});
    for (double b : R.pipe_busy) floor = std::max(floor, b / 4);
    R.cycles = std::max(R.cycles, floor * k);
  }
  R.issue_slots *= k;
  for (double& b : R.pipe_busy) b *= k;
  R.mio_busy *= k, R.port_busy *= k, R.l2_busy *= k, R.dram_busy *= k, R.atomic_busy *= k;
  R.shared_wavefronts *= k, R.l1_hits *= k, R.l1_misses *= k, R.l2_hits *= k;
  R.dram_granules *= k, R.dram_read_bytes *= k, R.dram_write_bytes *= k, R.l2_bytes *= k;
  R.dram_read_paid_bytes *= k;
  R.barrier_wait *= k, R.warp_cycles *= k, R.dispatch_wait *= R.scale;
  for (auto& p : R.pc) {
    p.issued *= k;
    p.lanes *= k;
    for (double& s : p.stall) s *= k;
  }
  return R;
}

} // namespace wb::perf
