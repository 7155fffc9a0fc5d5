// The roofline probes on a real GPU: the suite runs, every ceiling lies within 50%..105% of its
// datasheet figure, the memory hierarchy is ordered (shared > L2 > DRAM), the ceilings are kept,
// and a timed check then scores against them. Prints the table (the device run's record).
#include "gpu_util.hpp"

#include "core/catalog.hpp"
#include "core/check.hpp"
#include "core/probe.hpp"
#include "core/roofline.hpp"
#include "core/store.hpp"

#include <cmath>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/warpbook-probe-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

} // namespace

TEST_CASE("the probe suite measures ceilings within reach of the datasheet") {
  std::string why;
  if (!wb::make_cuda_backend(why)) {
    MESSAGE("no GPU: " << why);
    return;
  }
  wb::ProbeOptions o;
  o.variants = true;
  wb::ProbeSuite s = wb::run_probes(o);
  REQUIRE_MESSAGE(s.ok(), s.error);
  std::printf(
      "\n%s, driver %s: suite %.0f ms (compile %.0f ms, clock ramp %.0f ms, first/last ramp "
      "launch %.2f)\n",
      s.device.name.c_str(), s.device.driver.c_str(), s.total_ms, s.compile_ms, s.ramp_ms,
      s.ramp_start_mhz_ratio);
  for (auto& r : s.results)
    std::printf("  %-48s best %12.0f  median %12.0f  datasheet %10.0f %-7s %5.0f%%  %s (%.0f us x "
                "%d)%s%s\n",
                r.label.c_str(), r.best, r.median, r.datasheet, r.unit.c_str(),
                r.datasheet > 0 ? 100 * r.best / r.datasheet : 0.0, r.kernel.c_str(), r.launch_us,
                r.samples, r.skipped.empty() ? "" : "  skipped: ", r.skipped.c_str());
  for (auto& r : s.variants)
    std::printf("  variant %-22s best %8.0f  median %8.0f GB/s (%.0f us x %d)\n", r.kernel.c_str(),
                r.best, r.median, r.launch_us, r.samples);

  const int cc = s.device.cc_major * 10 + s.device.cc_minor;
  for (auto& r : s.results) {
    CAPTURE(r.label);
    CAPTURE(r.skipped);
    if (r.metric.find("wgmma") != std::string::npos && cc != 90) continue; // sm_90a only
    if (r.metric.find("mma") != std::string::npos && cc < 80) continue;
    REQUIRE(r.ok());
    if (r.model_parameter) {
      // Latencies and rates of the performance model: the best of a few runs (times: least).
      CHECK(r.samples >= 1);
      CHECK(std::isfinite(r.median));
    } else {
      CHECK(r.median <= r.best * (1 + 1e-9)); // throughputs: the median is no faster than the best
      CHECK(r.samples >= 5);
    }
    // sm_90 has no FP8 mma.sync: ptxas emits 2 f16 HMMA and 4 FADD for each, so against the
    // (wgmma) FP8 datasheet it lands near a fifth; checked against f16 mma.sync below instead.
    const bool emulated_fp8 = cc == 90 && r.metric == wb::metric::mma_e4m3;
    if (r.datasheet > 0 && !emulated_fp8) {
      CHECK(r.best >= 0.5 * r.datasheet);
      CHECK(r.best <= 1.05 * r.datasheet);
    }
  }
  const wb::ProbeResult* dram = s.find(wb::metric::dram_read);
  const wb::ProbeResult* l2 = s.find(wb::metric::l2);
  const wb::ProbeResult* shared = s.find(wb::metric::shared);
  REQUIRE(dram);
  REQUIRE(l2);
  REQUIRE(shared);
  CHECK(l2->best > dram->best);
  CHECK(shared->best > l2->best);
  if (cc == 90) {
    // The FP8 probe times the mma itself, not a product ptxas hoisted out of its loop (which
    // reads 1.2 PFLOP/s, 1.86x f16): on Hopper it is the emulated path, at
    // most the f16 rate and measured at 0.54 of it on our H200.
    const wb::ProbeResult* fp8 = s.find(wb::metric::mma_e4m3);
    const wb::ProbeResult* f16 = s.find(wb::metric::mma_f16);
    REQUIRE(fp8);
    REQUIRE(f16);
    CHECK(fp8->best <= 1.05 * f16->best);
    CHECK(fp8->best >= 0.3 * f16->best);
  }
  if (s.profile == "h200") {
    // Warpbook's targets for the H200 and its time budget: warnings, not failures, because the
    // DRAM one sits within 1% of what this part gives (4.30 to 4.31 TB/s seen on three machines).
    WARN(s.find(wb::metric::fp32)->best >= 63000);
    WARN(s.find(wb::metric::mma_f16)->best >= 600000);
    WARN(s.find(wb::metric::wgmma_bf16)->best >= 700000);
    const double rw =
        std::max(s.find(wb::metric::dram_copy)->best, s.find(wb::metric::dram_triad)->best);
    WARN(rw >= 4300);
    WARN(s.total_ms <= 3000);
  }

  // Kept per UUID and driver; a timed check then scores against them.
  TempDir dir;
  auto ceilings = wb::suite_ceilings(s);
  wb::Store::open(wb::Store::default_path(dir.path.string()))->save_ceilings(s.device, ceilings);
  wb::Ceilings c = wb::device_ceilings(s.device, "f32", dir.path.string());
  CHECK(c.source == "measured");
  double best_stream = 0;
  for (auto* m : {wb::metric::dram_read, wb::metric::dram_copy, wb::metric::dram_triad})
    best_stream = std::max(best_stream, s.find(m)->best);
  CHECK(c.dram_gbps == best_stream);
  bool has_dram = false;
  for (auto& m : ceilings) has_dram |= m.metric == wb::metric::dram;
  CHECK(has_dram);

  wb::Catalog cat = wb::load_catalog(wb::default_catalog_root());
  const wb::Puzzle* p = cat.find_puzzle("01");
  REQUIRE(p);
  std::ifstream in(p->solution);
  std::stringstream src;
  src << in.rdbuf();
  auto backend = gpu::backend();
  wb::CheckOptions opt;
  opt.data_dir = dir.path.string();
  wb::CheckReport r = wb::check_puzzle(*p, src.str(), p->solution.string(), *backend, opt);
  REQUIRE(r.verdict == wb::Verdict::passed);
  REQUIRE(r.perf);
  CHECK(r.perf->ceiling_source == "measured");
  CHECK(r.perf->dram_ceiling_gbps == c.dram_gbps);
  std::printf(
      "01 solution against the measured roofs: %.1f us, %.0f GB/s, %.0f%% of speed of light %s\n",
      r.perf->timing.median_us, r.perf->gbps, 100 * r.perf->speed_of_light, r.perf->medal.c_str());
  CHECK(r.perf->speed_of_light > 0.5);
}
