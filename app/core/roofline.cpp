#include "roofline.hpp"

#include "puzzle.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

namespace wb {

// Dense peak figures from the vendors' datasheets (boost clock). Tensor figures are without
// sparsity. GFLOP/s; DRAM GB/s.
const std::vector<GpuProfile>& gpu_profiles() {
  static const std::vector<GpuProfile> k = {
      {"h200", "NVIDIA H200 SXM", 4800, 60, 132, 1980, 67000, 67000, 989000, 989000, 494000, 1979000, 1979000,
       "NVIDIA H200 Tensor Core GPU datasheet (2024): 4.8 TB/s HBM3e; FP32 67 TF; BF16/FP16 989 TF dense"},
      {"h100-sxm", "NVIDIA H100 SXM", 3350, 50, 132, 1980, 67000, 67000, 989000, 989000, 494000, 1979000, 1979000,
       "NVIDIA H100 Tensor Core GPU datasheet (2023), SXM5 80 GB: 3.35 TB/s; BF16 989 TF dense"},
      {"a100-80gb", "NVIDIA A100 80GB SXM", 2039, 40, 108, 1410, 19500, 19500, 312000, 312000, 156000, 0, 624000,
       "NVIDIA A100 datasheet (2021), 80 GB SXM: 2039 GB/s; FP32 19.5 TF; FP16 312 TF dense"},
      {"a100-40gb", "NVIDIA A100 40GB SXM", 1555, 40, 108, 1410, 19500, 19500, 312000, 312000, 156000, 0, 624000,
       "NVIDIA A100 datasheet (2021), 40 GB SXM: 1555 GB/s"},
      {"l40s", "NVIDIA L40S", 864, 96, 142, 2520, 1431, 91600, 362000, 362000, 183000, 733000, 733000,
       "NVIDIA L40S datasheet (2023): 864 GB/s GDDR6; FP32 91.6 TF; FP16 362 TF dense"},
      {"rtx4090", "NVIDIA GeForce RTX 4090", 1008, 72, 128, 2520, 1290, 82600, 330000, 330000, 82600, 660000, 660000,
       "Ada Lovelace whitepaper (2022), RTX 4090: 1008 GB/s; FP32 82.6 TF; FP16 tensor 330 TF (FP32 acc 165)"},
      {"rtx3090", "NVIDIA GeForce RTX 3090", 936, 6, 82, 1695, 556, 35600, 142000, 142000, 35600, 0, 284000,
       "Ampere GA102 whitepaper (2020), RTX 3090: 936 GB/s; FP32 35.6 TF; FP16 tensor 142 TF"},
      {"l4", "NVIDIA L4", 300, 48, 58, 2040, 490, 30300, 121000, 121000, 60000, 242000, 242000,
       "NVIDIA L4 datasheet (2023): 300 GB/s; FP32 30.3 TF; FP16 121 TF dense"},
      {"t4", "NVIDIA T4", 320, 4, 40, 1590, 254, 8100, 65000, 0, 0, 0, 130000,
       "NVIDIA T4 datasheet (2019): 320 GB/s GDDR6; FP32 8.1 TF; FP16 65 TF"},
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
  std::string n = lower(d.name);
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("h200")) return find_profile("h200");
  if (has("h100")) return find_profile("h100-sxm");
  if (has("a100")) return find_profile(d.memory_bytes > (int64_t(60) << 30) ? "a100-80gb" : "a100-40gb");
  if (has("l40s")) return find_profile("l40s");
  if (has("4090")) return find_profile("rtx4090");
  if (has("3090")) return find_profile("rtx3090");
  if (has(" l4")) return find_profile("l4");
  if (has("t4")) return find_profile("t4");
  return nullptr;
}

double compute_ceiling(const GpuProfile& p, std::string_view precision) {
  if (precision == "f64") return p.fp64_gflops;
  if (precision == "f16") return p.fp16_tc_gflops;
  if (precision == "bf16") return p.bf16_tc_gflops ? p.bf16_tc_gflops : p.fp16_tc_gflops;
  if (precision == "tf32") return p.tf32_tc_gflops;
  if (precision == "fp8") return p.fp8_tc_gflops;
  if (precision == "i8") return p.int8_tc_gops;
  return p.fp32_gflops; // f32, int
}

Ceilings datasheet_ceilings(const GpuProfile& p, std::string_view precision) {
  return {p.dram_gbps, compute_ceiling(p, precision), fmt::format("datasheet {}", p.name)};
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
  if (r.speed_of_light >= p.gold) r.medal = "gold";
  else if (r.speed_of_light >= p.silver) r.medal = "silver";
  else if (r.speed_of_light >= p.bronze) r.medal = "bronze";
  if (c.dram_gbps > 0 && r.gbps > 1.05 * c.dram_gbps)
    r.flags.push_back(fmt::format("{:.0f} GB/s is above the DRAM roof ({:.0f} GB/s): either [cost] bytes "
                                  "overstates the traffic or the data came from the L2 cache",
                                  r.gbps, c.dram_gbps));
  if (c.compute_gflops > 0 && r.gflops > 1.05 * c.compute_gflops)
    r.flags.push_back(fmt::format("{:.0f} GFLOP/s is above the compute roof ({:.0f}): is [cost] flops right?",
                                  r.gflops, c.compute_gflops));
}

} // namespace wb
