// "Why this speed": from a launch's replay, the things its time went to, each a sentence with
// numbers a learner can check, ranked; and notes for the source lines (predict.hpp).
#pragma once
#include "predict.hpp"
#include "replay.hpp"

namespace wb::perf {

struct LaunchExplainInput {
  const sim::SampledLaunch* launch = nullptr;
  std::vector<OpCost> cost;
  LaunchMemory mem;
  ReplayResult rr;
  LaunchPrediction lp;
  int warps_per_block = 1;
  int anchor = 0;
  double hot_us = 0;      // atomics on one address, served one after another
  uint64_t hot_lanes = 0; // lanes per block on the hottest word
  double exec_us = 0;     // the launch without its launch overhead
};

struct ExplainInput {
  const Machine* machine = nullptr;
  std::vector<LaunchExplainInput> launches;
};

// Fills each launch's factors, the plan's factors and the line notes of `p`.
void explain(const ExplainInput& in, Prediction& p);

// 805e6 -> "805 MB"; 4.56e12 B/s -> "4.56 TB/s"; 176.9 -> "177 µs".
std::string bytes_text(double bytes);
std::string rate_text_bps(double bytes_per_s);
std::string us_text(double us);
// "moe_gemm <<<(8,576,1), (256,1,1)>>>: 254 registers, 199 kB shared; 1 block per SM (limited by
// registers), 12% occupancy; 35 blocks on the busiest SM; 1.79 ms"
std::string launch_text(const LaunchPrediction& l);

} // namespace wb::perf
