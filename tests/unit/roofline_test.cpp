// The roofline arithmetic: GPU profiles, ridge points, log-axis ticks, speed of light, medals and
// flags, measured-over-datasheet ceilings, and the simulator's predicted point.
#include "common/temp_dir.hpp"
#include "core/perf/machine.hpp"
#include "core/perf/predict.hpp"
#include "core/puzzle.hpp"
#include "core/roofline.hpp"
#include "core/store.hpp"

#include <doctest/doctest.h>
#include <set>
#include <unistd.h>

using namespace wb;

namespace {

Puzzle vector_add_puzzle() {
  Puzzle p;
  p.id = "01-vector-add";
  p.cost_bytes = Expr::parse("12 * n");
  p.cost_flops = Expr::parse("n");
  p.cost_precision = "f32";
  p.bronze = 0.5, p.silver = 0.7, p.gold = 0.85;
  return p;
}

PerfReport timed(int64_t n, double median_us) {
  PerfReport r;
  r.sizes = {{"n", n}};
  r.timing.ok = true;
  r.timing.median_us = median_us;
  return r;
}

using test::TempDir;

} // namespace

TEST_CASE("every GPU profile says which of the model's figures are measured, and how far it is") {
  const std::set<std::string> origins = {
      "measured", "measured on the H200", "documented", "datasheet", "paper", "scaled", "estimate"};
  for (auto& p : gpu_profiles()) {
    CAPTURE(p.key);
    const perf::ProfileEvidence& e = perf::profile_evidence(p.key);
    CHECK(e.key == p.key); // each profile has its own row, not the fallback
    CHECK(e.groups.size() >= 8);
    for (auto& g : e.groups) {
      CAPTURE(g.name);
      CHECK(origins.count(g.origin));
      CHECK(g.source.size() > 5);
    }
    CHECK(e.validated == (p.key == "h200" || p.key == "h100-sxm"));
    CHECK(e.accuracy.find(e.validated ? "Validated on" : "Not validated") == 0);
    const std::string text = perf::origins_text(e);
    for (auto& g : e.groups) CHECK(text.find(g.name) != std::string::npos);
  }
  CHECK(perf::profile_evidence("no-such-gpu").key.empty());
  CHECK_FALSE(perf::profile_evidence("no-such-gpu").validated);
}

TEST_CASE("every GPU profile is complete and says where its figures come from") {
  REQUIRE(gpu_profiles().size() >= 9);
  for (auto& p : gpu_profiles()) {
    CAPTURE(p.key);
    CHECK(!p.name.empty());
    CHECK(p.dram_gbps > 0);
    CHECK(p.l2_mib > 0);
    CHECK(p.sm_count > 0);
    CHECK(p.boost_mhz > 0);
    CHECK(p.fp32_gflops > 0);
    CHECK(p.fp64_gflops > 0);
    CHECK(p.fp16_tc_gflops > p.fp32_gflops); // tensor cores beat CUDA cores everywhere
    CHECK(p.int8_tc_gops >= p.fp16_tc_gflops);
    CHECK(p.source.size() > 20);
    CHECK(find_profile(p.key) == &p);
    CHECK(find_profile(p.name) == &p);
  }
  // The H200 is an H100 with faster memory.
  const GpuProfile* h200 = find_profile("h200");
  const GpuProfile* h100 = find_profile("H100-SXM");
  REQUIRE(h200);
  REQUIRE(h100);
  CHECK(h200->dram_gbps == 4800);
  CHECK(h100->dram_gbps == 3350);
  CHECK(h200->fp32_gflops == h100->fp32_gflops);
  CHECK(h200->bf16_tc_gflops == 989000);
  CHECK(h200->fp64_gflops == 34000); // CUDA cores; the 67 TF is DMMA
  CHECK(h200->fp64_tc_gflops == 67000);
  // FP32 peak = SMs x 128 lanes x 2 x boost clock.
  CHECK(h200->sm_count * 128 * 2 * h200->boost_mhz * 1e-3 ==
        doctest::Approx(h200->fp32_gflops).epsilon(0.01));
  CHECK(h200->shared_gbps() == doctest::Approx(132 * 128 * 1.98));
  CHECK(find_profile("no-such-gpu") == nullptr);
}

