#include "predict.hpp"

#include "core/backend.hpp"
#include "core/check.hpp"
#include "core/compile.hpp"
#include "core/roofline.hpp"
#include "core/store.hpp"
#include "explain.hpp"
#include "replay.hpp"
#include "schedule.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <future>
#include <mutex>
#include <numeric>

namespace wb::perf {

namespace {

using Clock = std::chrono::steady_clock;

// WARPBOOK_PREDICT_TRACE=1: each phase of a prediction and its time, on stderr.
template <class... A> void trace(fmt::format_string<A...> f, A&&... a) {
  static const bool on = [] {
    const char* e = std::getenv("WARPBOOK_PREDICT_TRACE");
    return e && *e && *e != '0';
  }();
  if (on) fmt::print(stderr, "predict: {}\n", fmt::format(f, std::forward<A>(a)...));
}
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The simulator the model runs its samples on (kept: its worker threads and decode cache).
sim::Simulator& simulator() {
  static sim::Simulator s([] {
    sim::SimOptions o;
    o.track_writers = false;
    // The sampled runs can wait: while they run, ptxas is assembling the file (the replay needs
    // its figures) and the check's cases are running (the learner reads those first).
    o.nice = kPredictionNice;
    return o;
  }());
  return s;
}

struct Occupancy {
  int resident = 1;
  std::string limited_by = "blocks";
  // Warps that exit free their warp slots and registers at once; a block's slot and its shared
  // memory are held until its last warp ends (measured: results/h200-exited-warps.md).
  int block_slots = 1; // blocks per SM by the block limit and shared memory alone
  int warp_slots = 64; // warps per SM by the warp limit and registers alone
  int registers = 32, shared_bytes = 0;
  int spill_stores = 0, spill_loads = 0;
  std::string wgmma_serialized;
  double l1_bytes = 0;
  int warps = 1;
};

Occupancy occupancy(const Machine& m, const Launch& la, const std::vector<KernelResources>& res) {
  Occupancy o;
  for (auto& r : res)
    if (r.name == la.kernel) {
      if (r.registers > 0) o.registers = r.registers;
      if (r.shared_bytes > 0) o.shared_bytes = r.shared_bytes;
      o.spill_stores = std::max(0, r.spill_stores), o.spill_loads = std::max(0, r.spill_loads);
      o.wgmma_serialized = r.wgmma_serialized;
    }
  o.shared_bytes += int(la.shared_bytes);
  const int threads = int(la.block.count());
  o.warps = (threads + 31) / 32;
  struct Limit {
    int blocks;
    const char* why;
  };
  const int regs_warp = ((o.registers * 32 + m.reg_unit - 1) / m.reg_unit) * m.reg_unit;
  const int warps_by_regs = regs_warp > 0 ? m.regs_sm / regs_warp / m.warp_gran * m.warp_gran : 64;
  const int smem_block =
      ((o.shared_bytes + m.smem_reserved + m.smem_unit - 1) / m.smem_unit) * m.smem_unit;
  Limit lims[] = {
      {m.max_blocks_sm, "blocks per SM"},
      {m.max_threads_sm / std::max(1, o.warps * 32), "threads per SM"},
      {warps_by_regs / std::max(1, o.warps), "registers"},
      {smem_block > 0 ? m.smem_sm / smem_block : m.max_blocks_sm, "shared memory"},
  };
  o.block_slots = std::max(1, std::min(lims[0].blocks, lims[3].blocks));
  o.warp_slots = std::min(m.max_warps_sm, warps_by_regs);
  o.resident = 1 << 30;
  for (auto& l : lims)
    if (l.blocks < o.resident) o.resident = l.blocks, o.limited_by = l.why;
  o.resident = std::max(1, o.resident);
  // The shared-memory carveout the driver picks: the smallest that holds the resident blocks.
  const double need_kb = double(o.resident) * (o.shared_bytes > 0 ? smem_block : 0) / 1024.0;
  int carve = m.carveouts_kb.empty() ? 0 : m.carveouts_kb.back();
  for (int c : m.carveouts_kb)
    if (c >= need_kb) {
      carve = c;
      break;
    }
  o.l1_bytes = std::max(16.0 * 1024, double(m.l1_shared_bytes) - carve * 1024.0);
  return o;
}

// Which blocks of a launch the simulator runs: an interior anchor and its neighbours along each
// grid dimension (how addresses move from block to block), the first and the last block (edges,
// partial tiles), and two more spread over the grid (work that varies along it). `prefix`
// instead runs the first blocks in order, for kernels whose blocks wait on earlier ones.
struct SamplePlan {
  std::vector<uint64_t> blocks;
  int anchor = 0;
  int neighbour[3] = {-1, -1, -1};
  size_t replay_templates = 0; // the first samples, the ones that play replayed blocks
};

SamplePlan plan_sample(const Launch& la, bool prefix, int resident) {
  SamplePlan sp;
  const Dim3 g = la.grid;
  const uint64_t n = g.count();
  auto lin = [&](uint64_t x, uint64_t y, uint64_t z) {
    return x + uint64_t(g.x) * (y + uint64_t(g.y) * z);
  };
  auto add = [&](uint64_t b) -> int {
    for (size_t i = 0; i < sp.blocks.size(); ++i)
      if (sp.blocks[i] == b) return int(i);
    sp.blocks.push_back(b);
    return int(sp.blocks.size() - 1);
  };
  if (prefix) {
    const uint64_t k = std::min<uint64_t>(n, uint64_t(std::max(8, 2 * resident)));
    for (uint64_t b = 0; b < k; ++b) add(b);
    sp.anchor = int(k / 2);
    if (uint64_t(sp.anchor) + 1 < k) sp.neighbour[0] = sp.anchor + 1;
    sp.replay_templates = sp.blocks.size();
    return sp;
  }
  auto mid = [](uint32_t e) -> uint64_t { return e >= 2 ? std::min<uint64_t>(e / 2, e - 2) : 0; };
  const uint64_t ax = mid(g.x), ay = mid(g.y), az = mid(g.z);
  sp.anchor = add(lin(ax, ay, az));
  if (g.x > 1) sp.neighbour[0] = add(lin(ax + 1, ay, az));
  if (g.y > 1) sp.neighbour[1] = add(lin(ax, ay + 1, az));
  if (g.z > 1) sp.neighbour[2] = add(lin(ax, ay, az + 1));
  add(0);
  add(n - 1);
  if (n > 8) {
    add(n / 4);
    add(3 * n / 4);
  }
  sp.replay_templates = sp.blocks.size();
  // A grid of rows of blocks (y or z > 1) whose work may change along x (a causal mask's query
  // tiles, a row of varied lengths): the quarter points of the anchor's row, so that each replayed
  // block has a sample near its own x. (n / 4 and 3n / 4 above land on x = 0 whenever the rows
  // divide the grid evenly.)
  if (g.x >= 4 && (g.y > 1 || g.z > 1)) {
    add(lin(g.x / 4, ay, az));
    add(lin(3 * uint64_t(g.x) / 4, ay, az));
    add(lin(g.x - 1, ay, az));
  }
  return sp;
}

// The sectors a launch stores to, per store instruction: from the lowest to the highest its
// sampled blocks wrote, where the whole grid's stores fill that range (a block's sectors times the
// blocks cover it); sparse or data-dependent scatters say nothing of the sectors between.
std::vector<L2Range> stored_ranges(const sim::SampledLaunch& sl) {
  struct Span {
    uint64_t lo = ~0ull, hi = 0;
    double sectors = 0; // summed over the sampled blocks
  };
  std::unordered_map<uint32_t, Span> by_pc;
  for (const sim::BlockTrace& b : sl.blocks) {
    std::unordered_map<uint32_t, std::unordered_set<uint64_t>> mine;
    for (const auto& w : b.warps)
      for (const auto& e : w.ev)
        if (e.kind == sim::TraceKind::global && sl.code[e.pc].mem == sim::MemKind::store)
          for (uint32_t k = 0; k < e.count; ++k) mine[e.pc].insert(w.sec[e.first + k].id);
    for (auto& [pc, secs] : mine) {
      Span& sp = by_pc[pc];
      for (uint64_t id : secs) sp.lo = std::min(sp.lo, id), sp.hi = std::max(sp.hi, id);
      sp.sectors += double(secs.size());
    }
  }
  std::vector<L2Range> out;
  const double blocks = double(sl.launch.grid.count());
  for (auto& [pc, sp] : by_pc) {
    if (sp.lo > sp.hi || sl.blocks.empty()) continue;
    const double covered = sp.sectors / double(sl.blocks.size()) * blocks;
    if (covered >= double(sp.hi - sp.lo + 1)) out.push_back({sp.lo, sp.hi, 0});
  }
  return out;
}

uint64_t warp_events(const sim::BlockTrace& b) {
  uint64_t e = 0;
  for (auto& w : b.warps) e += w.ev.size() + w.dropped;
  return e;
}

// The most instructions any one warp of the block ran.
uint64_t most_warp_events(const sim::BlockTrace& b) {
  uint64_t e = 0;
  for (auto& w : b.warps) e = std::max<uint64_t>(e, w.ev.size() + w.dropped);
  return e;
}

// A block that exits at once: its warps ran a few setup instructions (a causal tile with one step
// of work runs thousands), and a block of the same launch ran far more. (The census stops a
// working block at kCensusStop instructions a warp.)
constexpr uint64_t kExitEvents = 256, kCensusStop = 512;
constexpr size_t kCensusBlocks = 256;
// A grid that runs in one round (every block resident at once, as a persistent kernel's) shares
// data among its blocks however its tile scheduler decides, which the blocks' coordinates need not
// say. Where they do not, every block runs its first kAddrCensusStop instructions a warp (a
// producer's first TMA copies, a loop's first loads), and the blocks that read each load's
// sectors are counted.
constexpr size_t kAddrCensusStop = 256, kAddrCensusBlocks = 1024;
// A launch that later launches read from (a permute's row lists, a split's partials) runs whole in
// the sampled run when its blocks together run at most this many warp instructions: a sample of
// it leaves the rest of its output unwritten, and the next kernel's sampled blocks would see
// empty lists where the GPU's see full ones (puzzle 34's grouped GEMM found half its A rows
// missing and its L2 traffic 1.6x low).
constexpr double kWholeLaunchEvents = 2e6;
// The probe before the bounded run stops each warp at this share of the cap (see predict).
constexpr size_t kProbeShare = 256;
// The run that sorts a plan's earlier launches into cheap and dear stops each warp by this many
// instructions at the latest: a cheap launch's blocks end well before.
constexpr size_t kSortStop = 512;

// Up to `k` distinct blocks of a grid of n, spread without a period: i times a step near n / phi
// that shares no factor with n. (Every n/k-th block would see one x only on a grid of rows whose
// length divides n/k, and a pattern along x, every other chunk say, would go unseen.)
std::vector<uint64_t> census_blocks(uint64_t n, size_t k) {
  std::vector<uint64_t> v;
  if (n <= k) {
    for (uint64_t b = 0; b < n; ++b) v.push_back(b);
    return v;
  }
  uint64_t step = std::max<uint64_t>(1, uint64_t(double(n) * 0.6180339887498949));
  while (std::gcd(step, n) != 1) ++step;
  for (size_t i = 0; i < k; ++i) v.push_back((uint64_t(i) * step) % n);
  return v;
}

Dim3 block_at(const Dim3& g, uint64_t linear) {
  return Dim3{uint32_t(linear % g.x), uint32_t((linear / g.x) % g.y),
              uint32_t(linear / (uint64_t(g.x) * g.y))};
}

} // namespace

std::string arch_for(const Machine& m) {
  return m.cc == 90 ? std::string("sm_90a") : fmt::format("sm_{}", m.cc); // wgmma needs 90a
}

Machine machine_for_check(const DeviceInfo& device, const std::string& gpu,
                          const std::string& data_dir) {
  if (device.backend == "cuda") {
    const GpuProfile* prof = profile_for_device(device);
    std::vector<MeasuredCeiling> measured;
    try {
      auto store = Store::open(Store::default_path(data_dir));
      measured = store->ceilings(device.uuid, device.driver);
    } catch (const std::exception&) {
    }
    Machine m = machine_for(prof ? *prof : *find_profile("h200"), measured);
    if (!prof) { // a GPU the table does not know: its own counts, the H200's figures otherwise
      m.name = device.name;
      m.key = "";
      m.sm_count = std::max(1, device.sm_count);
      if (device.clock_khz > 0) m.clock_ghz = device.clock_khz / 1e6;
      m.cc = device.cc_major * 10 + device.cc_minor;
    }
    return m;
  }
  const GpuProfile* prof = find_profile(gpu.empty() ? "h200" : gpu);
  return machine_for(prof ? *prof : *find_profile("h200"));
}

PerfReport predicted_perf(const Puzzle& p, const Prediction& pred, const Machine& m) {
  PerfReport r;
  r.predicted = true;
  if (p.perf) r.sizes = p.perf->sizes;
  if (!pred.ok) return r;
  r.timing.ok = true;
  r.timing.method = "predicted";
  r.timing.median_us = r.timing.min_us = r.timing.max_us = r.timing.p10_us = r.timing.p90_us =
      pred.us;
  const GpuProfile* prof = find_profile(m.key);
  Ceilings c = prof ? datasheet_ceilings(*prof, p.cost_precision) : Ceilings{};
  c.dram_gbps = std::max({m.dram_read_gbps, m.dram_copy_gbps, m.dram_triad_gbps});
  c.source = fmt::format("predicted for the {} (DRAM: its best measured stream; compute: the "
                         "datasheet)",
                         m.name);
  score_perf(r, p, c);
  return r;
}

Prediction predict(const Puzzle& puzzle, const std::string& source, const std::string& file,
                   const std::map<std::string, int64_t>& defines, const Machine& m,
                   const PredictOptions& opt) {
  const auto t_start = Clock::now();
  Prediction P;
  P.gpu = m.key;
  P.gpu_name = m.name;
  P.sources = m.source;
  auto fail = [&](std::string why) {
    P.ok = false;
    P.error = std::move(why);
    P.model_ms = ms_since(t_start);
    return P;
  };
  if (!puzzle.perf) return fail("the puzzle has no [perf] size to predict");

  // Compiled for the machine's architecture: ptxas says registers and shared memory.
  CompileOptions co;
  co.arch = arch_for(m);
  co.defines = defines;
  co.ptxas_report = true;
  // NVRTC's front end makes the PTX, which is all the sampled runs need; ptxas (registers, shared
  // memory, spills: the occupancy the replay plays) assembles it on a thread of its own meanwhile.
  // The check compiles the same file with the same options at the same time, and both compiles
  // are one (compile.cpp shares a compile in flight).
  Program prog = compile_ptx(source, file, co);
  if (cancel_requested(opt.cancel)) return fail("cancelled");
  if (!prog.ok) return fail("the file does not compile for " + co.arch);
  trace("compile, front end: {:.0f} ms", ms_since(t_start));
  // (The task owns its copy of the program; a prediction that ends before it needs the figures
  // waits for ptxas in the future's destructor, as std::async's futures do.)
  std::future<Program> assembling;
  if (prog.ptxas_pending)
    assembling = std::async(std::launch::async, [whole = prog, co]() mutable {
      assemble(whole, co);
      return whole;
    });

  Env env = puzzle.env(*puzzle.perf, defines);
  LazyCase lc;
  try {
    lc = prepare_lazy_case(puzzle, *puzzle.perf, env, opt.seed, 0);
  } catch (const std::exception& e) {
    return fail(std::string("the perf size cannot be laid out: ") + e.what());
  }
  const size_t nl = lc.launches.size();
  // A sample of blocks cannot pass a grid barrier that waits for all of them.
  for (const Launch& l : lc.launches)
    if (l.cooperative)
      return fail(l.kernel + " is a cooperative launch (its blocks wait for each other at grid "
                             "barriers), which the performance model does not predict yet");
  // The occupancy needs ptxas's figures: it is worked out once they are in (the sampled runs
  // need only each block's warps, and the first blocks in order only how many blocks an SM holds).
  // False when ptxas refused the PTX.
  std::vector<Occupancy> occ(nl);
  bool have_occupancy = false;
  auto occupancy_known = [&]() {
    if (assembling.valid()) {
      const auto t_wait = Clock::now();
      Program whole = assembling.get();
      prog.resources = std::move(whole.resources);
      prog.ok = whole.ok;
      trace("ptxas, waited for: {:.0f} ms", ms_since(t_wait));
    }
    if (prog.ok && !have_occupancy) {
      for (size_t i = 0; i < nl; ++i) occ[i] = occupancy(m, lc.launches[i], prog.resources);
      have_occupancy = true;
    }
    return prog.ok;
  };

  // The sampled run: spread blocks first; if that faults (blocks that wait on blocks which did not
  // run, data that makes no sense outside the whole grid), the first blocks in order.
  const auto t_sim = Clock::now();
  RunPlan rp; // the perf size's launches, for the sampled runs
  rp.program = &prog;
  rp.buffers = &lc.buffers;
  rp.transfers = lc.transfers;
  rp.launches = lc.launches;
  rp.timeout_s = opt.sim_timeout_s;
  rp.instruction_budget = 60'000'000;
  rp.seed = opt.seed;
  rp.cancel = opt.cancel;
  sim::SampledRun run;
  std::vector<SamplePlan> plans(nl);
  bool prefix = false, extrapolated = false;
  for (int attempt = 0; attempt < 2; ++attempt) {
    prefix = attempt == 1;
    std::vector<std::vector<uint64_t>> blocks(nl);
    size_t total = 0, max_warps = 1;
    for (size_t i = 0; i < nl; ++i) {
      if (prefix && !occupancy_known()) return fail("ptxas refused the file for " + co.arch);
      plans[i] = plan_sample(lc.launches[i], prefix, prefix ? occ[i].resident : 1);
      blocks[i] = plans[i].blocks;
      // The trace cap per warp counts the replay templates only: the extra samples weigh the
      // extrapolation by their instruction counts, which the cap does not cut (dropped events are
      // counted), and must not shorten the traces the replay plays.
      total += std::min(blocks[i].size(), std::max<size_t>(1, plans[i].replay_templates));
      // (A block's warps need no ptxas figures.)
      max_warps = std::max<size_t>(max_warps, occupancy(m, lc.launches[i], {}).warps);
    }
    const size_t cap = std::max<size_t>(20000, 8'000'000 / std::max<size_t>(1, total * max_warps));
    auto any_stopped = [](const sim::SampledRun& r) {
      for (auto& sl : r.launches)
        for (auto& b : sl.blocks)
          if (b.stopped) return true;
      return false;
    };
    const size_t probe_stop = std::max<size_t>(1, cap / kProbeShare);
    Clock::time_point t_run;

    // First a bounded run: a block stops once one of its warps has run `cap` instructions, its
    // trace complete up to there, and the simulator counts what each warp has left from the loops
    // it is inside (their counters and bounds). Blocks that all end within it are the whole run.
    // Blocks that would end within the instruction budget run again to their end (the result is
    // then the same as an unbounded run); longer ones (an attention block of hundreds of millions
    // of instructions) keep their stopped traces, and the replay extrapolates the rest at the rate
    // of what ran.
    // Before it, a probe with each warp stopped at a small share of the
    // cap. Blocks that all end within it are the bounded run's result. Where the probe shows that
    // the bounded run would stop too (a warp whose loops' trip counts, or loops with no counter
    // to read, take it past the cap) and the whole is well within the budget, the run to the end
    // that the bounded run would be followed by comes at once. Otherwise the bounded run decides,
    // as without the probe; either way the result is the one the bounded run leads to.
    auto tally = [](const sim::SampledRun& r, double& ran, double& left) {
      ran = left = 0;
      for (auto& sl : r.launches)
        for (auto& b : sl.blocks)
          for (auto& w : b.warps)
            ran += double(w.ev.size() + w.dropped), left += double(w.extrapolated);
    };
    bool settled = false, full_timed_out = false;
    double ran = 0, left = 0;
    // In a plan of several launches, a block stopped early leaves the later launches reading what
    // it never wrote (puzzle 34's row lists): a warp's count of what it has left stands only where
    // every block of the launches before its own ran to its end in the probe.
    t_run = Clock::now();
    sim::SampledRun probe = simulator().run_sampled(rp, blocks, cap, probe_stop);
    if (!probe.fault) {
      tally(probe, ran, left);
      bool past_cap = false, earlier_stopped = false, lower_bound = false;
      for (auto& sl : probe.launches) {
        if (!earlier_stopped)
          for (auto& b : sl.blocks)
            for (auto& w : b.warps) {
              past_cap |= b.stopped && (w.loops_uncounted > 0 ||
                                        w.ev.size() + w.dropped + w.extrapolated >= cap);
              lower_bound |= b.stopped && w.extrapolated_partial;
            }
        for (auto& b : sl.blocks) earlier_stopped |= b.stopped;
      }
      trace("probe, stopped at {}: {:.0f} ms; ran {:.3g}, left {:.3g}{}, past the cap {}",
            probe_stop, ms_since(t_run), ran, left, lower_bound ? " at least" : "", past_cap);
      // A count that is only a lower bound (a second pass not yet begun) may be far short: the
      // bounded run, which sees further, decides then (the attention references' count was 15x
      // short, and their run to the end used up the budget before failing).
      if (!any_stopped(probe)) {
        run = std::move(probe);
        settled = true;
      } else if (past_cap && !lower_bound && ran + left <= 0.5 * double(rp.instruction_budget)) {
        t_run = Clock::now();
        sim::SampledRun full = simulator().run_sampled(rp, blocks, cap);
        trace("full run: {:.0f} ms", ms_since(t_run));
        if (!full.fault) {
          run = std::move(full);
          settled = true;
        } else if (full.fault.kind == FaultKind::timeout) {
          full_timed_out = true; // (on a loaded machine) not tried a second time below
        }
      }
    }
    // Launches before the last whose whole grid is cheap run whole (see below). A short run of
    // those launches' samples first says which they are, so that the bounded run runs them whole
    // at once instead of running the last launch's samples twice (puzzle 34's GEMM). Its warps stop
    // at kSortStop instructions: a launch that ends within it is measured exactly, one whose
    // samples already ran more than a cheap launch's share is dear. Anything else (a launch after
    // a dear one but the last, which reads what the stopped blocks never wrote; a stop at the cap)
    // leaves the decision to the bounded run of the samples, as does a bounded run with the cheap
    // launches whole that stops. Where nothing stops, the launches before the last see the same
    // bytes in this run as in the bounded run, so the choice is the bounded run's own.
    bool whole_done = false;
    if (!settled && nl > 1) {
      std::vector<std::vector<uint64_t>> pre(blocks.begin(), blocks.end() - 1);
      std::vector<size_t> stops(nl - 1);
      for (size_t i = 0; i + 1 < nl; ++i)
        // A launch sampled whole (a single block that counts) runs as far as in the bounded run.
        stops[i] = blocks[i].size() >= lc.launches[i].grid.count()
                       ? cap
                       : std::min(cap, std::max(kSortStop, probe_stop));
      t_run = Clock::now();
      const sim::SampledRun sort = simulator().run_sampled(rp, pre, cap, 0, stops);
      bool known = !sort.fault && sort.launches.size() + 1 == nl;
      std::vector<char> cheap(nl - 1, 0);
      for (size_t i = 0; known && i + 1 < nl; ++i) {
        const auto& sb = sort.launches[i].blocks;
        const uint64_t n_grid = lc.launches[i].grid.count();
        bool st = false;
        double ev = 0; // at least the whole samples' events, where some stopped
        for (auto& b : sb) st |= b.stopped, ev += double(warp_events(b));
        const bool dear =
            !sb.empty() && ev / double(sb.size()) * double(n_grid) > kWholeLaunchEvents;
        if (st) { // what comes after it is known only for the last launch, which never runs whole
          known = dear && stops[i] < cap && i + 2 == nl;
          break;
        }
        if (sb.empty() || sb.size() >= n_grid) continue;
        cheap[i] = !dear;
      }
      trace("which launches run whole: {:.0f} ms; known {}", ms_since(t_run), known);
      if (known && std::find(cheap.begin(), cheap.end(), 1) != cheap.end()) {
        std::vector<std::vector<uint64_t>> ext = blocks;
        for (size_t i = 0; i + 1 < nl; ++i) {
          if (!cheap[i]) continue;
          const uint64_t n_grid = lc.launches[i].grid.count();
          std::vector<char> in(n_grid, 0);
          for (uint64_t b : ext[i]) in[b] = 1;
          for (uint64_t b = 0; b < n_grid; ++b)
            if (!in[b]) ext[i].push_back(b);
        }
        t_run = Clock::now();
        sim::SampledRun r = simulator().run_sampled(rp, ext, cap, cap);
        trace("bounded run, cheap launches whole: {:.0f} ms", ms_since(t_run));
        // Where it stops, the bounded run of the samples alone decides, as below.
        if (!r.fault && !any_stopped(r)) {
          run = std::move(r);
          blocks = std::move(ext);
          settled = whole_done = true;
        }
      }
    }
    bool stopped = false;
    if (!settled) {
      t_run = Clock::now();
      run = simulator().run_sampled(rp, blocks, cap, cap);
      trace("bounded run: {} blocks, cap {}: {:.0f} ms", total, cap, ms_since(t_run));
      if (run.fault) continue;
      tally(run, ran, left);
      stopped = any_stopped(run);
      trace("  ran {:.3g}, left {:.3g}, stopped {}", ran, left, stopped);
      if (stopped && !full_timed_out && ran + left <= double(rp.instruction_budget)) {
        t_run = Clock::now();
        sim::SampledRun full = simulator().run_sampled(rp, blocks, cap);
        trace("full run: {:.0f} ms", ms_since(t_run));
        if (!full.fault || full.fault.kind != FaultKind::timeout) run = std::move(full);
        if (run.fault) continue;
        stopped = any_stopped(run);
      }
    }
    if (stopped) {
      extrapolated = true;
      break;
    }
    // Every launch but the last whose whole grid is cheap: again, whole, its samples first (they
    // stay the replay's templates and anchor).
    bool whole = false;
    for (size_t i = 0; !whole_done && i + 1 < nl && i < run.launches.size(); ++i) {
      const auto& sb = run.launches[i].blocks;
      const uint64_t n_grid = lc.launches[i].grid.count();
      if (sb.empty() || sb.size() >= n_grid) continue;
      double ev = 0;
      for (auto& b : sb) ev += double(warp_events(b));
      if (ev / double(sb.size()) * double(n_grid) > kWholeLaunchEvents) continue;
      std::vector<char> in(n_grid, 0);
      for (uint64_t b : blocks[i]) in[b] = 1;
      for (uint64_t b = 0; b < n_grid; ++b)
        if (!in[b]) blocks[i].push_back(b);
      whole = true;
    }
    if (whole) {
      t_run = Clock::now();
      sim::SampledRun again = simulator().run_sampled(rp, blocks, cap);
      trace("whole launches again: {:.0f} ms", ms_since(t_run));
      if (!again.fault) run = std::move(again);
    }
    break;
  }
  if (cancel_requested(opt.cancel)) return fail("cancelled");
  if (run.fault) {
    P.sim_ms = ms_since(t_sim);
    return fail(fmt::format("the sampled run at the perf size stopped: {}: {}",
                            fault_name(run.fault.kind), run.fault.message));
  }
  // Blocks stopped in the bounded run: what each warp has left stands as instructions past the
  // trace's end, which the replay weighs each warp's recorded part by, as for a trace cut at the
  // cap.
  size_t stopped_blocks = 0;
  uint32_t uncounted_loops = 0;
  double stopped_ran = 0, stopped_whole = 0;
  if (extrapolated)
    for (auto& sl : run.launches)
      for (auto& b : sl.blocks) {
        if (!b.stopped) continue;
        ++stopped_blocks;
        for (auto& w : b.warps) {
          uncounted_loops = std::max(uncounted_loops, w.loops_uncounted);
          stopped_ran += double(w.ev.size());
          w.dropped += w.extrapolated;
          stopped_whole += double(w.ev.size() + w.dropped);
        }
      }

  // Blocks with nothing to do (every other chunk left to a neighbour, rows past the end) exit at
  // once, and the GPU's scheduler hands their slots on at once. A dozen sampled blocks cannot say
  // how many there are, and the replay's SM, which takes every SM-th block, may meet working
  // blocks only. So where the sample holds both kinds, a census of up to kCensusBlocks blocks
  // spread over the grid, each stopped after kCensusStop instructions a warp, counts the working
  // share; only working blocks are then spread over the SMs. Only the plan's first launch is
  // counted: the census runs no launch before it, and a later kernel's blocks may exit on what an
  // earlier one wrote (the grouped GEMM of puzzle 34 on the permute's counts).
  std::vector<double> working(nl, 1.0);
  std::vector<std::vector<char>> exits(nl); // per sampled block: exited at once
  uint64_t census_asked = 0, census_exited = 0;
  if (!run.launches.empty()) {
    const sim::SampledLaunch& sl = run.launches[0];
    uint64_t heavy = 0;
    for (auto& b : sl.blocks) heavy = std::max(heavy, most_warp_events(b));
    exits[0].assign(sl.blocks.size(), 0);
    size_t n_exit = 0;
    for (size_t b = 0; b < sl.blocks.size(); ++b) {
      const uint64_t e = most_warp_events(sl.blocks[b]);
      exits[0][b] = e < kExitEvents && 32 * e < heavy;
      n_exit += exits[0][b];
    }
    if (n_exit > 0 && n_exit < sl.blocks.size()) {
      const sim::SampledRun c = simulator().run_sampled(
          rp, {census_blocks(sl.launch.grid.count(), kCensusBlocks)}, 0, kCensusStop);
      if (!c.fault && !c.launches.empty() && !c.launches[0].blocks.empty()) {
        const auto& blocks = c.launches[0].blocks;
        for (auto& blk : blocks)
          census_exited += !blk.stopped && most_warp_events(blk) < kExitEvents;
        census_asked = blocks.size();
        // At least one working block: the sample saw one.
        working[0] = std::max(1.0, double(census_asked - census_exited)) / double(census_asked);
      }
    }
  }
  uint64_t addr_census_blocks = 0; // see kAddrCensusStop
  P.sim_ms = ms_since(t_sim);
  trace("sampled runs and census: {:.0f} ms", P.sim_ms);
  if (cancel_requested(opt.cancel)) return fail("cancelled");
  if (!occupancy_known()) return fail("ptxas refused the file for " + co.arch);
  // What the driver would refuse by ptxas's figures (the sampled run had only the PTX).
  for (const Launch& l : lc.launches)
    if (const std::string why = resource_refusal(prog.resources, l.kernel, l.block.count());
        !why.empty())
      return fail(fmt::format("a launch of {} would be refused: {}", l.kernel, why));
  const auto t_replay = Clock::now();

  // Each launch replayed on the busiest SM.
  ExplainInput ex;
  ex.machine = &m;
  const uint64_t sms = uint64_t(std::max(1, m.sm_count));
  size_t replayed_blocks = 0, sampled_blocks = 0;
  int max_thin = 1;
  // What earlier launches stored that is still in the L2 (a later launch reads it from there):
  // per range of sectors, the DRAM bytes the launches since have moved.
  std::vector<L2Range> written;
  for (size_t li = 0; li < run.launches.size(); ++li) {
    if (cancel_requested(opt.cancel)) return fail("cancelled");
    sim::SampledLaunch& sl = run.launches[li];
    const SamplePlan& sp = plans[li];
    const Occupancy& o = occ[li];
    sampled_blocks += sl.blocks.size();
    LaunchMemory mem = analyse_memory(sl, sp.anchor, sp.neighbour);
    const uint64_t grid_blocks = sl.launch.grid.count();
    if (li == 0 && grid_blocks <= kAddrCensusBlocks && grid_blocks > sl.blocks.size() &&
        grid_blocks <= sms * uint64_t(std::max(1, o.resident)) &&
        std::find(mem.unrelated.begin(), mem.unrelated.end(), 1) != mem.unrelated.end()) {
      const auto t_census = Clock::now();
      const sim::SampledRun c = simulator().run_sampled(
          rp, {census_blocks(grid_blocks, grid_blocks)}, kAddrCensusStop, kAddrCensusStop);
      if (!c.fault && !c.launches.empty() && c.launches[0].blocks.size() == grid_blocks) {
        mem.sharers = load_sharers(c.launches[0]);
        addr_census_blocks = grid_blocks;
      }
      trace("address census of {} blocks: {:.0f} ms", grid_blocks, ms_since(t_census));
    }
    std::vector<OpCost> cost = cost_table(sl.code, m);
    trace("launch {}: memory analysed: {:.0f} ms", li, ms_since(t_replay));
    // ptxas put a wait for completion after each wgmma: every wait_group waits for all of them.
    if (!o.wgmma_serialized.empty())
      for (OpCost& c : cost)
        if (c.wgmma_wait) c.wgmma_keep = 0;

    // The working blocks (all of them unless the census found some that exit at once), spread
    // over the grid's positions.
    const uint64_t n_grid = sl.launch.grid.count();
    const uint64_t n = std::max<uint64_t>(1, uint64_t(std::llround(double(n_grid) * working[li])));
    const std::vector<char>& exited = exits[li];
    auto working_template = [&](size_t t) { return t >= exited.size() || !exited[t]; };
    const uint64_t nb = n >= sms ? (n + sms - 1) / sms : 1;
    // Where in the grid the SM's j-th block sits: every SM-th working block, spread over the
    // positions of all n_grid blocks.
    auto sm_block = [&](uint64_t j) {
      const uint64_t w = std::min<uint64_t>(j * std::min<uint64_t>(sms, n), n - 1);
      return std::min<uint64_t>(uint64_t(double(w) * double(n_grid) / double(n)), n_grid - 1);
    };
    // Per block: the sampled blocks' average of warp instructions.
    double events = 0;
    for (auto& b : sl.blocks) events += double(warp_events(b));
    events = sl.blocks.empty() ? 1 : std::max(1.0, events / double(sl.blocks.size()));
    // Blocks whose warps mostly exit early (one thread per row): the SM holds more of them than
    // the occupancy of whole blocks, as many as its block slots and the warps still running allow.
    int slots = o.resident;
    {
      size_t long_warps = 0;
      for (auto& b : sl.blocks) {
        uint64_t most = 0;
        for (auto& w : b.warps) most = std::max<uint64_t>(most, w.ev.size() + w.dropped);
        size_t k = 0; // warps that run long, or wait at a barrier for those that do
        for (auto& w : b.warps)
          k += 4 * (w.ev.size() + w.dropped) >= most ||
               std::any_of(w.ev.begin(), w.ev.end(),
                           [&](const sim::TraceEvent& e) { return cost[e.pc].barrier; });
        long_warps = std::max(long_warps, k);
      }
      if (long_warps > 0 && long_warps < size_t(o.warps))
        slots =
            std::clamp((o.warp_slots - o.warps) / int(long_warps) + 1, o.resident, o.block_slots);
    }
    ReplayInput in;
    in.m = &m;
    in.launch = &sl;
    in.cost = &cost;
    in.mem = &mem;
    in.resident = slots;
    in.warp_slots = o.warp_slots;
    in.blocks_on_sm = nb;
    in.l1_bytes = o.l1_bytes;
    in.budget_events = opt.event_budget;
    // Six rounds of the SM's slots show its steady rate; more only cost time (a grid of tiny
    // blocks would replay thousands).
    uint64_t k = nb;
    if (double(k) * events > double(opt.event_budget)) {
      k = std::max<uint64_t>(std::min<uint64_t>(nb, uint64_t(slots) * 2),
                             uint64_t(double(opt.event_budget) / events));
      k = std::min(k, nb);
    }
    // Thinning picks among the recorded events: a stopped block's are a small part of its whole.
    double recorded = events;
    if (extrapolated) {
      recorded = 0;
      for (auto& b : sl.blocks)
        for (auto& w : b.warps) recorded += double(w.ev.size());
      recorded = sl.blocks.empty() ? 1 : std::max(1.0, recorded / double(sl.blocks.size()));
    }
    const double replay_events = double(std::min<uint64_t>(k, uint64_t(slots) * 2)) * recorded;
    if (replay_events > double(opt.event_budget))
      in.thin = int(std::ceil(replay_events / double(opt.event_budget)));
    max_thin = std::max(max_thin, in.thin);
    // The busiest SM's blocks: every SM-th block of the grid, each played by the sampled block
    // nearest to it, in its own place (PcShift).
    const Dim3 gg = sl.launch.grid;
    for (uint64_t j = 0; j < k; ++j) {
      ReplayBlock rb;
      rb.linear = sm_block(j);
      rb.idx = block_at(gg, rb.linear);
      uint64_t best = ~0ull;
      // (The quarter points of the anchor's row weigh the extrapolation only, below.)
      const size_t nt = std::min(sl.blocks.size(), std::max<size_t>(1, sp.replay_templates));
      for (size_t t = 0; t < nt; ++t) {
        if (!working_template(t)) continue;
        uint64_t d = sl.blocks[t].linear > rb.linear ? sl.blocks[t].linear - rb.linear
                                                     : rb.linear - sl.blocks[t].linear;
        if (d < best) best = d, rb.tmpl = int(t);
      }
      // Every template exited at once (only an extra sample worked): the heaviest template, then.
      if (best == ~0ull)
        for (size_t t = 0; t < nt; ++t)
          if (warp_events(sl.blocks[t]) > warp_events(sl.blocks[size_t(rb.tmpl)])) rb.tmpl = int(t);
      rb.busy_sms = double(std::clamp<int64_t>(int64_t(n) - int64_t(j * sms), 1, int64_t(sms)));
      in.blocks.push_back(rb);
    }
    // The SM's other blocks, each as heavy as the sample nearest it in the grid (each coordinate's
    // distance as a fraction of its extent: a block's work follows where it sits, x, y and z, not
    // its place in launch order): their work per block over the replayed blocks', for the
    // extrapolation.
    if (k < nb && !in.blocks.empty()) {
      std::vector<Dim3> at(sl.blocks.size());
      std::vector<double> work(sl.blocks.size());
      for (size_t t = 0; t < sl.blocks.size(); ++t)
        at[t] = block_at(gg, sl.blocks[t].linear), work[t] = double(warp_events(sl.blocks[t]));
      auto frac = [](uint32_t a, uint32_t b, uint32_t e) {
        return e > 1 ? std::abs(double(a) - double(b)) / double(e - 1) : 0.0;
      };
      double rep = 0, rest = 0;
      for (auto& rb : in.blocks) rep += work[size_t(rb.tmpl)];
      for (uint64_t j = k; j < nb; ++j) {
        const Dim3 b = block_at(gg, sm_block(j));
        double best = 1e300;
        size_t bt = 0;
        for (size_t t = 0; t < at.size(); ++t) {
          if (!working_template(t)) continue;
          const double d =
              frac(at[t].x, b.x, gg.x) + frac(at[t].y, b.y, gg.y) + frac(at[t].z, b.z, gg.z);
          if (d < best) best = d, bt = t;
        }
        rest += work[bt];
      }
      rep /= double(in.blocks.size());
      rest /= double(nb - k);
      if (rep > 0 && rest > 0) in.rest_work = rest / rep;
    }
    replayed_blocks += in.blocks.size();
    // Only the templates that play a replayed block need ptxas's order (the rest are read for
    // their counts and sectors, which no order changes).
    {
      std::vector<size_t> played;
      for (const ReplayBlock& rb : in.blocks) played.push_back(size_t(rb.tmpl));
      std::sort(played.begin(), played.end());
      played.erase(std::unique(played.begin(), played.end()), played.end());
      schedule_like_ptxas(sl, cost, m, played);
    }
    trace("launch {}: scheduled like ptxas: {:.0f} ms", li, ms_since(t_replay));
    // The launch's share of DRAM bytes written: stores over stores plus loads, by sectors.
    // (cp.async returns nothing to a register, and is a load all the same.)
    {
      double ld = 0, st = 0;
      if (sp.anchor >= 0 && size_t(sp.anchor) < sl.blocks.size()) {
        for (auto& w : sl.blocks[size_t(sp.anchor)].warps)
          for (auto& e : w.ev) {
            if (e.kind == sim::TraceKind::global)
              (sl.code[e.pc].mem == sim::MemKind::store ? st : ld) += e.count;
            else if (e.kind == sim::TraceKind::bulk)
              ld += e.sectors();
          }
      }
      in.dram_mix_write = ld + st > 0 ? st / (ld + st) : 0;
    }
    // Traces cut at the cap: what was recorded stands for the whole. The replay scales its time by
    // the longest cut and each warp's counts by its own (scaling the time alone understated every
    // unit's busy time and bytes in "why this speed": puzzle 34's GEMM, cut 1.58, showed 7.0 GB
    // through the L2 for 11.1).
    for (auto& b : sl.blocks)
      for (auto& w : b.warps)
        if (w.dropped && !w.ev.empty())
          in.cut = std::max(in.cut, double(w.ev.size() + w.dropped) / double(w.ev.size()));
    // Stopped blocks differ in how much of them ran (a causal grid's first query tiles end within
    // the bound, its last run a few per cent): the replayed blocks' whole over what they ran, so
    // that the short ones are not stretched by the longest one's ratio.
    if (extrapolated) {
      double whole = 0, ran = 0;
      for (auto& rb : in.blocks)
        for (auto& w : sl.blocks[size_t(rb.tmpl)].warps)
          whole += double(w.ev.size() + w.dropped), ran += double(w.ev.size());
      in.cut = ran > 0 ? std::max(1.0, whole / ran) : 1.0;
    }
    in.cancel = opt.cancel;
    in.l2_resident = &written;
    ReplayResult rr = replay(in);
    if (cancel_requested(opt.cancel)) return fail("cancelled");

    // One address hammered by every block: atomics there are served one after another.
    double hot_us = 0;
    uint64_t hot_lanes = 0;
    if (mem.atomics_shared) {
      for (auto& [word, lanes] : mem.atomic_words) hot_lanes = std::max(hot_lanes, lanes);
      // Per lane: a float add at one word takes the L2 1.76 ns, an integer one 0.73 ns (both
      // measured; a histogram's lanes are not on a warp-uniform address, so none is aggregated).
      const double per_op_ns = mem.atomics_float ? 1.0 / std::max(1e-9, m.atomic_one_gops)
                                                 : 32.0 / std::max(1e-9, m.atomic_one_u32_gops);
      hot_us = double(hot_lanes) * double(n) * per_op_ns * 1e-3;
    }
    LaunchPrediction lp;
    lp.kernel = sl.launch.kernel;
    lp.grid = sl.launch.grid;
    lp.block = sl.launch.block;
    lp.registers = o.registers;
    lp.shared_bytes = o.shared_bytes;
    lp.spill_stores = o.spill_stores, lp.spill_loads = o.spill_loads;
    lp.wgmma_serialized = o.wgmma_serialized;
    lp.resident = o.resident;
    lp.resident_running = slots;
    lp.limited_by = o.limited_by;
    lp.occupancy = double(o.resident * o.warps) / m.max_warps_sm;
    lp.blocks_per_sm = nb;
    const double exec_us = std::max(rr.cycles / m.clock_ghz * 1e-3, hot_us);
    lp.us = m.launch_us + exec_us;
    // Traffic of the whole launch: the busiest SM's, times the blocks of the grid over its own.
    const double grid_scale = double(n) / double(nb);
    lp.dram_bytes = (rr.dram_read_bytes + rr.dram_write_bytes) * grid_scale;
    lp.l2_bytes = rr.l2_bytes * grid_scale;
    P.us += lp.us;
    P.dram_bytes += lp.dram_bytes;
    P.l2_bytes += lp.l2_bytes;
    ex.launches.push_back(LaunchExplainInput{&sl, std::move(cost), std::move(mem), rr, lp, o.warps,
                                             sp.anchor, hot_us, hot_lanes, exec_us});
    P.launches.push_back(lp);
    // This launch's stores stay in the L2 (write-back) for the launches after it, until as many
    // bytes as the L2 holds have passed through it.
    for (L2Range& r : written) r.since += lp.dram_bytes;
    std::erase_if(written, [&](const L2Range& r) { return r.since > m.l2_capacity; });
    for (const L2Range& r : stored_ranges(sl))
      if (double(r.last - r.first + 1) * 32 <= m.l2_capacity) written.push_back(r);
  }
  // Launches the sampled run did not reach (none normally): their overhead at least.
  for (size_t li = run.launches.size(); li < nl; ++li) P.us += m.launch_us;

  P.method = fmt::format(
      "{} of the grid's blocks simulated at the perf size ({}{}), {} replayed on one {} SM{}; "
      "the rest extrapolated{}",
      sampled_blocks, prefix ? "the first blocks in order" : "spread over the grid",
      run.lazy_bytes ? fmt::format(", {:.1f} MB of inputs generated", run.lazy_bytes / 1e6) : "",
      replayed_blocks, m.name,
      max_thin > 1 ? fmt::format(" (1 in {} of their instructions)", max_thin) : "",
      census_asked ? fmt::format("; {} of {} blocks asked (a census) exit at once, and only the "
                                 "working ones are spread over the SMs",
                                 census_exited, census_asked)
                   : "");
  if (addr_census_blocks)
    P.method += fmt::format("; which blocks share each load's data was counted by address (a grid "
                            "of one round whose blocks' coordinates do not say): all {} blocks ran "
                            "their first {} instructions a warp",
                            addr_census_blocks, kAddrCensusStop);
  if (stopped_blocks)
    P.method += fmt::format(
        "; {} of the simulated blocks were too long to run to their end: their warps ran the first "
        "{:.2g}% of their instructions ({:.3g} of about {:.3g} million, the rest counted from the "
        "trip counts of the loops they were in{}), and the rest of their time is extrapolated at "
        "the rate of what ran",
        stopped_blocks, 100 * stopped_ran / std::max(1.0, stopped_whole), stopped_ran / 1e6,
        stopped_whole / 1e6,
        uncounted_loops ? fmt::format("; {} loop(s) with no counter to read were taken to end "
                                      "there, so the time is a lower bound",
                                      uncounted_loops)
                        : "");
  trace("replay: {:.0f} ms", ms_since(t_replay));
  explain(ex, P);
  P.ok = true;
  P.model_ms = ms_since(t_start);
  return P;
}

} // namespace wb::perf
