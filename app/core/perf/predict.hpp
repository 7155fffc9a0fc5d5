// The performance model: how long a kernel takes at its puzzle's [perf] size on a GPU, and why
// (docs/perf-model.md). Without a GPU this is the figure a learner sees, labelled predicted; on a
// GPU it stands beside the measured time, with the same analysis.
//
// How: the file is compiled for the GPU's architecture (ptxas's registers and shared memory give
// the occupancy); the simulator runs a few of each launch's blocks at the real size, recording
// every warp's instructions and the sectors they touch (perf-size buffers are made only where
// those blocks look); the traces are replayed on one SM of the machine (replay.hpp) as the
// busiest SM would run them; launch overhead is added. "Why this speed" ranks what the time went
// to, each with numbers a learner can check, and attaches notes to source lines.
#pragma once
#include "core/puzzle.hpp"
#include "core/report.hpp"
#include "machine.hpp"
#include "prediction.hpp"

#include <atomic>
#include <map>
#include <string>
#include <vector>

namespace wb::perf {

struct PredictOptions {
  uint64_t seed = 1;
  size_t event_budget = 2'000'000; // instructions replayed per launch, at most
  double sim_timeout_s = 20;       // the sampled run's wall clock, at most
  // Set from another thread when the prediction is no longer wanted (the check was cancelled, or
  // a case failed): the sampled runs stop and predict() returns an error.
  const std::atomic<bool>* cancel = nullptr;
};

// The machine for a check: the device's own profile (or the H200's) with what `warpbook probe`
// measured on it, or, on the simulator, the profile named (`gpu`, a gpu_profiles() key; empty:
// the H200).
// The architecture a file is compiled for to run on `m`: sm_90a on compute capability 9.0 (its
// wgmma and setmaxnreg), sm_XY elsewhere.
std::string arch_for(const Machine& m);
Machine machine_for_check(const DeviceInfo& device, const std::string& gpu,
                          const std::string& data_dir);

// The prediction as a perf report: the predicted time scored like a timed one, against the
// machine's DRAM stream and the datasheet's compute ceiling; marked predicted (medal included).
PerfReport predicted_perf(const Puzzle& p, const Prediction& pred, const Machine& m);

// How far a prediction's threads lower their priority (lower_thread_priority).
constexpr int kPredictionNice = 10;

// Predicts `source` (compiled with `defines`, the tunables) at `puzzle`'s [perf] size on `m`.
Prediction predict(const Puzzle& puzzle, const std::string& source, const std::string& file,
                   const std::map<std::string, int64_t>& defines, const Machine& m,
                   const PredictOptions& opt = {});

} // namespace wb::perf
