// Every puzzle on the simulator: reference and solution pass, starter fails. This is what lets
// CI check all content without a GPU.
#include "common/puzzle_suite.hpp"

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

TEST_CASE("every solution states its measured time in one machine-readable line") {
  // `// measured: 188.99 us on NVIDIA H200`: the gpu tests hold each solution to it (15%).
  for (const Puzzle& p : test::builtin_catalog().puzzles) {
    CAPTURE(p.id);
    REQUIRE(fs::exists(p.solution));
    test::MeasuredLine m = test::measured_line(test::read_file(p.solution));
    CHECK_MESSAGE(m.count == 1, p.solution.string()
                                    << " has " << m.count << " `// measured:` lines");
    CHECK_MESSAGE(m.us > 0, p.solution.string()
                                << ": the line should read `// measured: T us on GPU`");
    CHECK_MESSAGE(!m.device.empty(), p.solution.string() << ": the line names no GPU");
  }
}
