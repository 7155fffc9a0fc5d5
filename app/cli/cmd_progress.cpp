// warpbook progress [--json]: the learner's own standing, from the progress database: lessons read
// (the window records those; a terminal cannot tell that a lesson was read), and per puzzle the
// attempts, whether one passed, the best medal and speed of light measured on a GPU and, apart,
// what the performance model predicted on the simulator.
#include "command.hpp"
#include "core/catalog.hpp"
#include "core/perf/explain.hpp"
#include "core/progress.hpp"
#include "core/store.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace {

using namespace wb;

// "2026-11-21T10:42:07.123Z" -> "2026-11-21 10:42".
std::string day_and_minute(const std::string& iso) {
  if (iso.size() < 16) return iso;
  return iso.substr(0, 10) + " " + iso.substr(11, 5);
}

std::string medals_text(const int (&m)[3]) {
  std::string t;
  for (int r = 2; r >= 0; --r)
    if (m[r])
      t += fmt::format("{}{} {}", t.empty() ? "" : ", ", m[r],
                       r == 2   ? "gold"
                       : r == 1 ? "silver"
                                : "bronze");
  return t.empty() ? "none" : t;
}

// One side of a puzzle's row: medal, speed of light, time.
std::string best_cells(const BestRun& b) {
  if (!b.any()) return fmt::format("{:<7} {:>5} {:>9}", "-", "", "");
  return fmt::format("{:<7} {:>4.0f}% {:>9}", b.medal.empty() ? "none" : b.medal, 100 * b.sol,
                     perf::us_text(b.time_us));
}

void print_progress(const Progress& p, const fs::path& db) {
  fmt::print("Progress in {}\n\n", db.string());
  fmt::print("Lessons read in the window: {} of {}\n", p.lessons_read, p.lessons.size());
  size_t id_w = 0;
  for (auto& l : p.lessons) id_w = std::max(id_w, l.id.size());
  for (auto& l : p.lessons)
    fmt::print("  {:<6} {:<{}}  {}\n", l.read ? "read" : "-", l.id, id_w, l.title);
  if (!p.any_attempts()) {
    fmt::print("\nNo attempts yet: open a puzzle in the window, or run `warpbook check PUZZLE "
               "FILE`.\n");
    return;
  }
  // The two sides under their own headings: a predicted gold is not a gold.
  fmt::print("\n{:40}{:<23}  {}\n", "", "measured on a GPU", "predicted (simulator)");
  fmt::print("{:<24} {:>5}  {:<6}  {:<7} {:>5} {:>9}  {:<7} {:>5} {:>9}  {}\n", "puzzle", "tries",
             "passed", "medal", "SOL", "time", "medal", "SOL", "time", "last (UTC)");
  for (auto& s : p.puzzles) {
    std::string row = fmt::format(
        "{:<24} {:>5}  {:<6}  {}  {}  {}", s.id + (s.in_catalog ? "" : " (?)"), s.attempts,
        s.attempts == 0 ? "-"
        : s.passed()    ? "yes"
                        : "no",
        best_cells(s.measured), best_cells(s.predicted), day_and_minute(s.last_at));
    row.erase(row.find_last_not_of(' ') + 1);
    fmt::print("{}\n", row);
  }
  fmt::print("\n{} attempt{} on {} of {} puzzles, {} passed. Medals on a GPU: {}. Predicted on the "
             "simulator: {} (a prediction, not a medal).\n",
             p.attempts, p.attempts == 1 ? "" : "s", p.puzzles_tried, p.catalog_puzzles,
             p.puzzles_passed, medals_text(p.measured_medals), medals_text(p.predicted_medals));
  if (std::any_of(p.puzzles.begin(), p.puzzles.end(), [](auto& s) { return !s.in_catalog; }))
    fmt::print("(?): attempts of a puzzle this catalog does not hold (another --catalog?)\n");
}

struct ProgressArgs {
  bool json = false;
};

int run_progress(const cli::Global& g, const ProgressArgs& a) {
  Catalog catalog = load_catalog(default_catalog_root(g.catalog));
  for (auto& e : catalog.errors) fmt::print(stderr, "warning: {}\n", e.str());
  // Reading must not create a database where there is none.
  const fs::path db = Store::default_path(g.data_dir);
  std::vector<Attempt> attempts;
  std::vector<std::pair<std::string, std::string>> read;
  std::error_code ec;
  if (fs::exists(db, ec)) {
    try {
      auto store = Store::open(db);
      attempts = store->attempt_summaries();
      read = store->notes("read/");
    } catch (const StoreError& e) {
      throw cli::UsageError(fmt::format("cannot read the progress database: {}", e.what()));
    }
  }
  Progress p = learner_progress(catalog, attempts, read);
  if (a.json) {
    nlohmann::json j = progress_json(p);
    j["database"] = db.string();
    fmt::print("{}\n", j.dump(2));
  } else if (!p.any_attempts() && p.lessons_read == 0) {
    fmt::print("No attempts yet in {}: open a puzzle in the window, or run `warpbook check "
               "PUZZLE FILE`.\n",
               db.parent_path().string());
  } else {
    print_progress(p, db);
  }
  return 0;
}

cli::Registration reg("progress", [](CLI::App& app, cli::Global& g) -> std::function<int()> {
  auto a = std::make_shared<ProgressArgs>();
  auto* sub = app.add_subcommand("progress", "your standing: lessons read, puzzles passed with "
                                             "best medal and speed of light, attempts");
  sub->add_flag("--json", a->json, "print it as one JSON document");
  return [a, &g] { return run_progress(g, *a); };
});

} // namespace
