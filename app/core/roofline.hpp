// Ceilings and the speed of light. Datasheet figures come from a table of real GPUs; measured ones
// (warpbook probe) replace them where the store has them for this device.
#pragma once
#include "backend.hpp"
#include "report.hpp"

#include <optional>
#include <string>
#include <vector>

namespace wb {

struct Puzzle;

struct GpuProfile {
  std::string key;  // "h200"
  std::string name; // "NVIDIA H200 SXM"
  double dram_gbps = 0;
  double l2_mib = 0;
  int sm_count = 0;
  double boost_mhz = 0;
  double fp64_gflops = 0, fp32_gflops = 0;
  double fp16_tc_gflops = 0, bf16_tc_gflops = 0, tf32_tc_gflops = 0; // dense
  double fp8_tc_gflops = 0, int8_tc_gops = 0;                         // dense, 0 where absent
  std::string source; // where the figures come from
};

const std::vector<GpuProfile>& gpu_profiles();
const GpuProfile* find_profile(std::string_view key_or_name);
// The profile that matches a device's name ("NVIDIA H200" -> h200), or nullptr.
const GpuProfile* profile_for_device(const DeviceInfo& d);

struct Ceilings {
  double dram_gbps = 0;
  double compute_gflops = 0; // for the precision asked for
  std::string source;        // "datasheet H200" / "measured"
};
// Compute ceiling for a puzzle's [cost] precision: f32 -> FP32 FMA, f16/bf16/tf32/fp8/i8 ->
// tensor cores, f64 -> FP64.
double compute_ceiling(const GpuProfile& p, std::string_view precision);
Ceilings datasheet_ceilings(const GpuProfile& p, std::string_view precision);

// Fills bytes, flops, GB/s, GFLOP/s, intensity, speed of light, the bound, the medal and flags of
// a timed perf report, given the ceilings.
void score_perf(PerfReport& r, const Puzzle& p, const Ceilings& c);

} // namespace wb
