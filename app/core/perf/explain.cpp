#include "explain.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace wb::perf {

std::string bytes_text(double b) {
  if (b >= 1e9) return fmt::format("{:.3g} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.3g} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.3g} KB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}
std::string rate_text_bps(double r) {
  if (r >= 1e12) return fmt::format("{:.3g} TB/s", r / 1e12);
  return fmt::format("{:.3g} GB/s", r / 1e9);
}
std::string us_text(double us) {
  if (us >= 1e4) return fmt::format("{:.3g} ms", us / 1e3);
  if (us >= 100) return fmt::format("{:.0f} us", us);
  if (us >= 10) return fmt::format("{:.1f} us", us);
  return fmt::format("{:.2f} us", us);
}

namespace {

// Per source line, what the anchor block's requests used and fetched (global memory), its shared
// accesses' wavefronts, its atomics, and whether it touched local memory.
struct LineTraffic {
  double requests = 0, used = 0, fetched = 0;
  double shared_req = 0, waves = 0, ideal = 0; // ideal: one wavefront per 128 bytes asked
  double atomics = 0, atomic_lanes_max = 0;
  double local_req = 0;
  double stall = 0;        // warp-clocks waiting on this line (replay)
  double stall_mem = 0;    // of which for memory
  double stall_atomic = 0; // of which for atomics to finish
  double issued = 0;
};

std::string plural(double n, const char* one, const char* many) {
  return fmt::format("{:.0f} {}", n, n == 1 ? one : many);
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
            break;
          case sim::TraceKind::local:
            t.local_req += 1;
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

    // -- resources, each as the time it was busy
    const double dram_us = rr.dram_busy * to_us;
    const double dram_bytes = lp.dram_bytes;
    if (dram_us > 0)
      add("dram", dram_us,
          fmt::format("DRAM: {} at {} is {} of the {}", bytes_text(dram_bytes),
                      rate_text_bps(dram_bytes / (dram_us * 1e-6)), us_text(dram_us), us_text(T)));
    const double l2_us = rr.l2_busy * to_us;
    if (l2_us > 0)
      add("l2", l2_us,
          fmt::format("L2: {} through the L2 at {} is {} of the {}", bytes_text(lp.l2_bytes),
                      rate_text_bps(m.l2_gbps * 1e9), us_text(l2_us), us_text(T)));
    const double mio_us = rr.mio_busy * to_us;
    if (mio_us > 0)
      add("lsu", mio_us,
          fmt::format("load/store unit: {:.0f} clocks of memory instructions per SM (one "
                      "128-byte line or shared-memory wavefront a clock) is {} of the {}",
                      rr.mio_busy, us_text(mio_us), us_text(T)));
    const double issue_us = rr.issue_slots / 4 * to_us;
    add("issue", issue_us,
        fmt::format("instruction issue: {:.3g} instructions per SM at 4 a clock is {} of the {}",
                    rr.issue_slots, us_text(issue_us), us_text(T)));
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
            fmt::format("{} pipe: busy {} of the {} ({:.3g} clocks per SM sub-partition)",
                        pipe_name(pk.p), us_text(us), us_text(T), rr.pipe_busy[int(pk.p)] / 4));
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
          fmt::format("line {}: every block adds to the same address: {:.3g} atomics on one word, "
                      "one after another at {:.2g} ns each, is {} of the {}",
                      hot_line, double(L.hot_lanes) * double(n), 1.0 / m.atomic_one_gops,
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
      const double slots = double(m.sm_count) * lp.resident;
      const double waves = double(n) / slots;
      const double full = std::ceil(waves - 1e-9);
      if (waves < 0.5)
        add("occupancy", L.exec_us * (1 - waves),
            fmt::format("grid: {} blocks fill {:.0f}% of the GPU's {:.0f} block slots ({} SMs x {} "
                        "blocks); the rest of the GPU waits",
                        n, 100 * waves, slots, m.sm_count, lp.resident));
      else if (full >= 1 && full < 16 && full - waves > 0.05) {
        const double lost = L.exec_us * (full - waves) / full;
        add("tail", lost,
            fmt::format("tail: {} blocks on {} SMs x {} slots is {:.2f} waves; the last wave runs "
                        "{:.0f} blocks while {:.0f} slots wait",
                        n, m.sm_count, lp.resident, waves, double(n) - (full - 1) * slots,
                        full * slots - double(n)));
      }
    }
    // -- latency: warps waiting on memory while DRAM and the L2 have room
    const double busiest = std::max({dram_us, l2_us, mio_us, issue_us});
    if (stall_total > 0 && stall_mem / stall_total > 0.5 && busiest < 0.7 * L.exec_us) {
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
    if (stall_total > 0 && stall_alu / stall_total > 0.4 && busiest < 0.7 * L.exec_us) {
      // A dependency chain: the line whose results are waited on most.
      int worst = 0;
      double w = 0;
      for (size_t pc = 0; pc < rr.pc.size(); ++pc)
        if (rr.pc[pc].stall[int(Stall::alu)] > w)
          w = rr.pc[pc].stall[int(Stall::alu)], worst = sl.code[pc].line;
      double per_warp =
          rr.issue_slots / std::max(1.0, double(lp.blocks_per_sm) * L.warps_per_block);
      add("serial", L.exec_us * stall_alu / stall_total,
          fmt::format("dependent arithmetic: each warp runs {:.3g} instructions mostly one after "
                      "another (line {} waits on its own results most), with {} warps per SM to "
                      "overlap them",
                      per_warp, worst, lp.resident * L.warps_per_block),
          worst);
    }
    if (rr.warp_cycles > 0 && stall_bar / rr.warp_cycles > 0.15)
      add("barrier", L.exec_us * stall_bar / rr.warp_cycles,
          fmt::format("barriers: warps spend {:.0f}% of their time waiting at __syncthreads()",
                      100 * stall_bar / rr.warp_cycles));
    // -- per line: wasted sectors, bank conflicts, one-address atomics, local memory
    double total_fetched = 0;
    for (auto& [line, t] : here) total_fetched += t.fetched;
    for (auto& [line, t] : here) {
      if (t.requests > 0 && t.fetched > 1.8 * t.used && total_fetched > 0 &&
          t.fetched > 0.2 * total_fetched) {
        const double waste = (1 - t.used / t.fetched) * (t.fetched / total_fetched);
        add("sectors", std::max(dram_us, l2_us) * waste,
            fmt::format("line {} fetches {:.0f} bytes per request where {:.0f} would do: {:.1f}x "
                        "the bytes",
                        line, t.fetched / t.requests, t.used / t.requests, t.fetched / t.used),
            line);
      }
      if (t.shared_req > 0 && t.waves > 1.5 * t.ideal)
        add("bank_conflicts", mio_us * (1 - t.ideal / t.waves),
            fmt::format("line {}: {:.0f}-way bank conflicts ({:.1f} shared-memory wavefronts per "
                        "request where {:.0f} would do)",
                        line, t.waves / t.ideal, t.waves / t.shared_req, t.ideal / t.shared_req),
            line);
      if (t.atomics > 0 && t.atomic_lanes_max >= 8 && L.hot_us <= 0.05 * T)
        add("atomics",
            std::max(std::max(rr.atomic_busy * to_us, mio_us) * 0.5,
                     stall_total > 0 ? L.exec_us * t.stall_atomic / stall_total : 0.0),
            fmt::format("line {}: up to {:.0f} lanes of a warp add to one address; warps wait on "
                        "this line's atomics {:.0f}% of their waiting time",
                        line, t.atomic_lanes_max,
                        stall_total > 0 ? 100 * t.stall_atomic / stall_total : 0.0),
            line);
      if (t.local_req > 0 && here.size() > 0)
        add("local_memory", std::max(l2_us, mio_us) * 0.5,
            fmt::format(
                "line {}: an array in local memory ({} per block): a register array indexed "
                "at run time, or a spill",
                line, plural(t.local_req, "access", "accesses")),
            line);
    }
    std::sort(f.begin(), f.end(), [](const Factor& a, const Factor& b) { return a.us > b.us; });
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
  std::sort(merged.begin(), merged.end(),
            [](const Factor& a, const Factor& b) { return a.us > b.us; });
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
    if (t.requests > 0)
      parts.push_back(fmt::format("uses {:.0f} of {:.0f} B fetched", t.used / t.requests,
                                  t.fetched / t.requests));
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
  return fmt::format("{} <<<({},{},{}), ({},{},{})>>>: {} registers, {} B shared; {} blocks per "
                     "SM (limited by {}), {:.0f}% occupancy; {} blocks on the busiest SM; {}",
                     l.kernel, l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z,
                     l.registers, l.shared_bytes, l.resident, l.limited_by, 100 * l.occupancy,
                     l.blocks_per_sm, us_text(l.us));
}

} // namespace wb::perf
