// `warpbook tune` and `warpbook sweep` on the simulator: the search space, the @tune rewriting,
// the ranking (correct configurations first, by predicted time), failures with their reasons, a
// cancel, and a sweep whose predicted bandwidth climbs with size to the DRAM roof.
#include "common/puzzle_suite.hpp"
#include "core/sweep.hpp"
#include "core/tune.hpp"

#include <nlohmann/json.hpp>

using namespace wb;

namespace {

const Puzzle& puzzle(const std::string& id) {
  const Puzzle* p = test::builtin_catalog().find_puzzle(id);
  REQUIRE(p);
  return *p;
}

std::string read(const std::string& rel) {
  std::string s = test::read_file(fs::path(WARPBOOK_SOURCE_ROOT) / rel);
  REQUIRE_MESSAGE(!s.empty(), "cannot read " << rel);
  return s;
}

std::unique_ptr<Backend> sim() {
  std::string why;
  auto b = make_backend("sim", why);
  REQUIRE_MESSAGE(b, why);
  return b;
}

} // namespace

TEST_CASE("tune: candidates, the space, and --only") {
  const Puzzle& p = puzzle("01-vector-add");
  // BLOCK is a range [32, 1024]: its powers of two; ITEMS lists its values.
  CHECK(tune_candidates(*p.tunable("BLOCK")) == std::vector<int64_t>{32, 64, 128, 256, 512, 1024});
  CHECK(tune_candidates(*p.tunable("ITEMS")) == std::vector<int64_t>{1, 2, 4, 8, 16});
  std::string error;
  CHECK(tune_space(p, {}, error).size() == 30);
  CHECK(error.empty());
  auto only = parse_only({"BLOCK=128,256", "ITEMS=4"});
  auto space = tune_space(p, only, error);
  REQUIRE(space.size() == 2);
  CHECK(space[0] == TuneConfig{{"BLOCK", 128}, {"ITEMS", 4}});
  CHECK(space[1] == TuneConfig{{"BLOCK", 256}, {"ITEMS", 4}});

  tune_space(p, parse_only({"WARPS=4"}), error);
  CHECK(error.find("no tunable 'WARPS'") != std::string::npos);
  CHECK(error.find("BLOCK, ITEMS") != std::string::npos);
  error.clear();
  tune_space(p, parse_only({"ITEMS=3"}), error);
  CHECK(error.find("ITEMS=3") != std::string::npos);
  CHECK_THROWS_WITH_AS(parse_only({"BLOCK"}), doctest::Contains("NAME=V1,V2"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_only({"BLOCK=12x"}), doctest::Contains("'12x' is not an integer"),
                       std::invalid_argument);

  // A wide range keeps to powers of two within 16x of the default (GRID of puzzle 08).
  Tunable grid;
  grid.name = "GRID";
  grid.default_value = 1024;
  grid.min = 1;
  grid.max = 65535;
  auto g = tune_candidates(grid);
  CHECK(g.front() == 64);
  CHECK(g.back() == 16384);
}

TEST_CASE("tune: @tune lines are rewritten in place, added where missing, and nothing else moves") {
  std::string src = "// header\n// more\n#define X 1\n// @tune BLOCK=256\nint a;\n";
  std::string out = source_with_tunables(src, {{"BLOCK", 64}, {"ITEMS", 4}});
  CHECK(out == "// header\n// more\n#define X 1\n// @tune BLOCK=64\nint a;\n// @tune ITEMS=4\n");
  std::string top = source_with_tunables(src, {{"BLOCK", 64}, {"ITEMS", 4}}, true);
  CHECK(top == "// header\n// more\n// @tune ITEMS=4\n#define X 1\n// @tune BLOCK=64\nint a;\n");
  // The rewritten file resolves to exactly the configuration.
  std::vector<Diagnostic> d;
  auto t = resolve_tunables(puzzle("01"), top, "f.cu", d);
  CHECK(d.empty());
  CHECK(t == TuneConfig{{"BLOCK", 64}, {"ITEMS", 4}});
  // No trailing newline, no tune lines.
  CHECK(source_with_tunables("int a;", {{"BLOCK", 32}}) == "int a;\n// @tune BLOCK=32\n");
}

TEST_CASE("tune: puzzle 01's solution on the simulator, ranked by predicted time") {
  const Puzzle& p = puzzle("01-vector-add");
  auto backend = sim();
  std::string error;
  // ITEMS=1 does not compile in the solution (its float4 path needs ITEMS >= 4), BLOCK=32 with
  // ITEMS=4 leaves most of each SM idle: the model must rank it last of the correct ones.
  auto space = tune_space(p, parse_only({"BLOCK=32,256", "ITEMS=1,4"}), error);
  REQUIRE(space.size() == 4);
  TuneOptions opt;
  opt.check.seed = 7;
  std::vector<std::string> seen;
  opt.on_row = [&](const TuneRow& r, int done, int total) {
    CHECK(total == 4);
    CHECK(done == int(seen.size()) + 1);
    seen.push_back(config_text(r.config));
  };
  TuneReport t = tune_puzzle(p, read("solutions/01-vector-add.cu"), "s.cu", *backend, space, opt);
  CHECK(seen.size() == 4);
  REQUIRE(t.rows.size() == 4);
  CHECK(t.seed == 7);
  REQUIRE(t.winner == 0);
  CHECK(t.rows[0].config == TuneConfig{{"BLOCK", 256}, {"ITEMS", 4}});
  CHECK(t.rows[1].config == TuneConfig{{"BLOCK", 32}, {"ITEMS", 4}});
  CHECK(t.rows[0].predicted);
  CHECK(t.rows[0].us > 150);
  CHECK(t.rows[1].us > 1.4 * t.rows[0].us);
  CHECK(t.rows[0].limiter.rfind("DRAM", 0) == 0);
  for (int i : {2, 3}) {
    CHECK(t.rows[size_t(i)].verdict == Verdict::compile_error);
    CHECK(t.rows[size_t(i)].config.at("ITEMS") == 1);
    CHECK(!t.rows[size_t(i)].why.empty());
    CHECK(t.rows[size_t(i)].us == 0);
  }
  // The file says BLOCK=1024 ITEMS=4, which is outside this space: no default row, no margin.
  CHECK(t.default_row == -1);
  CHECK(t.margin() == 0);

  // JSON both ways (the runner sends it to the window).
  TuneReport back = tune_from_json(tune_to_json(t));
  REQUIRE(back.rows.size() == 4);
  CHECK(back.winner == 0);
  CHECK(back.rows[0].config == t.rows[0].config);
  CHECK(back.rows[2].verdict == Verdict::compile_error);
  CHECK(back.rows[1].us == doctest::Approx(t.rows[1].us));
}

TEST_CASE("tune: the starter fails in every configuration; a cancel stops early") {
  const Puzzle& p = puzzle("01-vector-add");
  auto backend = sim();
  std::string error;
  auto space = tune_space(p, parse_only({"BLOCK=64,128,256", "ITEMS=1"}), error);
  TuneOptions opt;
  opt.jobs = 1;
  TuneReport t =
      tune_puzzle(p, read("puzzles/01-vector-add/starter.cu"), "starter.cu", *backend, space, opt);
  CHECK(t.winner == -1);
  for (auto& r : t.rows) CHECK(r.verdict != Verdict::passed);
  // BLOCK=256 ITEMS=1 is the starter's own configuration.
  REQUIRE(t.default_row >= 0);
  CHECK(t.rows[size_t(t.default_row)].config.at("BLOCK") == 256);

  std::atomic<bool> stop{false};
  opt.cancel = &stop;
  opt.on_row = [&](const TuneRow&, int, int) { stop = true; };
  TuneReport c = tune_puzzle(p, read("solutions/01-vector-add.cu"), "s.cu", *backend, space, opt);
  CHECK(c.cancelled);
  CHECK(c.rows.size() == 1);
  CHECK(c.configurations == 3);
}

TEST_CASE("sweep: --size words") {
  const Puzzle& p = puzzle("02-row-sum");
  SweepSpec s = parse_sweep(p, {"rows=2^10..2^14", "cols=1000"});
  CHECK(s.name == "rows");
  CHECK(s.values == std::vector<int64_t>{1024, 2048, 4096, 8192, 16384});
  CHECK(s.fixed.at("cols") == 1000);
  CHECK(parse_sweep(p, {"rows=1K..64K*4"}).values ==
        std::vector<int64_t>{1024, 4096, 16384, 65536});
  CHECK(parse_sweep(p, {"rows=1000..4000+1000"}).values ==
        std::vector<int64_t>{1000, 2000, 3000, 4000});
  CHECK(parse_sweep(p, {"rows=7,1,3"}).values == std::vector<int64_t>{1, 3, 7});
  // No words: the largest [perf] size, doubling from 2^10 to its [perf] value.
  SweepSpec d = parse_sweep(puzzle("01"), {});
  CHECK(d.name == "n");
  CHECK(d.values.front() == 1024);
  CHECK(d.values.back() == 67108864);
  CHECK(d.values.size() == 17);
  CHECK_THROWS_WITH_AS(parse_sweep(p, {"n=2^10..2^20"}), doctest::Contains("no size 'n'"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_sweep(p, {"rows=2^10..2^12", "cols=2^10..2^12"}),
                       doctest::Contains("only one size"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_sweep(p, {"rows=ten"}), doctest::Contains("'ten' is not a size"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_sweep(p, {"rows=100..10"}), doctest::Contains("go up"),
                       std::invalid_argument);
}

TEST_CASE("sweep: puzzle 01 on the simulator climbs to the DRAM roof, the starter is not drawn") {
  const Puzzle& p = puzzle("01-vector-add");
  auto backend = sim();
  SweepSpec spec = parse_sweep(p, {"n=2^12..2^26*4"});
  SweepOptions opt;
  int points = 0;
  opt.on_point = [&](const SweepSeries&, const SweepPoint&, int done, int total) {
    CHECK(total == 24);
    points = done;
  };
  SweepReport r =
      sweep_puzzle(p, read("puzzles/01-vector-add/starter.cu"), "starter.cu", *backend, spec, opt);
  CHECK(points == 24);
  REQUIRE(r.series.size() == 3);
  CHECK(r.series[0].name == "your kernel");
  CHECK(r.series[1].name == "solution");
  CHECK(r.series[2].name == "reference");
  // The starter reads past n (its guard is missing): a fault, named, and no figures.
  CHECK(r.series[0].problem.find("out-of-bounds") != std::string::npos);
  for (auto& pt : r.series[0].points) CHECK(pt.us == 0);
  CHECK(r.metric == "GB/s");
  REQUIRE(r.roofs.size() == 1);
  CHECK(r.roofs[0].name == "DRAM");
  const auto& sol = r.series[1].points;
  REQUIRE(sol.size() == 8);
  // Launch-bound at 4K (a few us, a few GB/s), near the roof at 64M.
  CHECK(sol.front().us < 10);
  CHECK(sol.front().gbps < 50);
  CHECK(sol.back().gbps > 0.85 * r.roofs[0].value);
  for (size_t i = 1; i < sol.size(); ++i) {
    CHECK(sol[i].us >= sol[i - 1].us);
    CHECK(sol[i].gbps > sol[i - 1].gbps);
    CHECK(sol[i].predicted);
  }
  CHECK(r.l2_bytes > 40e6);

  // The chart: valid SVG with the three legend entries, the roof and the L2 marker.
  std::string svg = sweep_svg(r);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("your kernel: failed its check") != std::string::npos);
  CHECK(svg.find("solution (predicted)") != std::string::npos);
  CHECK(svg.find("DRAM 4.56 TB/s") != std::string::npos);
  CHECK(svg.find("data &gt; L2") != std::string::npos);
  SweepReport back = sweep_from_json(sweep_to_json(r));
  CHECK(back.series.size() == 3);
  CHECK(back.series[1].points.back().gbps == doctest::Approx(sol.back().gbps));
  CHECK(back.roofs.size() == 1);
}
