// Ceilings and the speed of light (DESIGN.md, "Measurement and the roofline").
//
// Datasheet figures come from a table of real GPUs; measured ones (`warpbook probe`, probe.hpp)
// replace them where the store has them for this device and driver. The same table gives the
// simulator its modelled roofline. Everything here is plain arithmetic: the chart (chart.hpp), the
// CLI and the GUI all draw from it.
#pragma once
#include "backend.hpp"
#include "report.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wb {

struct Puzzle;
struct MeasuredCeiling; // store.hpp

struct GpuProfile {
  std::string key;  // "h200"
  std::string name; // "NVIDIA H200 SXM"
  double dram_gbps = 0;
  double l2_mib = 0;
  int sm_count = 0;
  double boost_mhz = 0;
  double fp64_gflops = 0, fp32_gflops = 0; // CUDA cores (FP64 without tensor cores)
  // Tensor cores, dense, with FP32 accumulation (what a kernel that sums in float gets; GeForce
  // parts run half as fast as with FP16 accumulation).
  double fp16_tc_gflops = 0, bf16_tc_gflops = 0, tf32_tc_gflops = 0;
  double fp8_tc_gflops = 0, int8_tc_gops = 0; // dense, 0 where absent
  double fp64_tc_gflops = 0;                  // DMMA, 0 where absent
  std::string source;                         // where the figures come from
  // Shared memory: 128 bytes per clock per SM at the boost clock (every part since Volta).
  double shared_gbps() const { return sm_count * 128.0 * boost_mhz * 1e-3; }
};

const std::vector<GpuProfile>& gpu_profiles();
const GpuProfile* find_profile(std::string_view key_or_name);
// The profile that matches a device's name ("NVIDIA H200" -> h200), or nullptr.
const GpuProfile* profile_for_device(const DeviceInfo& d);

