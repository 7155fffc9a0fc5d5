#include "progress.hpp"

#include <map>
#include <nlohmann/json.hpp>

namespace wb {

namespace {

bool same_path(const std::string& file, const fs::path& p) {
  if (file.empty() || p.empty()) return false;
  std::error_code e1, e2;
  fs::path a = fs::weakly_canonical(file, e1), b = fs::weakly_canonical(p, e2);
  return e1 || e2 ? fs::path(file) == p : a == b;
}

void take(BestRun& best, const Attempt& a) {
  if (medal_rank(a.medal) > medal_rank(best.medal)) best.medal = a.medal;
  if (!best.any() || a.sol > best.sol) {
    best.sol = a.sol, best.time_us = a.time_us, best.attempt = a.id;
    best.device = a.device, best.at = a.created_at;
  }
}

nlohmann::json best_json(const BestRun& b) {
  if (!b.any()) return nullptr;
  return {{"medal", b.medal},     {"speed_of_light", b.sol}, {"time_us", b.time_us},
          {"attempt", b.attempt}, {"device", b.device},      {"at", b.at}};
}

nlohmann::json medals_json(const int (&m)[3]) {
  return {{"bronze", m[0]}, {"silver", m[1]}, {"gold", m[2]}};
}

} // namespace

int medal_rank(const std::string& m) {
  return m == "gold" ? 3 : m == "silver" ? 2 : m == "bronze" ? 1 : 0;
}

bool Progress::any_attempts() const {
  for (auto& s : puzzles)
    if (s.attempts > 0) return true;
  return false;
}

bool is_reference_attempt(const Attempt& a, const Puzzle* p) {
  if (a.file.rfind("solutions/", 0) == 0) return true;
  return p && same_path(a.file, p->solution);
}

Progress learner_progress(const Catalog& catalog, const std::vector<Attempt>& attempts,
                          const std::vector<std::pair<std::string, std::string>>& read_notes) {
  Progress out;
  for (auto& l : catalog.lessons) {
    LessonStanding s{l.id, l.title, false};
    for (auto& [key, value] : read_notes)
      if (key == "read/" + l.id && !value.empty()) s.read = true;
    out.lessons_read += s.read;
    out.lessons.push_back(std::move(s));
  }
  std::map<std::string, size_t> row; // puzzle id -> index in out.puzzles
  for (auto& p : catalog.puzzles) {
    row[p.id] = out.puzzles.size();
    PuzzleStanding s;
    s.id = p.id, s.title = p.title, s.demo = p.demo;
    out.puzzles.push_back(std::move(s));
  }
  for (const Attempt& a : attempts) {
    const Puzzle* pz = catalog.find_puzzle(a.puzzle);
    if (pz && pz->id != a.puzzle) pz = nullptr; // find_puzzle takes prefixes; the store has ids
    if (is_reference_attempt(a, pz)) continue;
    auto [it, added] = row.try_emplace(a.puzzle, out.puzzles.size());
    if (added) {
      PuzzleStanding s;
      s.id = a.puzzle;
      s.in_catalog = false;
      out.puzzles.push_back(std::move(s));
    }
    PuzzleStanding& s = out.puzzles[it->second];
    ++s.attempts;
    if (a.created_at > s.last_at) s.last_at = a.created_at; // ISO 8601 UTC sorts as text
    if (a.verdict != "passed") continue;
    ++s.passes;
    // A medal and a speed of light come with a time: measured on a GPU or predicted.
    if (a.predicted && a.sol > 0)
      take(s.predicted, a);
    else if (!a.predicted && a.time_us > 0 && a.sol > 0)
      take(s.measured, a);
  }
  // Totals over this catalog's puzzles: another pack's attempts are listed, not counted.
  for (auto& s : out.puzzles) {
    if (!s.in_catalog) continue;
    ++out.catalog_puzzles;
    out.attempts += s.attempts;
    out.puzzles_tried += s.attempts > 0;
    out.puzzles_passed += s.passed();
    if (int r = medal_rank(s.measured.medal)) ++out.measured_medals[r - 1];
    if (int r = medal_rank(s.predicted.medal)) ++out.predicted_medals[r - 1];
  }
  return out;
}

nlohmann::json progress_json(const Progress& p) {
  nlohmann::json lessons = nlohmann::json::array();
  for (auto& l : p.lessons) lessons.push_back({{"id", l.id}, {"title", l.title}, {"read", l.read}});
  nlohmann::json puzzles = nlohmann::json::array();
  for (auto& s : p.puzzles)
    puzzles.push_back(
        {{"id", s.id},
         {"title", s.title},
         {"demo", s.demo},
         {"in_catalog", s.in_catalog},
         {"attempts", s.attempts},
         {"passes", s.passes},
         {"passed", s.passed()},
         {"last_attempt_at", s.last_at.empty() ? nlohmann::json() : nlohmann::json(s.last_at)},
         {"measured", best_json(s.measured)},
         {"predicted", best_json(s.predicted)}});
  return {{"lessons",
           {{"read", p.lessons_read},
            {"total", p.lessons.size()},
            {"recorded_by", "the window (a lesson counts as read once opened there)"},
            {"items", lessons}}},
          {"puzzles", puzzles},
          {"totals",
           {{"attempts", p.attempts},
            {"puzzles", p.catalog_puzzles},
            {"puzzles_tried", p.puzzles_tried},
            {"puzzles_passed", p.puzzles_passed},
            {"measured_medals", medals_json(p.measured_medals)},
            {"predicted_medals", medals_json(p.predicted_medals)}}}};
}

} // namespace wb
