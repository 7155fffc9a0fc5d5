// The kernels a lesson ships beside lesson.md (lessons/NNNN-slug/**/*.cu, such as lesson 0008's
// SGEMM ladder and lesson 0006's block scan) are exercises the learner runs against a puzzle:
// each names it in a `// Run:  warpbook check PUZZLE FILE` line and must pass every case there.
// Files with no such line (lesson 0015's standalone program, built with nvcc) are not checked.
#include "common/puzzle_suite.hpp"

using namespace wb;

TEST_CASE("every kernel a lesson ships passes the puzzle its Run line names") {
  std::string why;
  auto sim = make_sim_backend(why);
  REQUIRE_MESSAGE(sim, why);
  CheckOptions opt;
  opt.seed = 0; // fresh inputs every run: the report's seed replays a failure
  opt.perf_case = false;
  int checked = 0;
  for (const test::LessonKernel& k : test::lesson_kernels()) {
    CAPTURE(k.file.string());
    REQUIRE_MESSAGE(k.puzzle, k.file.string() << ": no puzzle " << k.puzzle_id);
    const fs::path named = fs::path(WARPBOOK_SOURCE_ROOT) / k.named;
    CHECK_MESSAGE((fs::exists(named) && fs::equivalent(named, k.file)),
                  k.file.string() << ": its Run line names " << k.named);
    CheckReport r = check_puzzle(*k.puzzle, k.source, k.file.filename().string(), *sim, opt);
    CHECK_MESSAGE(r.verdict == Verdict::passed, test::describe(r));
    MESSAGE(fmt::format("{} on {}: {} ({:.0f} ms, seed {})", k.file.filename().string(),
                        k.puzzle->id, verdict_name(r.verdict), r.total_ms, r.seed));
    ++checked;
  }
  CHECK(checked >= 6); // lesson 0006's block scan and lesson 0008's five rungs
}
