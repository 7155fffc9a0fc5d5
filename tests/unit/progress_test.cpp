// The learner's standing (core/progress.hpp) and `warpbook progress`: a store in a fresh data
// folder with attempts that passed and failed, timed on a GPU and predicted on the simulator, a
// reference check that is not the learner's, and lessons read; then the command's table and JSON.
#include "common/temp_dir.hpp"
#include "core/catalog.hpp"
#include "core/progress.hpp"
#include "core/store.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <sys/wait.h>
#include <unistd.h>

using namespace wb;

namespace {

using test::TempDir;

// A check as the store records it: `medal` and `sol` for a passing timed or predicted run.
CheckReport attempt(const std::string& puzzle, const std::string& file, bool gpu, Verdict v,
                    double sol = 0, double us = 0, const std::string& medal = {}) {
  CheckReport r;
  r.puzzle = puzzle;
  r.file = file;
  r.device.backend = gpu ? "cuda" : "sim";
  r.device.name = gpu ? "NVIDIA H200" : "PTX simulator";
  r.verdict = v;
  if (us > 0) {
    PerfReport p;
    p.predicted = !gpu;
    p.timing.ok = true;
    p.timing.median_us = us;
    p.gflops = 100, p.intensity = 0.1, p.gbps = 1000;
    p.speed_of_light = sol;
    p.medal = medal;
    r.perf = p;
  }
  return r;
}

struct Run {
  int rc = -1;
  std::string out;
};

Run warpbook(const std::string& args) {
  const char* exe = std::getenv("WARPBOOK_EXE");
  REQUIRE_MESSAGE(exe, "WARPBOOK_EXE is set by ctest");
  std::string cmd =
      fmt::format("'{}' --catalog '{}' {} 2>/dev/null", exe, WARPBOOK_SOURCE_ROOT, args);
  Run r;
  FILE* f = popen(cmd.c_str(), "r");
  REQUIRE(f);
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), f)) > 0;) r.out.append(buf.data(), n);
  int status = pclose(f);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The learner's record: puzzle 01 four times (a wrong answer, GPU gold and silver, a predicted
// gold), 02 twice on the simulator (a predicted silver, a wrong answer), 03 once (a compile
// error), a reference check of 01's solution, and an attempt of a puzzle the catalog lacks.
void fill(Store& s, const Catalog& c) {
  s.record_attempt(attempt("01-vector-add", "mine.cu", true, Verdict::wrong_answer), "a");
  s.record_attempt(attempt("01-vector-add", "mine.cu", true, Verdict::passed, 0.91, 812.3, "gold"),
                   "b");
  s.record_attempt(attempt("01-vector-add", "mine.cu", true, Verdict::passed, 0.75, 990, "silver"),
                   "c");
  s.record_attempt(attempt("01-vector-add", "workspace/01-vector-add.cu", false, Verdict::passed,
                           0.93, 790, "gold"),
                   "d");
  s.record_attempt(
      attempt("02-row-sum", "workspace/02-row-sum.cu", false, Verdict::passed, 0.72, 50, "silver"),
      "e");
  s.record_attempt(
      attempt("02-row-sum", "workspace/02-row-sum.cu", false, Verdict::wrong_answer, 0.95, 40),
      "f");
  s.record_attempt(attempt("03-softmax", "mine.cu", true, Verdict::compile_error), "g");
  s.record_attempt(attempt("01-vector-add", "solutions/01-vector-add.cu", true, Verdict::passed,
                           0.99, 700, "gold"),
                   "h");
  s.record_attempt(attempt("77-not-here", "x.cu", false, Verdict::wrong_answer), "i");
  s.set_note("read/" + c.lessons.at(0).id, "1");
  s.set_note("read/" + c.lessons.at(1).id, "1");
  s.set_note("quiz/" + c.lessons.at(2).id + "#1", "01;1"); // a quiz answer is not a lesson read
}

} // namespace

TEST_CASE("progress: GPU medals and predicted ones apart, reference checks left out") {
  Catalog c = load_catalog(WARPBOOK_SOURCE_ROOT);
  REQUIRE(c.lessons.size() >= 3);
  TempDir tmp;
  auto store = Store::open(Store::default_path(tmp.path.string()));
  fill(*store, c);
  Progress p = learner_progress(c, store->attempt_summaries(), store->notes("read/"));

  CHECK(p.lessons_read == 2);
  CHECK(p.lessons.size() == c.lessons.size());
  CHECK(p.lessons[0].read);
  CHECK_FALSE(p.lessons[2].read);
  REQUIRE(p.puzzles.size() == c.puzzles.size() + 1);
  for (size_t i = 0; i < c.puzzles.size(); ++i) CHECK(p.puzzles[i].id == c.puzzles[i].id);

  const PuzzleStanding& v = p.puzzles[0];
  CHECK(v.attempts == 4); // not the solution's check
  CHECK(v.passes == 3);
  CHECK(v.measured.medal == "gold");
  CHECK(v.measured.sol == doctest::Approx(0.91));
  CHECK(v.measured.time_us == doctest::Approx(812.3));
  CHECK(v.measured.device == "NVIDIA H200");
  CHECK(v.predicted.medal == "gold");
  CHECK(v.predicted.sol == doctest::Approx(0.93));
  CHECK_FALSE(v.last_at.empty());

  const PuzzleStanding& rs = p.puzzles[1];
  CHECK(rs.attempts == 2);
  CHECK(rs.passed());
  CHECK_FALSE(rs.measured.any());
  CHECK(rs.predicted.medal == "silver");
  CHECK(rs.predicted.sol == doctest::Approx(0.72)); // the failing run's 95% does not count

  CHECK(p.puzzles[2].attempts == 1);
  CHECK_FALSE(p.puzzles[2].passed());
  CHECK(p.puzzles[3].attempts == 0);
  CHECK_FALSE(p.puzzles.back().in_catalog);
  CHECK(p.puzzles.back().id == "77-not-here");

  CHECK(p.catalog_puzzles == int(c.puzzles.size()));
  CHECK(p.attempts == 7);
  CHECK(p.puzzles_tried == 3);
  CHECK(p.puzzles_passed == 2);
  CHECK(p.measured_medals[2] == 1);
  CHECK(p.measured_medals[1] == 0); // the silver was beaten by a gold on the same puzzle
  CHECK(p.predicted_medals[2] == 1);
  CHECK(p.predicted_medals[1] == 1);
}