// ---- ceiling names ----------------------------------------------------------------------------
// Metric names used by the probes, the store and the chart. Probes measure the specific ones;
// the generic ones (dram_gbps, fp16_tc_gflops, bf16_tc_gflops, int8_tc_gops) are the best of
// their family and are what a puzzle's speed of light uses.
namespace metric {
inline constexpr const char* dram = "dram_gbps"; // best of read, copy and triad
inline constexpr const char* dram_read = "dram_read_gbps";
inline constexpr const char* dram_copy = "dram_copy_gbps";
inline constexpr const char* dram_triad = "dram_triad_gbps";
inline constexpr const char* l2 = "l2_gbps";
inline constexpr const char* l2_bulk = "l2_bulk_gbps"; // cp.async.bulk into shared memory
inline constexpr const char* shared = "shared_gbps";
inline constexpr const char* fp32 = "fp32_gflops";
inline constexpr const char* fp64 = "fp64_gflops";
inline constexpr const char* fp16_tc = "fp16_tc_gflops"; // best of mma.sync and wgmma
inline constexpr const char* bf16_tc = "bf16_tc_gflops";
inline constexpr const char* int8_tc = "int8_tc_gops";
inline constexpr const char* mma_f16 = "mma_f16_gflops";
inline constexpr const char* mma_bf16 = "mma_bf16_gflops";
inline constexpr const char* mma_s8 = "mma_s8_gops";
// FP8 e4m3 mma.sync (8.9 and later). Reported, not a family best: with no wgmma FP8 probe, an FP8
// speed of light stays the datasheet's (mma.sync alone would understate Hopper's ceiling).
// Not mma_e4m3_gflops: probes stored under that key timed FADDs that ptxas had left in the loop
// after hoisting the mma out (see kernels/probes.cu), so they are not read.
inline constexpr const char* mma_e4m3 = "mma_e4m3_f32acc_gflops";
inline constexpr const char* wgmma_f16 = "wgmma_f16_gflops";
inline constexpr const char* wgmma_bf16 = "wgmma_bf16_gflops";
// The performance model's machine parameters (probe.cpp, "machine probes"); the unit follows the
// name's suffix (metric_unit).
inline constexpr const char* dram_write = "dram_write_gbps";
inline constexpr const char* dram_sector_read = "dram_sector_read_gbps";       // 1 sector per 128 B
inline constexpr const char* dram_sector_read_64 = "dram_sector_read_64_gbps"; // 1 per 64 B
inline constexpr const char* dram_sector_write = "dram_sector_write_gbps";     // 4 B per 128 B line
inline constexpr const char* l1_latency = "l1_latency_ns";
inline constexpr const char* l2_latency = "l2_latency_ns";
inline constexpr const char* dram_latency = "dram_latency_ns";
inline constexpr const char* shared_latency = "shared_latency_ns";
inline constexpr const char* atomic_latency = "atomic_latency_ns";
inline constexpr const char* l2_capacity = "l2_capacity_mib";
inline constexpr const char* atomic_one = "atomic_one_gops";           // whole grid, one address
inline constexpr const char* atomic_one_u32 = "atomic_one_u32_gops";   // the same, u32 adds
inline constexpr const char* atomic_one_lane = "atomic_one_lane_gops"; // one lane per warp
inline constexpr const char* atomic_warp = "atomic_warp_gops";         // one address per warp
inline constexpr const char* atomic_spread = "atomic_spread_gops";     // own sector per thread
inline constexpr const char* atomic_shared_one = "atomic_shared_one_gops"; // one per block
inline constexpr const char* atomic_shared_u32_one = "atomic_shared_u32_one_gops";
inline constexpr const char* atomic_shared_u32_spread = "atomic_shared_u32_spread_gops";
inline constexpr const char* atomic_shared_u32_warp = "atomic_shared_u32_warp_gops";
// Float adds, as a row sum's partials land: one word per warp, one word per block (side by side),
// and on shared memory one word per warp.
inline constexpr const char* atomic_warp_f32 = "atomic_warp_f32_gops";
inline constexpr const char* atomic_row_f32 = "atomic_row_f32_gops";
inline constexpr const char* atomic_shared_f32_warp = "atomic_shared_f32_warp_gops";
inline constexpr const char* dram_mlp_2k = "dram_mlp_2k_gbps"; // KiB in flight per SM
inline constexpr const char* dram_mlp_4k = "dram_mlp_4k_gbps";
inline constexpr const char* dram_mlp_8k = "dram_mlp_8k_gbps";
inline constexpr const char* dram_mlp_16k = "dram_mlp_16k_gbps";
inline constexpr const char* dram_mlp_32k = "dram_mlp_32k_gbps";
inline constexpr const char* dram_mlp_64k = "dram_mlp_64k_gbps";
inline constexpr const char* dram_mlp_128k = "dram_mlp_128k_gbps";
inline constexpr const char* l2_sector_read = "l2_sector_read_gops";   // G sectors/s
inline constexpr const char* l2_sector_write = "l2_sector_write_gops"; // G sectors/s
inline constexpr const char* l2_write = "l2_write_gbps";
inline constexpr const char* seq_read_ns = "seq_read_ns";          // one thread's stream, per 64 B
inline constexpr const char* block_turnover = "block_turnover_ns"; // one block at a time per SM
inline constexpr const char* launch = "launch_us";
inline constexpr const char* launch_gap = "launch_gap_us";
inline constexpr const char* block_rate_32 = "block_rate_32_per_us";
inline constexpr const char* block_rate_256 = "block_rate_256_per_us";
inline constexpr const char* block_rate_1024 = "block_rate_1024_per_us";
} // namespace metric

// The datasheet figure for a metric name, or 0 where the datasheet gives none (the L2).
double datasheet_metric(const GpuProfile& p, std::string_view metric);
// The metric that holds the compute ceiling for a puzzle's [cost] precision: f32 -> fp32_gflops,
// f16 -> fp16_tc_gflops, bf16 -> bf16_tc_gflops, f64 -> fp64_gflops, i8 -> int8_tc_gops;
// tf32 and fp8 have no probe ("tf32_tc_gflops", "fp8_tc_gflops": datasheet only).
std::string compute_metric(std::string_view precision);
// "GB/s", "GFLOP/s", "GOP/s", "ns", "us", "MiB" or "/us" for a metric name (by its suffix).
std::string metric_unit(std::string_view metric);

