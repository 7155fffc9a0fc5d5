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
  // GPU they run on (15%), and to the model's prediction for a GPU it has no line for.
  for (const Puzzle& p : test::builtin_catalog().puzzles) {
    CAPTURE(p.id);
    REQUIRE(fs::exists(p.solution));
    const auto lines = test::measured_lines(test::read_file(p.solution));
    CHECK_MESSAGE(!lines.empty(), p.solution.string() << " has no `// measured:` line");
    for (size_t i = 0; i < lines.size(); ++i) {
      const test::MeasuredLine& m = lines[i];
      CHECK_MESSAGE(m.us > 0, p.solution.string()
                                  << ": the line should read `// measured: T us on GPU`");
      CHECK_MESSAGE(!m.device.empty(), p.solution.string() << ": a line names no GPU");
      for (size_t j = 0; j < i; ++j)
        CHECK_MESSAGE(lines[j].device != m.device,
                      p.solution.string() << " has two `// measured:` lines for " << m.device);
    }
  }
}

TEST_CASE("measured lines: one per GPU, each read whole") {
  const auto two = test::measured_lines("// measured: 183.33 us on NVIDIA H200\n"
                                        "// measured: 251.5 us on NVIDIA H100 80GB HBM3\r\n"
                                        "int x; // measured: 1 us on A\n");
  REQUIRE(two.size() == 2);
  CHECK(two[0].us == doctest::Approx(183.33));
  CHECK(two[0].device == "NVIDIA H200");
  CHECK(two[1].device == "NVIDIA H100 80GB HBM3");
  REQUIRE(test::measured_on(two, "NVIDIA H100 80GB HBM3"));
  CHECK(test::measured_on(two, "NVIDIA H100 80GB HBM3")->us == doctest::Approx(251.5));
  CHECK_FALSE(test::measured_on(two, "NVIDIA H100"));
  for (const char* bad : {"// measured: 12 ms on NVIDIA H200", "// measured: x us on NVIDIA H200",
                          "// measured: -3 us on NVIDIA H200", "// measured: nan us on NVIDIA H200",
                          "// measured: 12 us NVIDIA H200"}) {
    CAPTURE(bad);
    const auto l = test::measured_lines(bad);
    REQUIRE(l.size() == 1);
    CHECK(l[0].us == 0);
  }
  CHECK(test::measured_lines("// measured: 12 us on ")[0].device.empty());
  CHECK(test::measured_lines("no line here").empty());
}
