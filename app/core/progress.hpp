// A learner's standing, from the progress database: which lessons they have read, and per puzzle
// their attempts, whether one passed, and their best medal and speed of light. Medals earned on a
// GPU and medals the performance model predicted on the simulator are kept apart: a predicted gold
// is not a gold. `warpbook progress` prints this; the window's catalog badges come from it too.
//
//   auto store = Store::open(Store::default_path(dir));
//   Progress p = learner_progress(catalog, store->attempt_summaries(), store->notes("read/"));
#pragma once
#include "catalog.hpp"
#include "store.hpp"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

namespace wb {

// The best of one kind of run (timed on a GPU, or predicted on the simulator) among passing
// attempts.
struct BestRun {
  std::string medal;  // best medal: "", "bronze", "silver", "gold"
  double sol = 0;     // best speed of light, a fraction
  double time_us = 0; // the time of the attempt with that speed of light
  int64_t attempt = 0;
  std::string device; // where it ran ("NVIDIA H200"; the simulator's name when predicted)
  std::string at;     // when (UTC, as the store keeps it)
  bool any() const { return attempt > 0; }
};

struct PuzzleStanding {
  std::string id, title;
  bool demo = false;
  bool in_catalog = true; // false: attempts of a puzzle this catalog does not hold
  int attempts = 0;
  int passes = 0;
  std::string last_at; // the newest attempt (UTC), empty when none
  BestRun measured;    // timed on a GPU
  BestRun predicted;   // the performance model's, on the simulator
  bool passed() const { return passes > 0; }
};

struct LessonStanding {
  std::string id, title;
  bool read = false; // opened in the window (the window keeps "read/<id>" notes)
};

struct Progress {
  std::vector<LessonStanding> lessons; // catalog order
  std::vector<PuzzleStanding> puzzles; // catalog order, then any the catalog lacks
  int lessons_read = 0;
  // Totals over the catalog's puzzles (attempts of puzzles it lacks are listed, not counted).
  int catalog_puzzles = 0;
  int attempts = 0;
  int puzzles_tried = 0, puzzles_passed = 0;
  int measured_medals[3] = {0, 0, 0};  // bronze, silver, gold earned on a GPU
  int predicted_medals[3] = {0, 0, 0}; // bronze, silver, gold predicted on the simulator
  bool any_attempts() const;           // of any puzzle, in the catalog or not
};

// 0 for no medal, 1 bronze, 2 silver, 3 gold.
int medal_rank(const std::string& medal);

// Checks of the catalog's reference solution are not the learner's: the window's reference checks
// ("solutions/NN-slug.cu") and `warpbook roofline --run`'s (the solution's own path). A starter is
// left in: learners may edit it where it lies.
bool is_reference_attempt(const Attempt& a, const Puzzle* p);

// `attempts` as Store::attempt_summaries() gives them; `read_notes` as Store::notes("read/").
Progress learner_progress(const Catalog& catalog, const std::vector<Attempt>& attempts,
                          const std::vector<std::pair<std::string, std::string>>& read_notes);

// What `warpbook progress --json` prints.
nlohmann::json progress_json(const Progress& p);

} // namespace wb
