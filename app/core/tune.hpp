// Autotuning (`warpbook tune`, the window's Tune button): every combination of a puzzle's
// tunables, each checked for correctness first, then timed on a GPU or predicted by the
// performance model on the simulator, ranked fastest first.
//
//   auto space = tune_space(puzzle, {{"BLOCK", {128, 256}}}, error);  // --only BLOCK=128,256
//   TuneReport t = tune_puzzle(puzzle, source, file, backend, space, opt);
//   if (t.winner >= 0) write_file_atomic(path, source_with_tunables(source,
//   t.rows[t.winner].config));
//
// Every configuration is a full check with the same seed, so they are judged on the same inputs.
#pragma once
#include "check.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace wb {

using TuneConfig = std::map<std::string, int64_t>;

// The values `tune` tries for one tunable: its declared `values`, or for a [min, max] range the
// powers of two in it (within 16x of the default when the range is wider), plus the default.
std::vector<int64_t> tune_candidates(const Tunable& t);

// Every combination, in order (the first tunable varies slowest). `only` narrows tunables to the
// values given (each must be allowed); the others stay at their candidates. An unknown name or a
// value the tunable rejects sets `error` and returns nothing.
std::vector<TuneConfig> tune_space(const Puzzle& p,
                                   const std::map<std::string, std::vector<int64_t>>& only,
                                   std::string& error);

// Parses "--only" words: "BLOCK=128,256", "ITEMS=1,4". Throws std::invalid_argument with a message.
std::map<std::string, std::vector<int64_t>> parse_only(const std::vector<std::string>& words);

// `source` with its `// @tune` lines set to `config`: an existing line for a name is rewritten in
// place; names with no line get one. `at_top`: new lines go after the file's opening comment
// (what a learner reads); otherwise at the end, which keeps every diagnostic's line number.
std::string source_with_tunables(const std::string& source, const TuneConfig& config,
                                 bool at_top = false);

// "BLOCK=128 ITEMS=4"
std::string config_text(const TuneConfig& c);

struct TuneRow {
  TuneConfig config;
  bool is_default = false; // the configuration the file itself asks for
  Verdict verdict = Verdict::passed;
  std::string why; // not passed: the check's summary ("case n=7: 3 elements differ ...")
  double us = 0;   // timed median, or predicted; 0 when neither
  bool predicted = false;
  double gbps = 0, gflops = 0, sol = 0, intensity = 0;
  std::string medal;
  std::string limiter; // the performance model's first factor ("DRAM: 805 MB at ...")
  int registers = 0;   // of the first kernel
  double check_ms = 0;
  // Passed with a time: a row the ranking places.
  bool timed() const { return verdict == Verdict::passed && us > 0; }
};

struct TuneReport {
  std::string puzzle, file;
  DeviceInfo device;
  std::string model_gpu; // simulator: the GPU the model predicted for ("NVIDIA H200 SXM")
  uint64_t seed = 0;
  std::vector<TuneRow> rows; // correct and timed ones fastest first, then the rest
  int winner = -1;           // index into rows, -1 when none passed with a time
  int default_row = -1;      // the file's own configuration, when it was in the space
  bool cancelled = false;
  int configurations = 0; // asked for (rows may be fewer after a cancel)
  double total_ms = 0;
  // The default's time over the winner's (1.3: the winner is 1.3x faster); 0 when unknown.
  double margin() const;
};

struct TuneOptions {
  CheckOptions check; // seed, timing, model GPU, data dir; progress is used per configuration
  // Checks run at once on the simulator (each on its own backend); a GPU times one at a time.
  int jobs = 0; // 0: the machine's cores
  // Called after each configuration (from the calling thread).
  std::function<void(const TuneRow& row, int done, int total)> on_row;
  const std::atomic<bool>* cancel = nullptr; // stops before the next configuration
};

// Tunes `source` over `space` on `backend` (a GPU backend times; the simulator predicts).
TuneReport tune_puzzle(const Puzzle& p, const std::string& source, const std::string& file,
                       Backend& backend, const std::vector<TuneConfig>& space,
                       const TuneOptions& opt);

nlohmann::json tune_to_json(const TuneReport& t);
TuneReport tune_from_json(const nlohmann::json& j); // throws on malformed input

} // namespace wb
