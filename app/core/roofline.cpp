#include "roofline.hpp"

#include "format_figure.hpp"

#include "puzzle.hpp"
#include "store.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

namespace wb {

// Dense peak figures from the vendors' datasheets and architecture whitepapers (boost clock).
// Tensor figures are without sparsity and with FP32 accumulation. GFLOP/s (GOP/s for INT8);
// DRAM in GB/s (10^9 bytes); L2 in MiB as the device reports it. Where a datasheet omits a figure
// the comment says how it was derived.
const std::vector<GpuProfile>& gpu_profiles() {
  // Fields: key, name, DRAM GB/s, L2 MiB, SMs, boost MHz, FP64, FP32, FP16 TC, BF16 TC, TF32 TC,
  // FP8 TC, INT8 TC, FP64 TC, source.
  static const std::vector<GpuProfile> k = {
      {"h200", "NVIDIA H200 SXM", 4800, 60, 132, 1980, 34000, 67000, 989000, 989000, 494000,
       1979000, 1979000, 67000,
       "NVIDIA H200 Tensor Core GPU datasheet (2024), SXM: 4.8 TB/s HBM3e, 141 GB; FP64 34 TF "
       "(tensor 67); FP32 67 TF; TF32 989, BF16/FP16 1979, FP8/INT8 3958 with sparsity (half "
       "that dense). Same GH100 compute as the H100 SXM; the device reports 60 MiB of L2"},
      {"h100-sxm", "NVIDIA H100 SXM", 3350, 50, 132, 1980, 34000, 67000, 989000, 989000, 494000,
       1979000, 1979000, 67000,
       "NVIDIA H100 Tensor Core GPU datasheet (2023), SXM5 80 GB: 3.35 TB/s HBM3; FP64 34 TF "
       "(tensor 67); FP32 67 TF; BF16/FP16 989 TF dense; FP8/INT8 1979 dense; 50 MB L2 (H100 "
       "whitepaper)"},
      {"a100-80gb", "NVIDIA A100 80GB SXM", 2039, 40, 108, 1410, 9700, 19500, 312000, 312000,
       156000, 0, 624000, 19500,
       "NVIDIA A100 datasheet (2021), 80 GB SXM: 2039 GB/s HBM2e; FP64 9.7 TF (tensor 19.5); "
       "FP32 19.5 TF; TF32 156, BF16/FP16 312, INT8 624 dense; 40 MB L2 (A100 whitepaper)"},
      {"a100-40gb", "NVIDIA A100 40GB SXM", 1555, 40, 108, 1410, 9700, 19500, 312000, 312000,
       156000, 0, 624000, 19500,
       "NVIDIA A100 datasheet (2021), 40 GB SXM: 1555 GB/s HBM2; otherwise as the 80 GB part"},
      {"l40s", "NVIDIA L40S", 864, 96, 142, 2520, 1431, 91600, 362000, 362000, 183000, 733000,
       733000, 0,
       "NVIDIA L40S datasheet (2023): 864 GB/s GDDR6; FP32 91.6 TF; TF32 183, BF16/FP16 362, "
       "FP8/INT8 733 dense (half the sparse figures); FP64 not listed: 1/64 of FP32 (Ada "
       "whitepaper ratio); 96 MB L2"},
      {"rtx4090", "NVIDIA GeForce RTX 4090", 1008, 72, 128, 2520, 1290, 82600, 165200, 165200,
       82600, 330300, 660600, 0,
       "NVIDIA Ada Lovelace architecture whitepaper (2022), RTX 4090: 1008 GB/s GDDR6X; FP32 82.6 "
       "TF; FP16/BF16 tensor with FP32 accumulate 165.2 dense (330.3 with FP16 accumulate); FP8 "
       "330.3 with FP32 accumulate; INT8 660.6 dense; FP64 1/64 of FP32; 72 MB L2"},
      {"rtx3090", "NVIDIA GeForce RTX 3090", 936, 6, 82, 1695, 556, 35600, 71000, 71000, 35600, 0,
       284000, 0,
       "NVIDIA Ampere GA102 whitepaper (2020), RTX 3090: 936 GB/s GDDR6X; FP32 35.6 TF; "
       "FP16/BF16 tensor with FP32 accumulate 71 dense (142 with FP16 accumulate); TF32 35.6; "
       "INT8 284 dense; FP64 1/64 of FP32; 6 MB L2"},
      {"l4", "NVIDIA L4", 300, 48, 58, 2040, 473, 30300, 121000, 121000, 60000, 242500, 242500, 0,
       "NVIDIA L4 datasheet (2023): 300 GB/s GDDR6; FP32 30.3 TF; TF32 120, BF16/FP16 242, "
       "FP8/INT8 485 with sparsity (half that dense); FP64 not listed: 1/64 of FP32; 48 MB L2"},
      {"t4", "NVIDIA T4", 320, 4, 40, 1590, 254, 8100, 65000, 0, 0, 0, 130000, 0,
       "NVIDIA T4 datasheet (2019): 320 GB/s GDDR6; FP32 8.1 TF; mixed FP16/FP32 tensor 65 TF; "
       "INT8 130 TOPS; no BF16/TF32; FP64 not listed: 1/32 of FP32 (Turing); 4 MB L2"},
  };
  return k;
}

namespace {
std::string lower(std::string_view s) {
  std::string o(s);
  for (auto& c : o) c = char(std::tolower(static_cast<unsigned char>(c)));
  return o;
}
} // namespace

const GpuProfile* find_profile(std::string_view key) {
  std::string k = lower(key);
  for (auto& p : gpu_profiles())
    if (p.key == k || lower(p.name) == k) return &p;
  return nullptr;
}

const GpuProfile* profile_for_device(const DeviceInfo& d) {
  // Whole words of the name, so that "L40" is not taken for an "L4".
  std::vector<std::string> words;
  std::string w;
  for (char c : lower(d.name) + " ") {
    if (std::isalnum(static_cast<unsigned char>(c)))
      w += c;
    else if (!w.empty())
      words.push_back(std::move(w)), w.clear();
  }
  auto has = [&](const char* s) { return std::find(words.begin(), words.end(), s) != words.end(); };
  if (has("h200")) return find_profile("h200");
  if (has("h100")) return find_profile("h100-sxm");
  if (has("a100"))
    return find_profile(has("80gb") || d.memory_bytes > (int64_t(60) << 30) ? "a100-80gb"
                                                                            : "a100-40gb");
  if (has("l40s")) return find_profile("l40s");
  if (has("4090")) return find_profile("rtx4090");
  if (has("3090")) return find_profile("rtx3090");
  if (has("l4")) return find_profile("l4");
  if (has("t4")) return find_profile("t4");
  return nullptr;
}

double datasheet_metric(const GpuProfile& p, std::string_view m) {
  if (m == metric::dram || m == metric::dram_read || m == metric::dram_copy ||
      m == metric::dram_triad || m == metric::dram_write)
    return p.dram_gbps;
  if (m == metric::shared) return p.shared_gbps();
  if (m == metric::fp32) return p.fp32_gflops;
  if (m == metric::fp64) return p.fp64_gflops;
  if (m == metric::fp16_tc || m == metric::mma_f16 || m == metric::wgmma_f16)
    return p.fp16_tc_gflops;
  if (m == metric::bf16_tc || m == metric::mma_bf16 || m == metric::wgmma_bf16)
    return p.bf16_tc_gflops;
  if (m == metric::int8_tc || m == metric::mma_s8) return p.int8_tc_gops;
  if (m == "tf32_tc_gflops") return p.tf32_tc_gflops;
  if (m == "fp8_tc_gflops" || m == metric::mma_e4m3) return p.fp8_tc_gflops;
  return 0; // l2_gbps: NVIDIA publishes no L2 bandwidth
}

std::string compute_metric(std::string_view precision) {
  if (precision == "f64") return metric::fp64;
  if (precision == "f16") return metric::fp16_tc;
  if (precision == "bf16") return metric::bf16_tc;
  if (precision == "tf32") return "tf32_tc_gflops";
  if (precision == "fp8") return "fp8_tc_gflops";
  if (precision == "i8") return metric::int8_tc;
  return metric::fp32; // f32, int
}

std::string metric_unit(std::string_view m) {
  auto ends = [&](std::string_view s) {
    return m.size() >= s.size() && m.substr(m.size() - s.size()) == s;
  };
  if (ends("gbps")) return "GB/s";
  if (ends("gops")) return "GOP/s";
  if (ends("_ns")) return "ns";
  if (ends("_us") && !ends("_per_us")) return "us";
  if (ends("_mib")) return "MiB";
  if (ends("_per_us")) return "/us";
  return "GFLOP/s";
}

double compute_ceiling(const GpuProfile& p, std::string_view precision) {
  if (precision == "bf16" && !p.bf16_tc_gflops) return p.fp16_tc_gflops;
  return datasheet_metric(p, compute_metric(precision));
}

Ceilings datasheet_ceilings(const GpuProfile& p, std::string_view precision) {
  Ceilings c;
  c.dram_gbps = p.dram_gbps;
  c.compute_gflops = compute_ceiling(p, precision);
  c.source = fmt::format("datasheet {}", p.name);
  return c;
}

Ceilings merge_ceilings(const std::vector<MeasuredCeiling>& measured, const GpuProfile* p,
                        std::string_view precision) {
  Ceilings c = p ? datasheet_ceilings(*p, precision) : Ceilings{};
  const std::string cm = compute_metric(precision);
  for (auto& m : measured) {
    if (m.value <= 0) continue;
    if (m.metric == metric::dram) c.dram_gbps = m.value, c.dram_measured = true;
    if (m.metric == cm) c.compute_gflops = m.value, c.compute_measured = true;
  }
  if (c.dram_measured && c.compute_measured)
    c.source = "measured";
  else if (c.dram_measured)
    c.source = p ? fmt::format("measured DRAM, datasheet compute ({})", p->name) : "measured DRAM";
  else if (c.compute_measured)
    c.source =
        p ? fmt::format("measured compute, datasheet DRAM ({})", p->name) : "measured compute";
  return c;
}

Ceilings device_ceilings(const DeviceInfo& d, std::string_view precision,
                         const std::string& data_dir) {
  const GpuProfile* prof = profile_for_device(d);
  std::vector<MeasuredCeiling> measured;
  if (!d.uuid.empty()) {
    try {
      fs::path db = Store::default_path(data_dir);
      std::error_code ec;
      // Never create a database just to look: a learner who never probed has none.
      if (fs::exists(db, ec)) measured = Store::open(db)->ceilings(d.uuid, d.driver);
    } catch (const std::exception&) {
      // An unreadable store leaves the datasheet figures; the check itself must go on.
    }
  }
  return merge_ceilings(measured, prof, precision);
}

std::vector<CeilingRow> ceiling_rows(const std::vector<MeasuredCeiling>& measured,
                                     const GpuProfile* p) {
  static const std::pair<const char*, const char*> kRows[] = {
      {metric::dram, "DRAM (best stream)"},
      {metric::dram_read, "  DRAM read"},
      {metric::dram_copy, "  DRAM copy"},
      {metric::dram_triad, "  DRAM triad"},
      {metric::l2, "L2"},
      {metric::l2_bulk, "  L2 by the copy engine (TMA)"},
      {metric::shared, "shared memory"},
      {metric::fp32, "FP32"},
      {metric::fp64, "FP64"},
      {metric::fp16_tc, "FP16 tensor (best)"},
      {metric::mma_f16, "  FP16 mma.sync"},
      {metric::wgmma_f16, "  FP16 wgmma"},
      {metric::bf16_tc, "BF16 tensor (best)"},
      {metric::mma_bf16, "  BF16 mma.sync"},
      {metric::wgmma_bf16, "  BF16 wgmma"},
      {"tf32_tc_gflops", "TF32 tensor"},
      {"fp8_tc_gflops", "FP8 tensor"},
      {metric::mma_e4m3, "  FP8 mma.sync"},
      {metric::int8_tc, "INT8 tensor (best)"},
      {metric::mma_s8, "  INT8 mma.sync"},
      // The performance model's parameters (probe.cpp, "machine probes").
      {metric::dram_write, "DRAM write stream"},
      {metric::dram_sector_read, "DRAM reads, 1 sector per 128 B"},
      {metric::dram_sector_read_64, "DRAM reads, 1 sector per 64 B"},
      {metric::dram_sector_write, "DRAM writes, 4 B per 128 B"},
      {metric::l1_latency, "L1 hit latency"},
      {metric::l2_latency, "L2 hit latency"},
      {metric::dram_latency, "DRAM latency"},
      {metric::shared_latency, "shared memory latency"},
      {metric::atomic_latency, "atomic latency (L2)"},
      {metric::l2_capacity, "L2 effective capacity"},
      {metric::atomic_one, "atomics, one address"},
      {metric::atomic_one_u32, "u32 atomics, one address"},
      {metric::atomic_one_lane, "atomics, one address, one lane a warp"},
      {metric::atomic_warp, "atomics, one address per warp"},
      {metric::atomic_spread, "atomics, spread over the L2"},
      {metric::atomic_shared_one, "shared atomics, one address per block"},
      {metric::atomic_shared_u32_one, "shared u32 atomics, one word per block"},
      {metric::atomic_shared_u32_spread, "shared u32 atomics, a word per lane"},
      {metric::atomic_shared_u32_warp, "shared u32 atomics, one word per warp"},
      {metric::atomic_warp_f32, "float atomics, one word per warp"},
      {metric::atomic_row_f32, "float atomics, one word per block"},
      {metric::atomic_shared_f32_warp, "shared float atomics, one word per warp"},
      {metric::dram_mlp_2k, "DRAM read, 2 KiB in flight per SM"},
      {metric::dram_mlp_4k, "DRAM read, 4 KiB in flight per SM"},
      {metric::dram_mlp_8k, "DRAM read, 8 KiB in flight per SM"},
      {metric::dram_mlp_16k, "DRAM read, 16 KiB in flight per SM"},
      {metric::dram_mlp_32k, "DRAM read, 32 KiB in flight per SM"},
      {metric::dram_mlp_64k, "DRAM read, 64 KiB in flight per SM"},
      {metric::dram_mlp_128k, "DRAM read, 128 KiB in flight per SM"},
      {metric::l2_sector_read, "L2 sector reads (G/s)"},
      {metric::l2_sector_write, "L2 sector writes (G/s)"},
      {metric::l2_write, "L2 write"},
      {metric::seq_read_ns, "one thread streaming, per 64 bytes"},
      {metric::block_turnover, "block turnover, one at a time per SM"},
      {metric::launch, "kernel launch (alone)"},
      {metric::launch_gap, "kernel launch (back to back)"},
      {metric::block_rate_32, "block dispatch, 32 threads"},
      {metric::block_rate_256, "block dispatch, 256 threads"},
      {metric::block_rate_1024, "block dispatch, 1024 threads"},
  };
  std::vector<CeilingRow> out;
  for (auto [m, label] : kRows) {
    CeilingRow r;
    r.metric = m;
    r.label = label;
    r.unit = metric_unit(m);
    if (p) r.datasheet = datasheet_metric(*p, m);
    for (auto& c : measured)
      if (c.metric == m) r.measured = c.value, r.median = c.median, r.measured_at = c.measured_at;
    if (r.measured > 0 || r.datasheet > 0) out.push_back(std::move(r));
  }
  return out;
}

std::string rate_text(double v, std::string_view unit) {
  if (!(v > 0)) return "-";
  if (unit == "ns" || unit == "us" || unit == "MiB" || unit == "/us")
    return fmt::format("{} {}", sig3(v), unit);
  // GB/s, GOP/s, GFLOP/s: the SI prefix that keeps three digits (core/format_figure.hpp).
  if (unit.size() > 1 && unit[0] == 'G') return si(v * 1e9, unit.substr(1));
  return fmt::format("{} {}", sig3(v), unit);
}

double ridge_point(double compute_gflops, double memory_gbps) {
  return memory_gbps > 0 ? compute_gflops / memory_gbps : 0;
}

double attainable_gflops(double intensity, double memory_gbps, double compute_gflops) {
  return std::min(compute_gflops, memory_gbps * intensity);
}

std::string si_number(double v) {
  static const char* prefix[] = {"", "k", "M", "G", "T", "P", "E"};
  int k = 0;
  double a = std::fabs(v);
  while (a >= 1000 && k < 6) a /= 1000, v /= 1000, ++k;
  return sig3(v) + prefix[k];
}

std::pair<double, double> decade_range(double lo, double hi) {
  if (!(lo > 0)) lo = 1;
  if (!(hi > lo)) hi = lo * 10;
  // A hair of slack so that 1000 stays 1000 and does not round to the next decade.
  double l = std::floor(std::log10(lo) + 1e-9), h = std::ceil(std::log10(hi) - 1e-9);
  if (h <= l) h = l + 1;
  return {std::pow(10.0, l), std::pow(10.0, h)};
}

std::vector<Tick> log_ticks(double lo, double hi, bool si) {
  std::vector<Tick> out;
  if (!(lo > 0) || !(hi > lo)) return out;
  auto label = [&](double v) {
    if (si) return si_number(v);
    if (v >= 1) return fmt::format("{:.0f}", v);
    return sig3(v);
  };
  const bool few = std::log10(hi / lo) < 2.0 + 1e-9;
  for (int e = int(std::floor(std::log10(lo) + 1e-9)); e <= int(std::ceil(std::log10(hi))); ++e) {
    double dec = std::pow(10.0, e);
    for (int m = 1; m <= 9; ++m) {
      double v = m * dec;
      if (v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9)) continue;
      Tick t;
      t.value = v;
      t.major = m == 1;
      if (t.major || (few && (m == 2 || m == 5))) t.label = label(v);
      out.push_back(std::move(t));
    }
  }
  return out;
}