struct Ceilings {
  double dram_gbps = 0;
  double compute_gflops = 0; // for the precision asked for
  std::string source; // "datasheet NVIDIA H200 SXM", "measured", "measured DRAM, datasheet compute"
  bool dram_measured = false, compute_measured = false;
};
// Compute ceiling for a puzzle's [cost] precision: f32 -> FP32 FMA, f16/bf16/tf32/fp8/i8 ->
// tensor cores, f64 -> FP64.
double compute_ceiling(const GpuProfile& p, std::string_view precision);
Ceilings datasheet_ceilings(const GpuProfile& p, std::string_view precision);
// Measured figures where there are some, the profile's datasheet figures for the rest (`p` may be
// nullptr: an unknown GPU then has only what was measured).
Ceilings merge_ceilings(const std::vector<MeasuredCeiling>& measured, const GpuProfile* p,
                        std::string_view precision);
// What a timed check scores against: the ceilings `warpbook probe` stored for this device (UUID)
// and driver in the store under `data_dir` (empty: the default data directory), else the
// datasheet of the matching profile; zero ceilings when neither exists. Never throws.
Ceilings device_ceilings(const DeviceInfo& d, std::string_view precision,
                         const std::string& data_dir = {});

// A device's ceilings for people: each metric with its measured figure (0 when not measured)
// beside the datasheet's (0 when it gives none), in a fixed order, only those with either. The
// CLI's `warpbook devices` prints these; the GUI's device panel shows the same rows.
struct CeilingRow {
  std::string metric, label, unit;
  double measured = 0, median = 0, datasheet = 0;
  std::string measured_at;
};
std::vector<CeilingRow> ceiling_rows(const std::vector<MeasuredCeiling>& measured,
                                     const GpuProfile* p);
// 4410 GB/s -> "4.41 TB/s", 66200 GFLOP/s -> "66.2 TFLOP/s", 0 -> "-".
std::string rate_text(double value, std::string_view unit);

// ---- roofline arithmetic ----------------------------------------------------------------------
// The intensity (FLOP/byte) where a memory roof (GB/s) meets a compute roof (GFLOP/s).
double ridge_point(double compute_gflops, double memory_gbps);
// The attainable GFLOP/s at an intensity: min(peak, bandwidth x intensity).
double attainable_gflops(double intensity, double memory_gbps, double compute_gflops);

struct Tick {
  double value = 0;
  std::string label; // empty for minor ticks
  bool major = false;
};
// Ticks for a log axis over [lo, hi]: a major tick at each power of ten and minor ticks at 2..9
// times it; when the range holds fewer than two decades, the 2 and 5 minors are labelled too.
// `si` labels with SI prefixes (1k, 10M, 1G); otherwise plain numbers (0.01, 1, 1000).
std::vector<Tick> log_ticks(double lo, double hi, bool si = false);
// [lo, hi] widened to whole decades (lo, hi > 0).
std::pair<double, double> decade_range(double lo, double hi);
// 1.2e12 -> "1.2T" (SI prefixes, at most 3 significant digits).
std::string si_number(double v);

// Fills bytes, flops, GB/s, GFLOP/s, intensity, speed of light, the bound, the medal and flags of
// a timed perf report, given the ceilings. Speed of light = max(bytes / DRAM roof, flops /
// compute roof) / median time.
void score_perf(PerfReport& r, const Puzzle& p, const Ceilings& c);

// The profile the simulator predicts for when none is chosen: the one named in the simulator's
// device name ("simulator (modelling H200)"), else the H200.
const GpuProfile& model_profile(const DeviceInfo& sim_device);

} // namespace wb
