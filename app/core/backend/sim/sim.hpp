// The PTX simulator's entry point for code that wants more control than the Backend interface
// gives (tests, the benchmark): the number of worker threads, writer tracking.
// make_sim_backend() (backend.hpp) wraps a Simulator with default options.
#pragma once
#include "core/backend.hpp"
#include "machine.hpp"

#include <memory>

namespace wb::sim {

struct SimOptions {
  unsigned workers = 0;               // threads running blocks; 0: one per core
  bool track_writers = true;          // record the last writer of every output element
  uint32_t max_shared_bytes = 232448; // 227 KiB, the opt-in limit of an H100/H200 block
  int nice = 0; // the worker threads' priority, lowered by this much (lower_thread_priority)
};

// One launch of a sampled run: which blocks ran and what every warp of them executed.
struct SampledLaunch {
  Launch launch;              // as the plan gave it
  std::vector<InstInfo> code; // what each pc is (opcode, line, registers, memory kind)
  uint32_t static_shared = 0; // bytes of __shared__ the kernel declares
  uint32_t local_per_thread = 0;
  std::vector<BlockTrace> blocks; // in the order they were asked for
};
struct SampledRun {
  Fault fault;
  std::vector<SampledLaunch> launches;
  std::vector<std::string> warnings;
  double run_ms = 0;
  size_t lazy_bytes = 0; // bytes of lazy buffers the blocks touched (and so generated)
};

class Simulator {
public:
  explicit Simulator(SimOptions o = {});
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;
  // Runs the plan: see Backend::run. Decoded kernels are cached by PTX text.
  RunResult run(const RunPlan& plan);
  // The performance model's sampled run: every launch of the plan with its full grid, but only
  // the blocks `blocks[launch]` lists run, each warp's instructions traced (at most `trace_cap`
  // events a warp). Buffers whose Transfer has `lazy` are made on first touch; nothing is copied
  // back, no writer is recorded. Launches past blocks.size() do not run. With `stop_after`, a
  // census: each block stops (BlockTrace::stopped, no fault) once a warp has run that many
  // instructions, so that many blocks can be asked cheaply whether they exit at once.
  // `launch_stop[i]`, where given and not 0, is launch i's own stop_after.
  SampledRun run_sampled(const RunPlan& plan, const std::vector<std::vector<uint64_t>>& blocks,
                         size_t trace_cap, size_t stop_after = 0,
                         const std::vector<size_t>& launch_stop = {});
  const SimOptions& options() const { return opt_; }
  SimOptions& options() { return opt_; }

private:
  struct Sampling {
    const std::vector<std::vector<uint64_t>>* blocks = nullptr;
    size_t trace_cap = 0;
    SampledRun* out = nullptr;
    size_t stop_after = 0;
    const std::vector<size_t>* launch_stop = nullptr;
  };
  RunResult run_locked(const RunPlan& plan, const Sampling* sampling = nullptr);
  struct Impl;
  SimOptions opt_;
  std::unique_ptr<Impl> impl_;
};

} // namespace wb::sim