void score_perf(PerfReport& r, const Puzzle& p, const Ceilings& c) {
  Env env = r.sizes;
  for (auto& t : p.tunables) env.emplace(t.name, t.default_value);
  r.bytes = double(p.cost_bytes.eval(env));
  r.flops = p.cost_flops.empty() ? 0 : double(p.cost_flops.eval(env));
  r.intensity = r.bytes > 0 ? r.flops / r.bytes : 0;
  r.dram_ceiling_gbps = c.dram_gbps;
  r.compute_ceiling_gflops = c.compute_gflops;
  r.ceiling_source = c.source;
  double t_us = r.timing.median_us;
  if (!r.timing.ok || t_us <= 0) return;
  r.gbps = r.bytes / (t_us * 1e3);
  r.gflops = r.flops / (t_us * 1e3);
  // The least time the hardware allows, over the time taken.
  double t_mem = c.dram_gbps > 0 ? r.bytes / (c.dram_gbps * 1e3) : 0;
  double t_cmp = c.compute_gflops > 0 ? r.flops / (c.compute_gflops * 1e3) : 0;
  r.bound = t_cmp > t_mem ? "compute" : "memory";
  r.speed_of_light = std::max(t_mem, t_cmp) / t_us;
  if (r.speed_of_light >= p.gold)
    r.medal = "gold";
  else if (r.speed_of_light >= p.silver)
    r.medal = "silver";
  else if (r.speed_of_light >= p.bronze)
    r.medal = "bronze";
  // 5% of slack: a measured roof is itself a median of noisy samples.
  if (c.dram_gbps > 0 && r.gbps > 1.05 * c.dram_gbps)
    r.flags.push_back(fmt::format("{:.0f} GB/s is above the DRAM roof ({:.0f} GB/s): either "
                                  "[cost] bytes overstates the traffic or the data came from the "
                                  "L2 cache",
                                  r.gbps, c.dram_gbps));
  if (c.compute_gflops > 0 && r.gflops > 1.05 * c.compute_gflops)
    r.flags.push_back(fmt::format("{:.0f} GFLOP/s is above the compute roof ({:.0f}): is [cost] "
                                  "flops right, or does [cost] precision name the wrong unit?",
                                  r.gflops, c.compute_gflops));
}

const GpuProfile& model_profile(const DeviceInfo& sim_device) {
  if (const GpuProfile* p = profile_for_device(sim_device)) return *p;
  return *find_profile("h200");
}

} // namespace wb
