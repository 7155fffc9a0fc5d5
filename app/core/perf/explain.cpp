#include "explain.hpp"

#include "core/format_figure.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace wb::perf {

// The figures read as everywhere else (core/format_figure.hpp).
std::string bytes_text(double b) {
  return wb::bytes_text(b);
}
std::string rate_text_bps(double r) {
  return si(r, "B/s");
}
std::string us_text(double us) {
  return time_text(us);
}

namespace {

// Per source line, what the anchor block's requests used and fetched (global memory), its shared
// accesses' wavefronts, its atomics, and whether it touched local memory.
struct LineTraffic {
  double requests = 0, used = 0, fetched = 0, lanes = 0;
  double shared_req = 0, waves = 0, ideal = 0; // ideal: one wavefront per 128 bytes asked
  double atomics = 0, atomic_lanes_max = 0;
  double local_req = 0, local_fetched = 0; // local memory: requests, bytes of their sectors
  double stall = 0;                        // warp-clocks waiting on this line (replay)
  double stall_mem = 0;                    // of which for memory
  double stall_atomic = 0;                 // of which for atomics to finish
  double issued = 0;
};

std::string plural(double n, const char* one, const char* many) {
  return fmt::format("{:.0f} {}", n, n == 1 ? one : many);
}

// A resource busy this share of the time or more is the limiter; below it, the time goes to
// waiting (latency, dependent chains, barriers, block starts) and that is named first.
constexpr double kSaturated = 0.85;

bool is_pipe(const std::string& k) {
  for (const char* r : {"fp32", "fp64", "fp16", "sfu", "conversions", "alu", "tensor"})
    if (k == r) return true;
  return false;
}
// A unit with a rate (a pipe, issue, the memory system, the L2's atomic units).
bool is_resource(const std::string& k) {
  return is_pipe(k) || k == "dram" || k == "l2" || k == "lsu" || k == "issue" || k == "atomics";
}
// Warps waiting on memory or on their own dependent arithmetic with the SM's resources idle.
bool is_waiting(const std::string& k) {
  return k == "latency" || k == "serial";
}
// A cause: what makes a resource busier than the work needs.
bool is_cause(const Factor& f) {
  return f.key == "sectors" || f.key == "bank_conflicts" || f.key == "local_memory" ||
         f.key == "divergence" || (f.key == "atomics" && f.line > 0);
}

// By time, then: the limiter first (a resource if one is saturated, else what the warps wait
// on), and right after it the causes that make up much of its time (the line to change).
void rank(std::vector<Factor>& f, double total_us) {
  std::stable_sort(f.begin(), f.end(),
                   [](const Factor& a, const Factor& b) { return a.us > b.us; });
  if (f.empty() || total_us <= 0) return;
  // Saturated issue taken up by one pipe's instructions: the pipe says more.
  if (f[0].key == "issue" && f[0].us >= kSaturated * total_us) {
    auto p = std::find_if(f.begin(), f.end(),
                          [&](const Factor& x) { return is_pipe(x.key) && x.us >= 0.9 * f[0].us; });
    if (p != f.end()) std::rotate(f.begin(), p, p + 1);
  }
  if (is_resource(f[0].key) && !is_cause(f[0]) && f[0].us < kSaturated * total_us) {
    auto w = std::find_if(f.begin(), f.end(), [](const Factor& x) { return is_waiting(x.key); });
    if (w != f.end() && w->us >= 0.1 * total_us) std::rotate(f.begin(), w, w + 1);
  }
  if (!is_resource(f[0].key) || is_cause(f[0])) return;
  const double top = f[0].us;
  auto next = f.begin() + 1;
  for (auto it = f.begin() + 1; it != f.end(); ++it)
    if (is_cause(*it) && it->us >= 0.3 * top) {
      std::rotate(next, it, it + 1);
      ++next;
    }
}

} // namespace

