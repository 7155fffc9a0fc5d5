// What a check or run produces: plain structs that the CLI, the JSON writer, the runner and the
// GUI all read. Nothing here knows how it was computed.
#pragma once
#include "backend.hpp"
#include "compile.hpp"
#include "expr.hpp"
#include "perf/prediction.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wb {

enum class Verdict { passed, wrong_answer, compile_error, runtime_fault, usage_error };
std::string_view verdict_name(Verdict v);
int exit_code(Verdict v); // 0 passed, 1 wrong, 2 compile error, 3 runtime fault, 4 usage

struct Mismatch {
  int64_t index = 0;
  std::vector<int64_t> coords; // multi-dimensional index where the buffer has a shape
  double expected = 0, actual = 0;
  bool unwritten = false;
  std::string owner; // "block (3,0,0) thread (37,0,0)" (exact on the simulator, by layout on a GPU)
};

struct BufferReport {
  std::string name;
  std::string dtype;
  int64_t count = 0;
  std::vector<int64_t> shape;
  int64_t wrong = 0;     // elements out of tolerance (unwritten included)
  int64_t unwritten = 0; // still holding the poison
  int64_t nan_wrong = 0; // NaN or Inf where the reference has a finite value
  double max_abs_err = 0, max_rel_err = 0;
  std::vector<Mismatch> first; // first few mismatches
  // Per-element wrongness for a heatmap: downsampled to at most 4096 cells (row-major, 0..1).
  std::vector<float> heat;
  int heat_rows = 0, heat_cols = 0;
  bool guard_before_damaged = false, guard_after_damaged = false;
  int64_t guard_first_offset = 0; // first damaged byte, relative to the start/end of the data
  bool input_clobbered = false;   // an input changed during the run
  int64_t clobbered_index = -1;
};

struct CaseReport {
  std::string label; // "n=65537"
  Env sizes;
  bool perf = false; // the perf case (checked too)
  Verdict verdict = Verdict::passed;
  std::string message; // first reason it failed
  Fault fault;
  std::vector<BufferReport> buffers;
  std::vector<std::string> problems; // every reason, one sentence each
  Counters counters;
  std::string printf_output;
  // On a GPU, for the first failing case: what the simulator finds running the same case with
  // the same inputs (a race, an out-of-bounds thread and line, a deadlock), or that it passes.
  // The GPU's verdict stays the verdict; this is the explanation.
  std::string sim_explanation;
  int sim_line = 0; // the learner's line the simulator's finding names, 0 if none
  double ms = 0;    // wall clock for this case (reference + learner runs + comparison)
  std::vector<std::pair<std::string, double>> steps_ms; // prepare, reference run, run, compare
  Dim3 grid, block;
};

struct PerfReport {
  Env sizes;
  Timing timing;
  double bytes = 0, flops = 0; // from [cost]
  double gbps = 0, gflops = 0;
  double intensity = 0;           // flops / byte
  double speed_of_light = 0;      // fraction 0..1 (may exceed 1: flagged)
  std::string bound;              // "memory" or "compute"
  std::string medal;              // "", "bronze", "silver", "gold"
  std::vector<std::string> flags; // "above the DRAM roof: is cost.bytes right, or served from L2?"
  double dram_ceiling_gbps = 0, compute_ceiling_gflops = 0;
  std::string ceiling_source; // "measured" or "datasheet"
  // The performance model's figure, not a measurement: timing.median_us is the predicted time
  // (timing.method "predicted"), scored like a timed one; the medal too is predicted.
  bool predicted = false;
};

struct CheckReport {
  std::string puzzle;
  std::string file;
  DeviceInfo device;
  uint64_t seed = 0;
  Verdict verdict = Verdict::passed;
  std::string summary; // one line
  std::vector<Diagnostic> diagnostics;
  std::vector<KernelResources> resources;
  std::map<std::string, int64_t> tunables; // what was used
  std::vector<CaseReport> cases;
  std::optional<PerfReport> perf;
  std::optional<CaseReport> sim_perf; // counters at the [sim_perf] size
  // The performance model: the time at the [perf] size and why (on the simulator this also fills
  // `perf`, marked predicted; on a GPU it stands beside the measured `perf`).
  std::optional<perf::Prediction> prediction;
  // Where the time went, in order: ("compile", 42.0), ("case n=1", 3.1), ("timing", 120.0) ...
  std::vector<std::pair<std::string, double>> phases_ms;
  double total_ms = 0;
};

} // namespace wb
