// The kernels a lesson ships beside lesson.md (lessons/NNNN-slug/**/*.cu, such as lesson 0008's
// SGEMM ladder and lesson 0006's block scan) are exercises the learner runs against a puzzle:
// each names it in a `// Run:  warpbook check PUZZLE FILE` line and must pass every case there.
// Files with no such line (lesson 0015's standalone program, built with nvcc) are not checked.
#include "common/puzzle_suite.hpp"

#include <regex>

using namespace wb;

TEST_CASE("every kernel a lesson ships passes the puzzle its Run line names") {
  std::string why;
  auto sim = make_sim_backend(why);
  REQUIRE_MESSAGE(sim, why);
  const Catalog& cat = test::builtin_catalog();
  const std::regex run(R"(//\s*Run:\s*warpbook check (\S+) (\S+))");
  CheckOptions opt;
  opt.seed = 0; // fresh inputs every run: the report's seed replays a failure
  opt.perf_case = false;
  int checked = 0;
  std::vector<fs::path> files;
  for (auto& e : fs::recursive_directory_iterator(fs::path(WARPBOOK_SOURCE_ROOT) / "lessons"))
    if (e.is_regular_file() && e.path().extension() == ".cu") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const std::string src = test::read_file(f);
    std::smatch m;
    if (!std::regex_search(src, m, run)) continue;
    CAPTURE(f.string());
    const Puzzle* p = cat.find_puzzle(m[1].str());
    REQUIRE_MESSAGE(p, f.string() << ": no puzzle " << m[1].str());
    const fs::path named = fs::path(WARPBOOK_SOURCE_ROOT) / m[2].str();
    CHECK_MESSAGE(fs::equivalent(named, f), f.string() << ": its Run line names " << m[2].str());
    CheckReport r = check_puzzle(*p, src, f.filename().string(), *sim, opt);
    CHECK_MESSAGE(r.verdict == Verdict::passed, test::describe(r));
    MESSAGE(fmt::format("{} on {}: {} ({:.0f} ms, seed {})", f.filename().string(), p->id,
                        verdict_name(r.verdict), r.total_ms, r.seed));
    ++checked;
  }
  CHECK(checked >= 6); // lesson 0006's block scan and lesson 0008's five rungs
}