TEST_CASE("a device name finds its profile") {
  auto for_name = [](const char* name, int64_t mem_gib = 0) {
    DeviceInfo d;
    d.name = name;
    d.memory_bytes = mem_gib << 30;
    const GpuProfile* p = profile_for_device(d);
    return p ? p->key : std::string("none");
  };
  CHECK(for_name("NVIDIA H200") == "h200");
  CHECK(for_name("NVIDIA H100 80GB HBM3") == "h100-sxm");
  CHECK(for_name("NVIDIA A100-SXM4-40GB", 40) == "a100-40gb");
  CHECK(for_name("NVIDIA A100-SXM4-80GB", 80) == "a100-80gb");
  CHECK(for_name("NVIDIA L40S") == "l40s");
  CHECK(for_name("NVIDIA L4") == "l4");
  CHECK(for_name("NVIDIA L40") == "none"); // not an L4
  CHECK(for_name("Tesla T4") == "t4");
  CHECK(for_name("NVIDIA GeForce RTX 4090") == "rtx4090");
  CHECK(for_name("NVIDIA GeForce RTX 3090") == "rtx3090");
  CHECK(for_name("PTX simulator") == "none");
  CHECK(model_profile(DeviceInfo{}).key == "h200");
}

TEST_CASE("metrics name their ceilings and units") {
  const GpuProfile& h = *find_profile("h200");
  CHECK(compute_metric("f32") == metric::fp32);
  CHECK(compute_metric("bf16") == metric::bf16_tc);
  CHECK(compute_metric("f64") == metric::fp64);
  CHECK(compute_metric("i8") == metric::int8_tc);
  CHECK(datasheet_metric(h, metric::dram_triad) == 4800);
  CHECK(datasheet_metric(h, metric::wgmma_bf16) == 989000);
  CHECK(datasheet_metric(h, metric::mma_s8) == 1979000);
  CHECK(datasheet_metric(h, metric::mma_e4m3) == 1979000); // dense FP8
  CHECK(datasheet_metric(h, metric::l2) == 0);             // unpublished
  CHECK(metric_unit(metric::dram) == "GB/s");
  CHECK(metric_unit(metric::int8_tc) == "GOP/s");
  CHECK(metric_unit(metric::fp32) == "GFLOP/s");
  CHECK(compute_ceiling(h, "f16") == 989000);
  CHECK(compute_ceiling(*find_profile("t4"), "bf16") == 65000); // no BF16: the FP16 rate
  CHECK(rate_text(4410, "GB/s") == "4.41 TB/s");
  CHECK(rate_text(66200, "GFLOP/s") == "66.2 TFLOP/s");
  CHECK(rate_text(512, "GB/s") == "512 GB/s");
  CHECK(rate_text(0, "GB/s") == "-");
  CHECK(rate_text(1979000, "GOP/s") == "1.98 POP/s");
}

TEST_CASE("ridge points and the attainable bound") {
  CHECK(ridge_point(67000, 4800) == doctest::Approx(13.958).epsilon(1e-3));
  CHECK(ridge_point(989000, 4800) == doctest::Approx(206.04).epsilon(1e-3));
  CHECK(ridge_point(1, 0) == 0);
  // Left of the ridge the bandwidth bounds; right of it the peak.
  CHECK(attainable_gflops(1.0, 4800, 67000) == 4800);
  CHECK(attainable_gflops(100.0, 4800, 67000) == 67000);
  CHECK(attainable_gflops(ridge_point(67000, 4800), 4800, 67000) == doctest::Approx(67000));
}