void explain(const ExplainInput& in, Prediction& p) {
  const Machine& m = *in.machine;
  const double clk = m.clock_ghz;
  std::map<int, LineTraffic> lines;
  double plan_stall = 0;
  std::vector<Factor> plan;

  for (size_t li = 0; li < in.launches.size(); ++li) {
    const LaunchExplainInput& L = in.launches[li];
    LaunchPrediction& lp = p.launches[li];
    const ReplayResult& rr = L.rr;
    const sim::SampledLaunch& sl = *L.launch;
    const double T = lp.us;
    const uint64_t n = sl.launch.grid.count();
    std::vector<Factor> f;
    auto add = [&](const char* key, double us, std::string text, int line = 0) {
      if (!(us > 0) || !std::isfinite(us)) return;
      Factor x;
      x.key = key;
      x.us = us;
      x.share = T > 0 ? std::min(1.0, us / T) : 0;
      x.text = std::move(text);
      x.line = line;
      f.push_back(std::move(x));
    };
    const double to_us = 1.0 / (clk * 1e3); // clocks -> us

    // -- per-line traffic from the anchor block, stalls from the replay
    std::map<int, LineTraffic> here;
    if (L.anchor >= 0 && size_t(L.anchor) < sl.blocks.size()) {
      for (auto& w : sl.blocks[size_t(L.anchor)].warps)
        for (auto& e : w.ev) {
          const int line = sl.code[e.pc].line;
          LineTraffic& t = here[line];
          const double lanes = __builtin_popcount(e.mask);
          switch (e.kind) {
          case sim::TraceKind::global:
            t.requests += 1, t.used += lanes * e.bytes, t.fetched += 32.0 * e.count;
            t.lanes += lanes;
            break;
          case sim::TraceKind::local:
            t.local_req += 1, t.local_fetched += 32.0 * e.count;
            break;
          case sim::TraceKind::bulk: // whole sectors
            t.requests += 1, t.used += 32.0 * e.sectors(), t.fetched += 32.0 * e.sectors();
            t.lanes += 32;
            break;
          case sim::TraceKind::shared:
            t.shared_req += 1, t.waves += e.count;
            t.ideal += std::max(1.0, std::ceil(lanes * e.bytes / 128.0));
            break;
          case sim::TraceKind::global_atomic:
            t.atomics += lanes;
            for (uint32_t k = 0; k < e.count; ++k)
              t.atomic_lanes_max = std::max<double>(t.atomic_lanes_max, w.sec[e.first + k].mask);
            break;
          case sim::TraceKind::shared_atomic:
            t.atomics += lanes;
            t.atomic_lanes_max = std::max<double>(t.atomic_lanes_max, e.count);
            break;
          default:
            break;
          }
        }
    }
    double stall_total = 0, stall_mem = 0, stall_alu = 0, stall_bar = 0;
    for (size_t pc = 0; pc < rr.pc.size(); ++pc) {
      const PcStats& ps = rr.pc[pc];
      const int line = sl.code[pc].line;
      LineTraffic& t = here[line];
      t.issued += ps.issued;
      for (int s = 0; s < kStalls; ++s) {
        if (Stall(s) == Stall::issue) continue; // others issuing is the SM at work
        t.stall += ps.stall[s];
        stall_total += ps.stall[s];
      }
      double mem = ps.stall[int(Stall::dram)] + ps.stall[int(Stall::l2)] + ps.stall[int(Stall::l1)];
      t.stall_mem += mem;
      stall_mem += mem;
      t.stall_atomic += ps.stall[int(Stall::atomic)];
      stall_alu += ps.stall[int(Stall::alu)];
      stall_bar += ps.stall[int(Stall::barrier)];
    }
    stall_bar += rr.barrier_wait;

    // -- resources, each as the time it was busy (no longer than the launch: the replay's queues
    // may end a little past its last instruction, and "666 us of the 665 us" reads as a mistake)
    const double dram_us = std::min(T, rr.dram_busy * to_us);
    // The bytes the DRAM streams: sectors the blocks of a round share once, not once a block.
    const double fetched = rr.dram_read_bytes + rr.dram_write_bytes;
    const double dram_bytes =
        fetched > 0 ? lp.dram_bytes * (rr.dram_read_paid_bytes + rr.dram_write_bytes) / fetched
                    : lp.dram_bytes;
    if (dram_us > 0)
      add("dram", dram_us,
          fmt::format("DRAM: {} at {} is {} of the {}", bytes_text(dram_bytes),
                      rate_text_bps(dram_bytes / (dram_us * 1e-6)), us_text(dram_us), us_text(T)));
    const double l2_us = std::min(T, rr.l2_busy * to_us);
    if (l2_us > 0)
      add("l2", l2_us,
          fmt::format("L2: {} through the L2 at {} is {} of the {}", bytes_text(lp.l2_bytes),
                      rate_text_bps(lp.l2_bytes / (l2_us * 1e-6)), us_text(l2_us), us_text(T)));
    const double mio_us = std::min(T, rr.mio_busy * to_us);
    if (mio_us > 0)
      add("lsu", mio_us,
          fmt::format("load/store unit: {} of memory instructions per SM (one "
                      "128-byte line or shared-memory wavefront a clock) is {} of the {}",
                      count_text(rr.mio_busy, "clocks"), us_text(mio_us), us_text(T)));
    const double issue_us = std::min(T, rr.issue_slots / 4 * to_us);
    add("issue", issue_us,
        fmt::format("instruction issue: {} per SM at 4 a clock is {} of the {}",
                    count_text(rr.issue_slots, "instructions"), us_text(issue_us), us_text(T)));
    struct PipeKey {
      Pipe p;
      const char* key;
    };
    for (PipeKey pk :
         {PipeKey{Pipe::fma, "fp32"}, PipeKey{Pipe::fp64, "fp64"}, PipeKey{Pipe::fp16, "fp16"},
          PipeKey{Pipe::sfu, "sfu"}, PipeKey{Pipe::conv, "conversions"}, PipeKey{Pipe::alu, "alu"},
          PipeKey{Pipe::tensor, "tensor"}}) {
      const double us = rr.pipe_busy[int(pk.p)] / 4 * to_us;
      if (us > 0.02 * T)
        add(pk.key, us,
            fmt::format("{} pipe: busy {} of the {} ({} per SM sub-partition)", pipe_name(pk.p),
                        us_text(us), us_text(T),
                        count_text(rr.pipe_busy[int(pk.p)] / 4, "clocks")));
    }
    if (rr.atomic_busy > 0)
      add("atomics", rr.atomic_busy * to_us,
          fmt::format("atomics: the L2's atomic units are busy {} of the {} with this SM's share",
                      us_text(rr.atomic_busy * to_us), us_text(T)));
    if (L.hot_us > 0.05 * T) {
      int hot_line = 0;
      double most = 0;
      for (auto& [line, t] : here)
        if (t.atomic_lanes_max > most) most = t.atomic_lanes_max, hot_line = line;
      add("atomics", L.hot_us,
          fmt::format("line {}: every block adds to the same address: {} on one word, "
                      "one after another at {} each, is {} of the {}",
                      hot_line, count_text(double(L.hot_lanes) * double(n), "atomics"),
                      us_text(L.hot_us / std::max(1.0, double(L.hot_lanes) * double(n))),
                      us_text(L.hot_us), us_text(T)),
          hot_line);
    }
    add("launch", m.launch_us,
        fmt::format("launch: {} to start the kernel and see it end (measured for an empty one)",
                    us_text(m.launch_us)));

    // -- block scheduling: an SM starts blocks no faster than a fixed rate
    {
      const double gap_ns = std::max(m.block_ns, m.block_ns_per_warp * L.warps_per_block);
      const double us = double(lp.blocks_per_sm) * gap_ns * 1e-3;
      if (us > 0.1 * L.exec_us)
        add("dispatch", us,
            fmt::format("block scheduling: {} blocks of {} threads, {} on the busiest SM; an SM "
                        "starts a block at most every {:.0f} ns, so {} at least",
                        n, sl.launch.block.count(), lp.blocks_per_sm, gap_ns, us_text(us)));
    }
    // -- waves and the tail
    {
      const int per_sm = std::max(lp.resident, lp.resident_running);
      const double slots = double(m.sm_count) * per_sm;
      const double waves = double(n) / slots;
      const double full = std::ceil(waves - 1e-9);
      if (waves < 0.5)
        add("occupancy", L.exec_us * (1 - waves),
            fmt::format("grid: {} blocks fill {:.0f}% of the GPU's {:.0f} block slots ({} SMs x {} "
                        "blocks); the rest of the GPU waits",
                        n, 100 * waves, slots, m.sm_count, per_sm));
      else if (full >= 1 && full < 16 && full - waves > 0.05) {
        const double lost = L.exec_us * (full - waves) / full;
        add("tail", lost,
            fmt::format("tail: {} blocks on {} SMs x {} slots is {:.2f} waves; the last wave runs "
                        "{:.0f} blocks while {:.0f} slots wait",
                        n, m.sm_count, per_sm, waves, double(n) - (full - 1) * slots,
                        full * slots - double(n)));
      }
    }
    // -- latency: warps waiting on memory while DRAM and the L2 have room
    const double busiest = std::max({dram_us, l2_us, mio_us, issue_us});
    if (stall_total > 0 && stall_mem / stall_total > 0.5 && busiest < kSaturated * L.exec_us) {
      const double per_sm_bw = m.dram_read_gbps * 1e9 / m.sm_count; // B/s
      const double need = per_sm_bw * m.lat_dram_ns * 1e-9;
      const double have = rr.bytes_in_flight;
      const double us = std::max(0.0, L.exec_us - busiest);
      add("latency", us,
          fmt::format("latency: {} in flight per SM where about {} keeps DRAM busy ({} per SM x "
                      "{:.0f} ns); more loads in flight per thread, or more threads per SM "
                      "({} blocks of {} warps now, limited by {})",
                      bytes_text(have), bytes_text(need), rate_text_bps(per_sm_bw), m.lat_dram_ns,
                      lp.resident, L.warps_per_block, lp.limited_by),
          0);
    }
    if (stall_total > 0 && stall_alu / stall_total > 0.4 && busiest < kSaturated * L.exec_us) {
      // A dependency chain: the line whose results are waited on most.
      int worst = 0;
      double w = 0;
      for (size_t pc = 0; pc < rr.pc.size(); ++pc)
        if (rr.pc[pc].stall[int(Stall::alu)] > w)
          w = rr.pc[pc].stall[int(Stall::alu)], worst = sl.code[pc].line;
      double per_warp =
          rr.issue_slots / std::max(1.0, double(lp.blocks_per_sm) * L.warps_per_block);
      add("serial", L.exec_us * stall_alu / stall_total,
          fmt::format("dependent arithmetic: each warp runs {} mostly one after "
                      "another (line {} waits on its own results most), with {} warps per SM to "
                      "overlap them",
                      count_text(per_warp, "instructions"), worst, lp.resident * L.warps_per_block),
          worst);
    }
    if (rr.warp_cycles > 0 && stall_bar / rr.warp_cycles > 0.15)
      add("barrier", L.exec_us * stall_bar / rr.warp_cycles,
          fmt::format("barriers: warps spend {:.0f}% of their time waiting at __syncthreads()",
                      100 * stall_bar / rr.warp_cycles));
    // -- divergence: issue slots spent on warps with lanes idle (a branch that splits a warp
    // runs both sides; a lane that has left the loop still costs its warp the slot)
    {
      double lanes = 0, issued = 0, worst_idle = 0;
      int worst = 0;
      std::map<int, std::pair<double, double>> by_line; // line -> (lanes, issued)
      for (size_t pc = 0; pc < rr.pc.size(); ++pc) {
        if (L.cost[pc].free) continue;
        auto& [ln, is] = by_line[sl.code[pc].line];
        ln += rr.pc[pc].lanes, is += rr.pc[pc].issued;
        lanes += rr.pc[pc].lanes, issued += rr.pc[pc].issued;
      }
      for (auto& [line, li] : by_line)
        if (li.second * 32 - li.first > worst_idle)
          worst_idle = li.second * 32 - li.first, worst = line;
      const double idle = issued > 0 ? 1 - lanes / (32 * issued) : 0;
      if (idle > 0.2 && issue_us * idle > 0.05 * T)
        add("divergence", issue_us * idle,
            fmt::format("divergence: warps issue with {:.1f} of 32 lanes at work on average, so "
                        "{:.0f}% of the issue slots ({}) go to idle lanes; line {} wastes the most",
                        32 * (1 - idle), 100 * idle, us_text(issue_us * idle), worst),
            worst);
    }
    // -- per line: wasted sectors, bank conflicts, one-address atomics, local memory
    double total_fetched = 0, total_local = 0;
    for (auto& [line, t] : here) total_fetched += t.fetched, total_local += t.local_fetched;
    for (auto& [line, t] : here) {
      // (A lone lane per request, one thread walking its row, is not counted: the L1 hands it
      // the rest of each sector on its next loads.)
      if (t.requests > 0 && t.fetched > 1.8 * t.used && total_fetched > 0 &&
          t.fetched > 0.2 * total_fetched && t.lanes >= 2 * t.requests) {
        const double share = t.fetched / total_fetched;
        const double waste = (1 - t.used / t.fetched) * share;
        // The load/store unit takes a request's 128-byte lines one a clock.
        const double lines = std::max(1.0, t.fetched / t.requests / 128);
        const double need = std::max(1.0, std::ceil(t.used / t.requests / 128));
        const double lsu_waste = (1 - need / lines) * share;
        add("sectors", std::max(std::max(dram_us, l2_us) * waste, mio_us * lsu_waste),
            fmt::format("line {} fetches {:.0f} bytes per request where {:.0f} would do: {:.1f}x "
                        "the bytes",
                        line, t.fetched / t.requests, t.used / t.requests, t.fetched / t.used),
            line);
      }
      // A conflicted line costs the load/store unit its extra wavefronts, one a clock, on every
      // block the busiest SM runs: not the unit's whole time (an epilogue's one conflicted store
      // would otherwise be charged as much as the main loop's).
      if (t.shared_req > 0 && t.waves > 1.5 * t.ideal) {
        const double extra = (t.waves - t.ideal) * double(std::max<uint64_t>(1, lp.blocks_per_sm));
        const double us = std::min(mio_us, extra * to_us);
        add("bank_conflicts", us,
            fmt::format("line {}: {:.0f}-way bank conflicts ({:.1f} shared-memory wavefronts per "
                        "request where {:.0f} would do): {} extra wavefronts on the busiest "
                        "SM, {} of the load/store unit's {}",
                        line, t.waves / t.ideal, t.waves / t.shared_req, t.ideal / t.shared_req,
                        count_text(extra, ""), us_text(us), us_text(mio_us)),
            line);
      }
      if (t.atomics > 0 && t.atomic_lanes_max >= 8 && L.hot_us <= 0.05 * T)
        add("atomics",
            std::max(std::max(rr.atomic_busy * to_us, mio_us) * 0.5,
                     stall_total > 0 ? L.exec_us * t.stall_atomic / stall_total : 0.0),
            fmt::format("line {}: up to {:.0f} lanes of a warp add to one address; warps wait on "
                        "this line's atomics {:.0f}% of their waiting time",
                        line, t.atomic_lanes_max,
                        stall_total > 0 ? 100 * t.stall_atomic / stall_total : 0.0),
            line);
      // Local memory: the busier of the L2 and the load/store unit, in this line's share of the
      // bytes the block moves to and from memory (a spill outside the loop is a small part).
      if (t.local_req > 0 && total_fetched + total_local > 0) {
        const double share = t.local_fetched / (total_fetched + total_local);
        add("local_memory", std::max(l2_us, mio_us) * share,
            fmt::format("line {}: an array in local memory ({} per block, {:.0f}% of the bytes "
                        "the block moves): a register array indexed at run time, or a spill",
                        line, plural(t.local_req, "access", "accesses"), 100 * share),
            line);
      }
    }
    rank(f, L.exec_us);
    lp.factors = f;
    // Into the plan's list: one launch's factor weighs by its share of the plan.
    for (auto x : f) {
      x.share = p.us > 0 ? x.us / p.us : 0;
      if (in.launches.size() > 1)
        x.text = fmt::format("{} ({}): {}", sl.launch.kernel, li + 1, x.text);
      plan.push_back(std::move(x));
    }
    for (auto& [line, t] : here) {
      LineTraffic& all = lines[line];
      all.requests += t.requests, all.used += t.used, all.fetched += t.fetched;
      all.shared_req += t.shared_req, all.waves += t.waves, all.ideal += t.ideal;
      all.atomics += t.atomics,
          all.atomic_lanes_max = std::max(all.atomic_lanes_max, t.atomic_lanes_max);
      all.local_req += t.local_req, all.stall += t.stall, all.stall_mem += t.stall_mem;
      all.issued += t.issued;
    }
    plan_stall += stall_total;
  }
  // Launch overheads of a multi-launch plan are one factor.
  double launches_us = 0;
  std::vector<Factor> merged;
  for (auto& x : plan)
    if (x.key == "launch")
      launches_us += x.us;
    else
      merged.push_back(x);
  if (launches_us > 0 && !in.launches.empty()) {
    Factor x;
    x.key = "launch";
    x.us = launches_us;
    x.share = p.us > 0 ? launches_us / p.us : 0;
    x.text = in.launches.size() > 1
                 ? fmt::format("launches: {} kernels at {} each to start and end",
                               in.launches.size(), us_text(m.launch_us))
                 : fmt::format("launch: {} to start the kernel and see it end (measured for an "
                               "empty one)",
                               us_text(m.launch_us));
    merged.push_back(x);
  }
  rank(merged, p.us);
  p.factors = std::move(merged);

  // Line notes for the editor's gutter.
  for (auto& [line, t] : lines) {
    if (line <= 0) continue;
    LineNote n;
    n.line = line;
    n.share = plan_stall > 0 ? t.stall / plan_stall : 0;
    n.bytes_used = t.used;
    n.bytes_fetched = t.fetched;
    n.requests = t.requests;
    n.conflict_ways = t.ideal > 0 ? t.waves / t.ideal : 0;
    std::vector<std::string> parts;
    // Lanes that share addresses ask for more bytes than are fetched (a broadcast): say so,
    // rather than "uses 128 of 32 B".
    if (t.requests > 0 && t.used <= t.fetched)
      parts.push_back(fmt::format("uses {:.0f} of {:.0f} B fetched", t.used / t.requests,
                                  t.fetched / t.requests));
    else if (t.requests > 0)
      parts.push_back(fmt::format("lanes share addresses: {:.0f} B asked, {:.0f} B fetched",
                                  t.used / t.requests, t.fetched / t.requests));
    if (t.shared_req > 0 && n.conflict_ways > 1.05)
      parts.push_back(fmt::format("{:.0f}-way bank conflict", n.conflict_ways));
    if (t.atomic_lanes_max >= 2)
      parts.push_back(fmt::format("{:.0f} lanes on one address", t.atomic_lanes_max));
    if (t.local_req > 0) parts.push_back("local memory");
    if (n.share >= 0.05) parts.push_back(fmt::format("{:.0f}% of the waiting", 100 * n.share));
    if (parts.empty()) continue;
    for (size_t i = 0; i < parts.size(); ++i) n.text += (i ? "; " : "") + parts[i];
    p.lines.push_back(std::move(n));
  }
}

