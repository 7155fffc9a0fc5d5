// Every puzzle on the simulator: reference and solution pass, starter fails. This is what lets
// CI check all content without a GPU.
#include "common/puzzle_suite.hpp"

#include <set>

using namespace wb;

TEST_CASE("every puzzle on the simulator: reference and solution pass, the starter fails") {
  std::string why;
  auto sim = make_sim_backend(why);
  REQUIRE_MESSAGE(sim, why);
  CheckOptions opt;
  opt.seed = 0; // fresh inputs every run: the report's seed replays a failure
  opt.perf_case = false;
  test::check_every_puzzle(*sim, opt, [](const Puzzle& p, const char* role, const CheckReport& r) {
    MESSAGE(fmt::format("{:<24} {:<9} {:<13} {:.0f} ms (seed {})", p.id, role,
                        verdict_name(r.verdict), r.total_ms, r.seed));
  });
}

TEST_CASE("every solution states its measured time in machine-readable lines, one per GPU") {
  // `// measured: 188.99 us on NVIDIA H200`: the gpu tests hold each solution to the line of the
  // GPU they run on (15%).
  for (const Puzzle& p : test::builtin_catalog().puzzles) {
    CAPTURE(p.id);
    REQUIRE(fs::exists(p.solution));
    const auto lines = test::measured_lines(test::read_file(p.solution));
    CHECK_MESSAGE(!lines.empty(), p.solution.string() << " has no `// measured:` line");
    std::set<std::string> gpus;
    for (const test::MeasuredLine& m : lines) {
      CHECK_MESSAGE(m.us > 0, p.solution.string()
                                  << ": the line should read `// measured: T us on GPU`");
      CHECK_MESSAGE(!m.device.empty(), p.solution.string() << ": a line names no GPU");
      CHECK_MESSAGE(gpus.insert(m.device).second, p.solution.string()
                                                      << " has two lines for " << m.device);
    }
  }
}