TEST_CASE("log-axis ticks") {
  auto [lo, hi] = decade_range(0.083, 206);
  CHECK(lo == doctest::Approx(0.01));
  CHECK(hi == doctest::Approx(1000));
  auto [lo2, hi2] = decade_range(1, 1000); // whole decades stay
  CHECK(lo2 == doctest::Approx(1));
  CHECK(hi2 == doctest::Approx(1000));

  auto t = log_ticks(0.01, 1000);
  std::vector<std::string> majors;
  int minors = 0;
  for (auto& k : t) {
    if (k.major)
      majors.push_back(k.label);
    else {
      ++minors;
      CHECK(k.label.empty()); // five decades: minors unlabelled
    }
  }
  CHECK(majors == std::vector<std::string>{"0.01", "0.1", "1", "10", "100", "1000"});
  CHECK(minors == 5 * 8);
  for (size_t i = 1; i < t.size(); ++i) CHECK(t[i].value > t[i - 1].value);

  // Two decades or fewer: 2 and 5 get labels too.
  int labelled = 0;
  for (auto& k : log_ticks(1, 100))
    if (!k.label.empty()) ++labelled;
  CHECK(labelled == 3 + 4); // 1 10 100, and 2 5 20 50

  auto si = log_ticks(1e10, 1e16, true);
  std::vector<std::string> si_majors;
  for (auto& k : si)
    if (k.major) si_majors.push_back(k.label);
  CHECK(si_majors == std::vector<std::string>{"10G", "100G", "1T", "10T", "100T", "1P", "10P"});
  CHECK(si_number(4.8e12) == "4.8T");
  CHECK(si_number(950) == "950");
  CHECK(log_ticks(0, 10).empty());
  CHECK(log_ticks(10, 1).empty());
}

TEST_CASE("speed of light, bound and medal of a timed run") {
  Puzzle p = vector_add_puzzle();
  Ceilings c{4000, 60000, "test", true, true};
  const int64_t n = 1000000; // 12 MB, 1 MFLOP: 3 us at 4000 GB/s

  PerfReport r = timed(n, 4.0);
  score_perf(r, p, c);
  CHECK(r.bytes == 12e6);
  CHECK(r.flops == 1e6);
  CHECK(r.intensity == doctest::Approx(1.0 / 12));
  CHECK(r.gbps == doctest::Approx(3000));
  CHECK(r.gflops == doctest::Approx(250));
  CHECK(r.bound == "memory");
  CHECK(r.speed_of_light == doctest::Approx(0.75));
  CHECK(r.medal == "silver");
  CHECK(r.flags.empty());
  CHECK(r.ceiling_source == "test");

  PerfReport gold = timed(n, 3.2);
  score_perf(gold, p, c);
  CHECK(gold.medal == "gold");
  PerfReport none = timed(n, 10);
  score_perf(none, p, c);
  CHECK(none.medal == "");
  CHECK(none.speed_of_light == doctest::Approx(0.3));

  // Faster than the DRAM allows: flagged, with the likely causes.
  PerfReport fast = timed(n, 2.0);
  score_perf(fast, p, c);
  CHECK(fast.speed_of_light == doctest::Approx(1.5));
  REQUIRE(fast.flags.size() == 1);
  CHECK(fast.flags[0].find("above the DRAM roof") != std::string::npos);
  CHECK(fast.flags[0].find("L2") != std::string::npos);

  // A compute-bound cost: the compute roof decides, and a point over it is flagged.
  Puzzle mm = p;
  mm.cost_flops = Expr::parse("n * 1000");
  PerfReport m = timed(n, 20);
  score_perf(m, mm, c);
  CHECK(m.bound == "compute");
  CHECK(m.speed_of_light == doctest::Approx((1e9 / 60000e3) / 20));
  PerfReport over = timed(n, 10);
  score_perf(over, mm, c);
  bool compute_flag = false;
  for (auto& f : over.flags) compute_flag |= f.find("compute roof") != std::string::npos;
  CHECK(compute_flag);

  // Untimed: the cost is still filled in, nothing else.
  PerfReport untimed;
  untimed.sizes = {{"n", n}};
  score_perf(untimed, p, c);
  CHECK(untimed.bytes == 12e6);
  CHECK(untimed.speed_of_light == 0);
  CHECK(untimed.medal.empty());
}

