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

// 805e6 -> "805 MB"; 4.56e12 B/s -> "4.56 TB/s"; 176.9 -> "177 us".
std::string bytes_text(double bytes);
std::string rate_text_bps(double bytes_per_s);
std::string us_text(double us);
// "row_sum <<<(8192,1,1), (256,1,1)>>>: 32 registers, 0 B shared; 8 blocks per SM (limited by
// threads per SM), 100% occupancy; 63 blocks on the busiest SM; 968 us"
std::string launch_text(const LaunchPrediction& l);

} // namespace wb::perf