std::string launch_text(const LaunchPrediction& l) {
  const std::string running =
      l.resident_running > l.resident
          ? fmt::format(", up to {} once their idle warps have exited", l.resident_running)
          : "";
  // The simulator runs PTX, where ptxas's spills do not exist yet: their local-memory traffic is
  // not in the time, so say so. Spills off the hot path cost nothing (17 of 20 spilling kernels of
  // the H200 set were within 1.5x); on it, four ran 1.4-2.4x slower than predicted
  // (docs/perf-model.md, "Spills").
  const std::string spills =
      l.spill_stores + l.spill_loads > 0
          ? fmt::format(" (ptxas spilled registers: {} of stores and {} of loads in the "
                        "code; where they lie on the hot path, their local-memory traffic is not "
                        "in this prediction)",
                        bytes_text(l.spill_stores), bytes_text(l.spill_loads))
          : "";
  // ptxas's own words for why it made every wgmma wait for the one before (C7510-C7520).
  const std::string serialized =
      l.wgmma_serialized.empty()
          ? ""
          : fmt::format("; ptxas serialized its wgmma, due to {}: each waits for the one before "
                        "to complete, so nothing overlaps the tensor cores' work, and this "
                        "prediction assumes so",
                        l.wgmma_serialized);
  return fmt::format("{} <<<({},{},{}), ({},{},{})>>>: {}{}, {} shared; {} per SM (limited by "
                     "{}){}, {:.0f}% occupancy; {} on the busiest SM; {}{}",
                     l.kernel, l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z,
                     plural(l.registers, "register", "registers"), spills,
                     bytes_text(l.shared_bytes), plural(l.resident, "block", "blocks"),
                     l.limited_by, running, 100 * l.occupancy,
                     plural(l.blocks_per_sm, "block", "blocks"), us_text(l.us), serialized);
}

} // namespace wb::perf
