// warpbook grade DIR: a class's submissions, each checked in its own runner with a time and a
// memory limit, as a table, CSV and JSON, with a summary per puzzle (app/core/grade.hpp).
#include "command.hpp"
#include "core/catalog.hpp"
#include "core/grade.hpp"
#include "core/workspace.hpp"

#include <fmt/format.h>
#include <fstream>
#include <stdexcept>

namespace {

using namespace wb;

struct GradeArgs {
  std::string dir, backend = "auto", runner, csv, json;
  int jobs = 1;
  double timeout_s = 120, memory_mib = 4096;
  size_t max_kib = 256;
  bool force = false;
};

// A regular file (or a new one) is replaced atomically; anything else (/dev/stdout, a pipe) is
// written in place, since a rename would replace the device node itself.
std::string write_output(const std::string& path, const std::string& text) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st) || fs::is_regular_file(st)) return write_file_atomic(path, text);
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.flush();
  return out ? "" : fmt::format("cannot write {}", path);
}

int run_grade(const cli::Global& g, const GradeArgs& a) {
  Catalog cat = load_catalog(default_catalog_root(g.catalog));
  for (auto& e : cat.errors) fmt::print(stderr, "warning: {}\n", e.str());
  if (cat.puzzles.empty())
    throw cli::UsageError(fmt::format("the catalog {} holds no puzzles", cat.root.string()));

  grade::Options opt;
  opt.dir = a.dir;
  opt.backend = a.backend;
  opt.jobs = a.jobs;
  opt.runner_command = a.runner;
  opt.catalog = g.catalog;
  opt.timeout_s = a.timeout_s;
  opt.memory_mib = a.memory_mib;
  opt.max_bytes = a.max_kib * 1024;
  opt.force = a.force;
  opt.progress = [](const std::string& line) { fmt::print(stderr, "grade: {}\n", line); };

  grade::Result res;
  try {
    res = grade::grade_class(cat, opt);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
  for (auto& w : res.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (res.rows.empty())
    throw cli::UsageError(
        fmt::format("no submissions in {}: expected {}/STUDENT/PUZZLE.cu or {}/STUDENT.PUZZLE.cu",
                    a.dir, a.dir, a.dir));

  fmt::print("{}", grade::format_table(res));
  fmt::print("\n{} submission{}: {} checked now, {} unchanged since the last run{}\n",
             res.rows.size(), res.rows.size() == 1 ? "" : "s", res.checked, res.unchanged,
             res.unchanged ? " (--force checks them again)" : "");
  // The table is out before any file: a path that cannot be written costs no results.
  if (!a.csv.empty()) {
    if (auto why = write_output(a.csv, grade::to_csv(res.rows)); !why.empty())
      throw cli::UsageError(fmt::format("--csv: {}", why));
    fmt::print("wrote {}\n", a.csv);
  }
  if (!a.json.empty()) {
    if (auto why = write_output(a.json, grade::to_json(res, opt)); !why.empty())
      throw cli::UsageError(fmt::format("--json: {}", why));
    fmt::print("wrote {}\n", a.json);
  }
  return 0; // graded, whatever the verdicts
}

cli::Registration reg("grade", [](CLI::App& app, cli::Global& g) -> std::function<int()> {
  auto a = std::make_shared<GradeArgs>();
  auto* sub = app.add_subcommand(
      "grade", "check a class's submissions (DIR/STUDENT/PUZZLE.cu or DIR/STUDENT.PUZZLE.cu), "
               "each in its own runner, into a table, CSV and JSON");
  sub->add_option("DIR", a->dir, "the class folder")->required();
  cli::add_backend_option(sub, a->backend);
  sub->add_option("--jobs,-j", a->jobs, "submissions checked at once, one runner each")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--runner", a->runner,
                  "the command that starts a runner (\"ssh gpu-box warpbook runner\"); default: "
                  "this warpbook");
  sub->add_option("--timeout", a->timeout_s,
                  "seconds a submission may take before its runner "
                  "is killed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--memory", a->memory_mib,
                  "MiB of resident memory a local runner (and what it starts) may use before it "
                  "is killed; 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--max-kib", a->max_kib, "larger files are not checked")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--csv", a->csv, "write the rows as CSV here");
  sub->add_option("--json", a->json, "write the rows and the summary as JSON here");
  sub->add_flag("--force", a->force, "check every file again, unchanged or not");
  return [a, &g] { return run_grade(g, *a); };
});

} // namespace
