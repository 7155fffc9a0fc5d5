// `warpbook grade DIR`: every submission of a class checked in its own runner process, with a time
// and a memory limit, into one row per student and puzzle, a summary per puzzle, a terminal
// table, CSV and JSON. Files that cannot be judged (not UTF-8, huge, no kernel, no puzzle) get a
// row saying why without spending a runner; a row whose file, puzzle, backend, limits and Warpbook
// version are unchanged since the last run is reused from DIR/.warpbook-grade.json.
#pragma once
#include "catalog.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace wb::grade {

// Grade's own verdicts, beside verdict_name()'s (passed, wrong_answer, compile_error,
// runtime_fault, usage_error).
inline constexpr std::string_view kInvalidUtf8 = "invalid_utf8";
inline constexpr std::string_view kTooLarge = "too_large";
inline constexpr std::string_view kNoKernel = "no_kernel";
inline constexpr std::string_view kUnknownPuzzle = "unknown_puzzle";
inline constexpr std::string_view kUnreadable = "unreadable"; // not a regular file, or no access
inline constexpr std::string_view kTimeout = "timeout";
inline constexpr std::string_view kOutOfMemory = "out_of_memory";
inline constexpr std::string_view kRunnerCrashed = "runner_crashed";

inline constexpr const char* kCacheName = ".warpbook-grade.json";

// One .cu file of the class folder: DIR/STUDENT/.../NAME.cu, or DIR/STUDENT.PUZZLE.cu.
struct Submission {
  std::string student;
  fs::path path;                  // on disk
  std::string file;               // relative to DIR, as rows show it ("alice/01.cu")
  std::string key;                // what the file name says the puzzle is ("01", "01-vector-add")
  const Puzzle* puzzle = nullptr; // resolved in the catalog; null when the name names none
};

// Every submission under `dir`, sorted by student then file. Hidden files and folders (a leading
// '.') and files not ending in .cu are not submissions.
std::vector<Submission> find_submissions(const fs::path& dir, const Catalog& catalog);

struct Row {
  std::string student;
  std::string puzzle; // the catalog id; for unknown_puzzle, what the file name said
  std::string file;
  std::string verdict;
  int cases_passed = 0, cases_total = 0;
  double time_us = 0;     // 0: no time (not passed, or not timed)
  bool predicted = false; // time_us came from the simulator's performance model
  double speed_of_light = 0;
  std::string medal;
  std::string diagnostic; // the first compile diagnostic or case problem, one line
  uint64_t seed = 0;      // the inputs' seed (`warpbook check --seed` replays them)
  double seconds = 0;     // how long judging it took
  bool unchanged = false; // reused from the last run
};

struct PuzzleSummary {
  std::string puzzle;
  int passed = 0, total = 0;
  std::string fastest_student; // empty when none passed with a time
  double fastest_us = 0;
  bool fastest_predicted = false;
  std::string usual_failure; // the most common verdict other than passed; empty when none failed
  int usual_failure_count = 0;
};

struct Options {
  fs::path dir;
  std::string backend = "auto"; // cuda, sim, auto: what each runner checks on
  int jobs = 1;                 // runners at once
  // Starts a runner (runner::ClientOptions::command); empty: this executable with `--catalog
  // CATALOG runner`.
  std::string runner_command;
  std::string catalog; // passed to the default runner command
  double timeout_s = 120;
  double memory_mib = 4096; // resident memory of a local runner and its children; 0: no limit
  size_t max_bytes = 256 * 1024;
  bool force = false; // check everything again, ignoring the cache
  // Lines saying what is happening ("[3/12] alice 01-vector-add: passed (1.4 s)").
  std::function<void(const std::string&)> progress;
};

struct Result {
  std::vector<Row> rows; // sorted by student, puzzle, file
  std::vector<PuzzleSummary> summary;
  int checked = 0;                   // sent to a runner this time
  int unchanged = 0;                 // rows reused from the cache
  std::vector<std::string> warnings; // the cache could not be read or written, ...
};

// Grades every submission under opt.dir; never stops early. Throws std::invalid_argument only for
// usage problems (no such folder, jobs < 1).
Result grade_class(const Catalog& catalog, const Options& opt);

// ---- the pieces, for tests -------------------------------------------------------------------

// The offset of the first byte that does not belong to valid UTF-8 (overlong forms, surrogates
// and code points past U+10FFFF are invalid), or nullopt when all of `s` is valid.
std::optional<size_t> first_invalid_utf8(std::string_view s);

// Why a source that is valid UTF-8 and small enough still cannot be `puzzle`'s kernel: it has no
// __global__ function, or none of the puzzle's kernel names appears outside comments and strings.
// Empty when it may be (the compile decides).
std::string kernel_problem(const std::string& source, const Puzzle& puzzle);

// The checks made before spending a runner: a row with grade's own verdict, or nullopt.
std::optional<Row> precheck(const Submission& s, const std::string& source, size_t file_bytes,
                            size_t max_bytes);

// Resident memory (KiB) of every process in process group `pgid` (a runner and what it started).
int64_t group_rss_kib(pid_t pgid);

std::vector<PuzzleSummary> summarize(const std::vector<Row>& rows);

std::string to_csv(const std::vector<Row>& rows);
std::string to_json(const Result& r, const Options& opt);
// The rows and the summary as aligned text for a terminal.
std::string format_table(const Result& r);

} // namespace wb::grade
