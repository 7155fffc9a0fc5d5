// The roofline probes (`warpbook probe`): kernels/probes.cu compiled with NVRTC for the device,
// each kernel timed with CUDA events after the clocks have ramped up, giving the ceilings a
// learner's kernel is scored against. The probes drive the CUDA driver themselves (through
// backend/cuda_driver.hpp) rather than Backend::run: they need buffers of many times the L2 that
// never cross PCIe, and timing without an L2 flush.
#pragma once
#include "backend.hpp"
#include "store.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace wb {

struct ProbeResult {
  std::string metric;   // roofline.hpp's metric names: "dram_triad_gbps", "fp32_gflops", ...
  std::string label;    // "DRAM triad a = b + s*c"
  std::string unit;     // "GB/s", "GFLOP/s", "GOP/s"
  double best = 0;      // from the fastest launch
  double median = 0;    // from the median launch
  double datasheet = 0; // the matching profile's figure; 0 when there is none
  int samples = 0;      // timed launches
  bool model_parameter = false; // a performance-model probe (a latency, a rate): its best of a few
  double launch_us = 0;         // median duration of one launch
  std::string kernel;           // the kernel (for DRAM: the fastest of the variants tried)
  std::string skipped;          // why it was not measured; empty when it was
  bool ok() const { return skipped.empty() && best > 0; }
};

struct ProbeOptions {
  std::string kernels_file; // probes.cu; empty: find_probe_source(catalog)
  std::string catalog;      // as --catalog gives it
  double ms_per_probe = 25; // GPU time spent on the timed launches of each probe
  double launch_ms = 1.5;   // how long one launch of a compute probe is sized to run
  bool wgmma = true;        // the sm_90a wgmma probes where the device is compute capability 9.0
  bool variants = false;    // keep every DRAM variant's result in ProbeSuite::variants
  // The performance model's probes: latencies (L1, L2, DRAM, shared memory, atomics), the L2's
  // effective capacity, atomics on one address, launch overhead and block dispatch, sector-sized
  // DRAM reads and writes (a few seconds more).
  bool machine = true;
  // "compiling", "clock ramp", "dram read" ... as each step starts.
  std::function<void(const std::string&)> progress;
};

struct ProbeSuite {
  DeviceInfo device;
  std::string profile;               // the matching GpuProfile's key; empty when none
  std::vector<ProbeResult> results;  // one per metric, in a fixed order
  std::vector<ProbeResult> variants; // every DRAM variant (ProbeOptions::variants)
  std::string error;                 // the suite could not run (no GPU, compile failure ...)
  double total_ms = 0;               // wall clock of run_probes, context creation included
  double compile_ms = 0;             // wall clock until every program was compiled
  double ramp_ms = 0;                // clock ramp before the first timed launch
  double ramp_start_mhz_ratio = 0;   // ramp: first launch's time over the last one's
  bool ok() const { return error.empty(); }
  const ProbeResult* find(std::string_view metric) const;
};

// Runs the whole suite on CUDA device 0. Never throws: problems end up in `error` (the whole
// suite) or in a result's `skipped`.
ProbeSuite run_probes(const ProbeOptions& opt = {});

// What to keep in the store: every measured probe, plus the family bests a puzzle's speed of
// light uses (dram_gbps, fp16_tc_gflops, bf16_tc_gflops, int8_tc_gops).
std::vector<MeasuredCeiling> suite_ceilings(const ProbeSuite& s);

// kernels/probes.cu: beside the catalog (the source tree or share/warpbook), else in the source
// tree this binary was built from. Empty when not found.
std::filesystem::path find_probe_source(const std::string& catalog = {});

} // namespace wb