TEST_CASE("measured ceilings replace the datasheet's") {
  const GpuProfile* h = find_profile("h200");
  Ceilings d = merge_ceilings({}, h, "f32");
  CHECK(d.dram_gbps == 4800);
  CHECK(d.compute_gflops == 67000);
  CHECK(!d.dram_measured);
  CHECK(d.source.find("datasheet") == 0);

  std::vector<MeasuredCeiling> m = {{metric::dram, 4410, 4380, "GB/s"},
                                    {metric::fp32, 64500, 64000, "GFLOP/s"},
                                    {metric::bf16_tc, 800000, 790000, "GFLOP/s"}};
  Ceilings f32 = merge_ceilings(m, h, "f32");
  CHECK(f32.dram_gbps == 4410);
  CHECK(f32.compute_gflops == 64500);
  CHECK(f32.source == "measured");
  Ceilings f16 = merge_ceilings(m, h, "f16"); // fp16_tc not measured
  CHECK(f16.dram_gbps == 4410);
  CHECK(f16.compute_gflops == 989000);
  CHECK(f16.dram_measured);
  CHECK(!f16.compute_measured);
  CHECK(f16.source.find("measured DRAM, datasheet compute") == 0);
  Ceilings unknown = merge_ceilings(m, nullptr, "f64");
  CHECK(unknown.dram_gbps == 4410);
  CHECK(unknown.compute_gflops == 0);

  auto rows = ceiling_rows(m, h);
  REQUIRE(!rows.empty());
  CHECK(rows[0].metric == metric::dram);
  CHECK(rows[0].measured == 4410);
  CHECK(rows[0].median == 4380);
  CHECK(rows[0].datasheet == 4800);
  bool l2_listed = false;
  for (auto& r : rows) l2_listed |= r.metric == metric::l2;
  CHECK(!l2_listed); // neither measured nor in the datasheet
}

TEST_CASE("a timed check finds the ceilings probed on its device and driver") {
  TempDir dir;
  DeviceInfo d;
  d.backend = "cuda";
  d.name = "NVIDIA H200";
  d.uuid = "GPU-00000000-1111-2222-3333-444444444444";
  d.driver = "13.0";
  // Nothing stored yet (and no database is created by looking).
  Ceilings before = device_ceilings(d, "f32", dir.path.string());
  CHECK(before.dram_gbps == 4800);
  CHECK(!fs::exists(Store::default_path(dir.path.string())));

  Store::open(Store::default_path(dir.path.string()))
      ->save_ceilings(
          d, {{metric::dram, 4400, 4350, "GB/s"}, {metric::fp32, 65000, 64000, "GFLOP/s"}});
  Ceilings after = device_ceilings(d, "f32", dir.path.string());
  CHECK(after.dram_gbps == 4400);
  CHECK(after.compute_gflops == 65000);
  CHECK(after.source == "measured");

  DeviceInfo other_driver = d;
  other_driver.driver = "13.1"; // a new driver: measure again
  CHECK(device_ceilings(other_driver, "f32", dir.path.string()).dram_gbps == 4800);
  DeviceInfo unknown;
  unknown.name = "Some GPU";
  CHECK(device_ceilings(unknown, "f32", dir.path.string()).dram_gbps == 0);
}

TEST_CASE("a prediction scored like a timing, marked predicted") {
  Puzzle p = vector_add_puzzle();
  p.perf = Case{};
  p.perf->sizes = {{"n", 1 << 26}};
  const perf::Machine m = perf::machine_for(*find_profile("h200"));
  perf::Prediction pred;
  pred.ok = true;
  pred.us = 200;
  PerfReport r = perf::predicted_perf(p, pred, m);
  CHECK(r.predicted);
  CHECK(r.timing.ok);
  CHECK(r.timing.method == "predicted");
  CHECK(r.timing.median_us == 200);
  const double n = 1 << 26;
  CHECK(r.bytes == 12 * n);
  CHECK(r.gbps == doctest::Approx(12 * n / 200e3));
  // Scored against the machine's best DRAM stream, as a timed check is after `warpbook probe`.
  CHECK(r.dram_ceiling_gbps ==
        doctest::Approx(std::max({m.dram_read_gbps, m.dram_copy_gbps, m.dram_triad_gbps})));
  CHECK(r.speed_of_light == doctest::Approx(12 * n / (r.dram_ceiling_gbps * 1e3) / 200));
  CHECK(!r.medal.empty()); // 88% of the ceiling: a medal, predicted
  CHECK(r.ceiling_source.find("predicted") != std::string::npos);

  // No prediction, no figures.
  pred.ok = false;
  PerfReport none = perf::predicted_perf(p, pred, m);
  CHECK(!none.timing.ok);
  CHECK(none.speed_of_light == 0);
}
