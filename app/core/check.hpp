// The check pipeline: compile the learner's file and the reference, run every case on a backend,
// compare, time the perf case, and produce a CheckReport.
#pragma once
#include "backend.hpp"
#include "puzzle.hpp"
#include "report.hpp"

#include <atomic>
#include <functional>
#include <optional>

namespace wb {

struct CheckOptions {
  uint64_t seed = 0;     // 0: a fresh random seed (reported, so a failure can be replayed)
  bool time = true;      // time the perf case where the backend can
  bool perf_case = true; // check the [perf] size too (GPU) / run [sim_perf] (simulator)
  bool stop_at_first_failure = false;
  TimingOptions timing;
  double case_timeout_s = 10;
  bool shuffle_warps = false;
  // Where the store lives (--data-dir); empty: the default data directory. Timed checks score
  // against the ceilings `warpbook probe` measured on this device when the store has them.
  std::string data_dir;
  // Time the perf case even when the answer is wrong (not after a fault): `warpbook roofline
  // --run` places the puzzles' starters on the chart this way.
  bool time_wrong_answers = false;
  // Predict the [perf] size with the performance model (perf/predict.hpp): on the simulator
  // that is its perf figure; on a GPU it goes beside the measurement.
  bool predict = true;
  // The GPU the simulator predicts for (a gpu_profiles() key, "h100-sxm"); empty: the H200.
  std::string model_gpu;
  // On a GPU, re-run the first failing case on the simulator to explain it (CaseReport).
  bool explain_on_sim = true;
  // Run only this case of the puzzle's list (its inputs as in a full check with the same seed).
  std::optional<size_t> only_case;
  // Called as work progresses ("compiling", "case 2 of 7", "timing"), for the runner and the GUI.
  std::function<void(const std::string& phase, int done, int total)> progress;
  // Called as each case's verdict is known, before the next case runs (`index` of `total`), so a
  // client can show the first failure while the rest still run.
  std::function<void(const CaseReport& c, size_t index, size_t total)> on_case;
  // Set from another thread to stop the check: compiles, simulated runs, the prediction and GPU
  // timing notice it within a few milliseconds, and check_puzzle throws Cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

// Waits (at most `seconds`) until no prediction a cancelled check left behind is still running;
// false if one still is. A process calls it before it ends: its statics (the model's simulator,
// NVRTC) must not be torn down under a running prediction.
bool wait_for_predictions(double seconds = 60);

// A fresh 64-bit input seed, for a check (or a tune, or a sweep) whose options give none.
uint64_t fresh_seed();

// The puzzle's tunables: its defaults, with the @tune lines of `source` applied. A line naming no
// tunable, or a value the tunable does not allow, becomes an error in `diagnostics` and changes
// nothing.
std::map<std::string, int64_t> resolve_tunables(const Puzzle& puzzle, const std::string& source,
                                                const std::string& file,
                                                std::vector<Diagnostic>& diagnostics);

// Judges `source` (the learner's file, named `file`) against `puzzle` on `backend`.
CheckReport check_puzzle(const Puzzle& puzzle, const std::string& source, const std::string& file,
                         Backend& backend, const CheckOptions& opt);

// One case at given sizes (`warpbook run`), with its figures; the reference is still compared.
CheckReport run_puzzle(const Puzzle& puzzle, const std::string& source, const std::string& file,
                       Backend& backend, const Env& sizes, const CheckOptions& opt);

// A case's buffers (inputs generated, outputs poisoned, guard bands around each) and launches,
// exactly as the checker builds them: for tests that run a puzzle's kernels themselves.
struct CaseSetup {
  std::vector<HostBuffer> buffers;
  std::vector<Launch> launches;
};
CaseSetup prepare_case(const Puzzle& p, const Case& c, const Env& env, uint64_t seed,
                       uint64_t case_index);

// The same case at its full size for the performance model's sampled run (perf/predict.hpp): the
// launches, and every buffer with an empty image and a lazy Transfer that makes its bytes (the
// generator's, the poison, the guard bands) only where a simulated block touches them.
struct LazyCase {
  std::vector<HostBuffer> buffers;
  std::vector<Transfer> transfers;
  std::vector<Launch> launches;
};
LazyCase prepare_lazy_case(const Puzzle& p, const Case& c, const Env& env, uint64_t seed,
                           uint64_t case_index);

// Element comparison, exposed for tests: passes when |a - e| <= atol + rtol * |e|, or both are
// NaN, or both are the same infinity. NaN never passes where the reference is finite.
bool within_tolerance(double expected, double actual, double rtol, double atol);

// The thread that owns element `index` of an output under a launch, by layout (GPU; the simulator
// records the real writer): 2-D shapes map (row, col) to (y, x); one element per block maps to
// the block; otherwise index = block.x * blockDim.x + thread.x.
std::string owner_by_layout(int64_t index, const std::vector<int64_t>& shape, const Dim3& grid,
                            const Dim3& block, int64_t count);

} // namespace wb
