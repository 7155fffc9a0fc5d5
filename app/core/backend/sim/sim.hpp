// The PTX simulator's entry point for code that wants more control than the Backend interface
// gives (tests, the benchmark): the number of worker threads, writer tracking.
// make_sim_backend() (backend.hpp) wraps a Simulator with default options.
#pragma once
#include "core/backend.hpp"

#include <memory>

namespace wb::sim {

struct SimOptions {
  unsigned workers = 0;               // threads running blocks; 0: one per core
  bool track_writers = true;          // record the last writer of every output element
  uint32_t max_shared_bytes = 232448; // 227 KiB, the opt-in limit of an H100/H200 block
};

class Simulator {
public:
  explicit Simulator(SimOptions o = {});
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;
  // Runs the plan: see Backend::run. Decoded kernels are cached by PTX text.
  RunResult run(const RunPlan& plan);
  const SimOptions& options() const { return opt_; }
  SimOptions& options() { return opt_; }

private:
  RunResult run_locked(const RunPlan& plan);
  struct Impl;
  SimOptions opt_;
  std::unique_ptr<Impl> impl_;
};

} // namespace wb::sim
