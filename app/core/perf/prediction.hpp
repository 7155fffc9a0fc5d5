// What the performance model says about a kernel (predict.hpp makes it): plain structs that the
// report, the JSON, the CLI and the window read.
#pragma once
#include "core/backend.hpp"

#include <string>
#include <vector>

namespace wb::perf {

// One thing the time went to, in a sentence with its numbers.
struct Factor {
  std::string key;  // dram, l2, latency, occupancy, tail, dispatch, sectors, bank_conflicts,
                    // atomics, serial, issue, fp32, fp64, fp16, sfu, conversions, tensor, lsu,
                    // shared, barrier, divergence, local_memory, launch
  std::string text; // "DRAM: 805 MB at 4.56 TB/s is 177 us of the 189 us"
  double us = 0;    // the time it accounts for
  double share = 0; // us / the launch's (or plan's) time
  int line = 0;     // the source line it is about, 0 for the whole kernel
};

// What the editor's gutter shows beside a source line.
struct LineNote {
  int line = 0;
  std::string text; // "uses 128 of 1024 bytes fetched; waits 61% of stall time"
  double share = 0; // of the kernel's stall time spent waiting on this line (0..1)
  double bytes_used = 0, bytes_fetched = 0; // global memory requests of this line, per block
  double requests = 0;                      // ... and how many there were
  double conflict_ways = 0; // shared memory: wavefronts per request (1 = no conflict)
};

struct LaunchPrediction {
  std::string kernel;
  Dim3 grid, block;
  double us = 0; // this launch, with its launch overhead
  int registers = 0, shared_bytes = 0;
  int spill_stores = 0, spill_loads = 0; // bytes of spill code ptxas reported (static, not traffic)
  std::string wgmma_serialized;          // ptxas serialized the wgmma: why (empty: it did not)
  int resident = 0;                      // blocks per SM at once
  int resident_running = 0;              // ... once their idle warps have exited (>= resident)
  std::string limited_by;              // "threads", "registers", "shared memory", "blocks", "warps"
  double occupancy = 0;                // resident warps / the SM's maximum
  uint64_t blocks_per_sm = 0;          // on the busiest SM
  double dram_bytes = 0, l2_bytes = 0; // whole launch
  std::vector<Factor> factors;         // ranked
};

struct Prediction {
  bool ok = false;
  std::string error;         // why there is none
  std::string gpu, gpu_name; // the profile
  double us = 0;             // the plan (all launches) at the perf size
  double dram_bytes = 0, l2_bytes = 0;
  std::vector<LaunchPrediction> launches;
  std::vector<Factor> factors; // ranked over the plan: the limiter first
  std::vector<LineNote> lines;
  std::string method;  // how it was sampled and extrapolated, one sentence
  std::string sources; // where the machine's figures come from
  double model_ms = 0; // wall clock spent predicting
  double sim_ms = 0;   // ... of which simulating the sampled blocks
};

} // namespace wb::perf