TEST_CASE("warpbook progress: the table, the JSON, and an empty data folder") {
  Catalog c = load_catalog(WARPBOOK_SOURCE_ROOT);
  TempDir tmp;
  fs::path data = tmp.path / "data";
  {
    auto store = Store::open(Store::default_path(data.string()));
    fill(*store, c);
  }
  Run t = warpbook(fmt::format("--data-dir '{}' progress", data.string()));
  CHECK(t.rc == 0);
  INFO(t.out);
  CHECK(t.out.find("Lessons read in the window: 2 of " + std::to_string(c.lessons.size())) !=
        std::string::npos);
  CHECK(std::regex_search(t.out, std::regex("\n  read +" + c.lessons[0].id)));
  CHECK(std::regex_search(t.out, std::regex("\n  - +" + c.lessons[2].id)));
  CHECK(t.out.find("measured on a GPU") != std::string::npos);
  CHECK(t.out.find("predicted (simulator)") != std::string::npos);
  CHECK(std::regex_search(
      t.out,
      std::regex(
          R"(\n01-vector-add +4 +yes +gold +91% +812 µs +gold +93% +790 µs +\d{4}-\d\d-\d\d \d\d:\d\d\n)")));
  CHECK(std::regex_search(t.out,
                          std::regex(R"(\n02-row-sum +2 +yes +- +silver +72% +50 µs +\d{4}-)")));
  CHECK(std::regex_search(t.out, std::regex(R"(\n03-softmax +1 +no +- +- +\d{4}-)")));
  CHECK(std::regex_search(t.out, std::regex(R"(\n04-\S+ +0 +- +- +-\n)")));
  CHECK(std::regex_search(t.out, std::regex(R"(\n77-not-here \(\?\) +1 +no)")));
  CHECK(t.out.find(fmt::format("7 attempts on 3 of {} puzzles, 2 passed. Medals on a GPU: 1 gold. "
                               "Predicted on the simulator: 1 gold, 1 silver",
                               c.puzzles.size())) != std::string::npos);

  Run j = warpbook(fmt::format("progress --json --data-dir '{}'", data.string()));
  CHECK(j.rc == 0);
  nlohmann::json doc = nlohmann::json::parse(j.out); // one document, nothing else on stdout
  CHECK(doc["lessons"]["read"] == 2);
  CHECK(doc["lessons"]["items"][0]["read"] == true);
  CHECK(doc["puzzles"][0]["id"] == "01-vector-add");
  CHECK(doc["puzzles"][0]["attempts"] == 4);
  CHECK(doc["puzzles"][0]["measured"]["medal"] == "gold");
  CHECK(doc["puzzles"][0]["measured"]["time_us"] == doctest::Approx(812.3));
  CHECK(doc["puzzles"][0]["predicted"]["medal"] == "gold");
  CHECK(doc["puzzles"][1]["measured"].is_null());
  CHECK(doc["puzzles"][1]["predicted"]["speed_of_light"] == doctest::Approx(0.72));
  CHECK(doc["puzzles"][3]["last_attempt_at"].is_null());
  CHECK(doc["totals"]["attempts"] == 7);
  CHECK(doc["totals"]["puzzles_passed"] == 2);
  CHECK(doc["totals"]["measured_medals"]["gold"] == 1);
  CHECK(doc["totals"]["predicted_medals"]["silver"] == 1);
  CHECK(doc["database"] == Store::default_path(data.string()).string());

  // A fresh folder: one friendly line, exit 0, and no database made by looking.
  fs::path empty = tmp.path / "empty";
  Run e = warpbook(fmt::format("--data-dir '{}' progress", empty.string()));
  CHECK(e.rc == 0);
  CHECK(e.out.rfind("No attempts yet", 0) == 0);
  CHECK(std::count(e.out.begin(), e.out.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(empty / "warpbook.db"));
  Run ej = warpbook(fmt::format("--data-dir '{}' progress --json", empty.string()));
  CHECK(ej.rc == 0);
  CHECK(nlohmann::json::parse(ej.out)["totals"]["attempts"] == 0);
}
