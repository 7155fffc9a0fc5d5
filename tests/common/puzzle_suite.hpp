// The check every puzzle must pass on a backend: its reference and its solution pass, its
// starter fails. Shared by the sim tests (CI) and the gpu tests (the device machine).
#pragma once
#include "core/catalog.hpp"
#include "core/check.hpp"
#include "core/report_json.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

namespace wb::test {

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline const Catalog& builtin_catalog() {
  static Catalog c = load_catalog(WARPBOOK_SOURCE_ROOT);
  return c;
}

inline std::string describe(const CheckReport& r) {
  std::string s =
      fmt::format("{} [{}] {}: {}", r.file, r.device.backend, verdict_name(r.verdict), r.summary);
  for (auto& d : r.diagnostics) s += "\n  " + d.str();
  return s;
}

// A solution's headline figures, written in its header as `// measured: 188.99 us on NVIDIA H200`,
// one line per GPU it was measured on (the device's name as the driver gives it): what the kernel
// took at the puzzle's perf size on that GPU (the median of `warpbook check`). The gpu tests hold
// a solution to the line of the GPU they run on; the sim tests check that every solution has at
// least one, each well formed, and no GPU twice.
struct MeasuredLine {
  double us = 0;      // 0: the line is not `T us on GPU`
  std::string device; // empty: the line names no GPU
};
inline std::vector<MeasuredLine> measured_lines(const std::string& source) {
  std::vector<MeasuredLine> lines;
  std::istringstream in(source);
  const std::string key = "// measured: ";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    MeasuredLine m;
    std::istringstream rest(line.substr(key.size()));
    std::string unit, on;
    if (!(rest >> m.us >> unit >> on) || unit != "us" || on != "on" || !(m.us > 0)) m.us = 0;
    std::getline(rest, m.device);
    const size_t a = m.device.find_first_not_of(' '), b = m.device.find_last_not_of(" \r");
    m.device = a == std::string::npos ? "" : m.device.substr(a, b - a + 1);
    lines.push_back(std::move(m));
  }
  return lines;
}
// The line measured on `device` (its exact name), or nullptr.
inline const MeasuredLine* measured_on(const std::vector<MeasuredLine>& lines,
                                       const std::string& device) {
  for (auto& m : lines)
    if (m.device == device) return &m;
  return nullptr;
}

// The kernels a lesson ships beside lesson.md (lessons/NNNN-slug/**/*.cu), each an exercise for
// the puzzle its `// Run:  warpbook check PUZZLE FILE` line names. Files with no such line (a
// standalone program built with nvcc) are not among them.
struct LessonKernel {
  fs::path file;
  std::string named; // the path its Run line gives, from the repository's root
  const Puzzle* puzzle = nullptr;
  std::string puzzle_id;
  std::string source;
};
inline std::vector<LessonKernel> lesson_kernels() {
  static const std::regex run(R"(//\s*Run:\s*warpbook check (\S+) (\S+))");
  std::vector<LessonKernel> out;
  for (auto& e : fs::recursive_directory_iterator(fs::path(WARPBOOK_SOURCE_ROOT) / "lessons"))
    if (e.is_regular_file() && e.path().extension() == ".cu") {
      LessonKernel k{e.path(), "", nullptr, "", read_file(e.path())};
      std::smatch m;
      if (!std::regex_search(k.source, m, run)) continue;
      k.puzzle_id = m[1].str();
      k.named = m[2].str();
      k.puzzle = builtin_catalog().find_puzzle(k.puzzle_id);
      out.push_back(std::move(k));
    }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.file < b.file; });
  return out;
}

// Runs reference, solution and starter of every puzzle; `on_result` sees each report.
// WARPBOOK_PUZZLES="25 26 34" keeps only the puzzles whose ids start so (a GPU call too short for
// every puzzle can finish the rest); unset, every puzzle.
inline bool puzzle_selected(const std::string& id) {
  const char* env = std::getenv("WARPBOOK_PUZZLES");
  if (!env || !*env) return true;
  std::string list = env;
  std::replace(list.begin(), list.end(), ',', ' ');
  std::istringstream in(list);
  for (std::string w; in >> w;)
    if (id.rfind(w, 0) == 0) return true;
  return false;
}

template <class F> void check_every_puzzle(Backend& backend, const CheckOptions& opt, F on_result) {
  const Catalog& cat = builtin_catalog();
  REQUIRE_FALSE(cat.puzzles.empty());
  for (const Puzzle& p : cat.puzzles) {
    if (!puzzle_selected(p.id)) continue;
    struct Item {
      const char* role;
      fs::path file;
      bool should_pass;
    };
    for (const Item& it : {Item{"reference", p.reference, true}, Item{"solution", p.solution, true},
                           Item{"starter", p.starter, p.demo}}) {
      CAPTURE(p.id);
      CAPTURE(std::string(it.role));
      if (!fs::exists(it.file)) {
        FAIL_CHECK(fmt::format("{} has no {} ({})", p.id, it.role, it.file.string()));
        continue;
      }
      CheckReport r =
          check_puzzle(p, read_file(it.file), it.file.filename().string(), backend, opt);
      if (it.should_pass)
        CHECK_MESSAGE(r.verdict == Verdict::passed, describe(r));
      else
        CHECK_MESSAGE((r.verdict == Verdict::wrong_answer || r.verdict == Verdict::runtime_fault),
                      describe(r));
      on_result(p, it.role, r);
      if (!backend.usable()) return;
    }
  }
}

} // namespace wb::test
