// Performance across sizes (`warpbook sweep`, the window's Sweep button), like Triton's
// perf_report: one run per size for the learner's kernel, the puzzle's solution and its reference,
// drawn as GB/s (or GFLOP/s) against size with the roofs as horizontal lines. The picture shows
// where launch overhead dominates, where the data stops fitting in the L2, and where the kernel
// reaches the DRAM roof.
//
// On a GPU each size is checked against the reference and timed. On the simulator each kernel is
// checked once on the puzzle's cases and every size is predicted by the performance model.
#pragma once
#include "chart.hpp"
#include "check.hpp"

#include <atomic>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace wb {

struct SweepSpec {
  std::string name;            // the size swept ("n")
  std::vector<int64_t> values; // ascending
  Env fixed;                   // the other sizes (the [perf] case's, unless given)
};

// Parses `--size` words: exactly one range or list for the swept size, "n=2^10..2^28" (doubling),
// "n=2^10..2^28*4" (times 4), "n=1000..64000+1000" (steps of 1000) or "n=256,1000,4096"; others
// fix a size, "cols=4096". Values may be written 2^K, or with a K, M or G suffix (powers of 1024).
// With no words: the puzzle's first size, from 2^10 (or its smallest case) to its [perf] value.
// Throws std::invalid_argument naming the word at fault.
SweepSpec parse_sweep(const Puzzle& p, const std::vector<std::string>& words);

struct SweepPoint {
  int64_t size = 0;
  Verdict verdict = Verdict::passed;
  std::string why; // not passed
  double us = 0, gbps = 0, gflops = 0, sol = 0, bytes = 0;
  bool predicted = false;
};

struct SweepSeries {
  std::string name; // "your kernel", "solution", "reference"
  std::string file;
  std::string problem; // the kernel failed its check: no points, and this says why
  std::vector<SweepPoint> points;
};

struct SweepReport {
  std::string puzzle, var;
  Env fixed;
  DeviceInfo device;
  std::string model_gpu;       // simulator: the GPU predicted for
  std::string metric = "GB/s"; // or "GFLOP/s": by where the kernel's [cost] sits on the roofline
  std::vector<Roof> roofs;     // horizontal lines in `metric`
  double l2_bytes = 0;         // the L2's size: the chart marks where the data outgrows it
  std::vector<SweepSeries> series; // yours first
  bool cancelled = false;
  double total_ms = 0;
};

struct SweepOptions {
  CheckOptions check;
  bool solution = true, reference = true; // include these series (when the puzzle has them)
  // Called after each point (series index, point), from the calling thread.
  std::function<void(const SweepSeries& s, const SweepPoint& pt, int done, int total)> on_point;
  const std::atomic<bool>* cancel = nullptr;
};

SweepReport sweep_puzzle(const Puzzle& p, const std::string& source, const std::string& file,
                         Backend& backend, const SweepSpec& spec, const SweepOptions& opt);

nlohmann::json sweep_to_json(const SweepReport& r);
SweepReport sweep_from_json(const nlohmann::json& j); // throws on malformed input

// The chart: log size across, `metric` up from zero, one line per series (predicted ones dashed
// with hollow markers), the roofs across, the L2's capacity as a vertical line.
std::vector<Shape> sweep_shapes(const SweepReport& r, int width = 1000, int height = 560);
std::string sweep_svg(const SweepReport& r, int width = 1000, int height = 560);
bool write_sweep_png(const SweepReport& r, const std::string& path, std::string& why,
                     int width = 1000, int height = 560);

} // namespace wb
