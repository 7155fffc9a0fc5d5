// CUDA's device libraries on the GPU: every kernel of tests/libraries passes its puzzle, timed at
// the perf size beside the puzzle's own solution, and the times lesson 0005 quotes for them are
// what they measure (within 15%) on the GPU its table names.
#include "common/library_suite.hpp"
#include "gpu_util.hpp"

#include <fstream>

using namespace wb;

namespace {

// Lesson 0005's table: a header "| kernel | what it uses | H200 | ... |" names the GPU the times
// were taken on, and "| `tests/libraries/FILE` | ... | 71.1 µs | 70.7 µs |" gives FILE: 71.1.
struct QuotedTimes {
  std::string gpu; // as the table's header names it ("H200"): a part of the device's name
  std::map<std::string, double> us;
};
QuotedTimes lesson_times() {
  QuotedTimes out;
  std::istringstream in(test::read_file(fs::path(WARPBOOK_SOURCE_ROOT) / "lessons" /
                                        "0005-reductions" / "lesson.md"));
  static const std::regex header(R"(^\| kernel \| what it uses \| ([^|]+?) \|)");
  static const std::regex row(R"(^\| `tests/libraries/([^`]+)` \|[^|]*\| ([0-9.]+) µs \|)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, header)) out.gpu = m[1];
    if (std::regex_search(line, m, row)) out.us[m[1]] = std::stod(m[2]);
  }
  return out;
}

} // namespace

TEST_CASE("device libraries: every kernel of tests/libraries passes its puzzle on the GPU") {
  auto gpu = gpu::backend();
  CheckOptions opt;
  opt.seed = 0;
  const QuotedTimes quoted = lesson_times();
  REQUIRE(quoted.us.size() >= 4);
  REQUIRE_FALSE(quoted.gpu.empty());
  // Times are a GPU's own: they are held to the lesson's figures only on the GPU it names.
  const bool same_gpu = gpu->info().name.find(quoted.gpu) != std::string::npos;
  if (!same_gpu)
    MESSAGE("lesson 0005's times are the " << quoted.gpu << "'s; this is " << gpu->info().name
                                           << ": they are listed, not checked");
  for (const auto& k : test::library_kernels()) {
    CAPTURE(k.file.filename().string());
    const Puzzle& p = test::library_puzzle(k);
    const CheckReport r =
        check_puzzle(p, test::read_file(k.file), k.file.filename().string(), *gpu, opt);
    CHECK_MESSAGE(r.verdict == Verdict::passed, test::describe(r));
    const CheckReport s = fs::exists(p.solution)
                              ? check_puzzle(p, test::read_file(p.solution),
                                             p.solution.filename().string(), *gpu, opt)
                              : CheckReport{};
    auto us = [](const CheckReport& c) { return c.perf ? c.perf->timing.median_us : 0.0; };
    if (auto it = quoted.us.find(k.file.filename().string());
        same_gpu && it != quoted.us.end() && us(r) > 0)
      CHECK_MESSAGE(std::abs(us(r) / it->second - 1) < 0.15,
                    "lesson 0005 quotes " << it->second << " us, measured " << us(r) << " us");
    MESSAGE(fmt::format("library {:<40} {:<14} {:>10.1f} us   solution {:>10.1f} us   {}",
                        k.file.filename().string(), verdict_name(r.verdict), us(r), us(s),
                        k.library));
  }
}

TEST_CASE("device libraries: the cooperative test puzzle on the GPU: a real grid barrier") {
  auto gpu = gpu::backend();
  const Puzzle* p = test::library_catalog().find_puzzle("01-grid-dot");
  REQUIRE(p);
  CheckOptions opt;
  opt.seed = 0;
  const CheckReport ref =
      check_puzzle(*p, test::read_file(p->reference), "reference.cu", *gpu, opt);
  CHECK_MESSAGE(ref.verdict == Verdict::passed, test::describe(ref));
  const CheckReport start = check_puzzle(*p, test::read_file(p->starter), "starter.cu", *gpu, opt);
  CHECK_MESSAGE(start.verdict == Verdict::wrong_answer, test::describe(start));
}

TEST_CASE("device libraries: a grid sync without a cooperative launch is named on the GPU too") {
  // The trap poisons the context: run it as a learner would, in a process of its own.
  const char* exe = std::getenv("WARPBOOK_EXE");
  REQUIRE_MESSAGE(exe, "WARPBOOK_EXE is not set (ctest sets it)");
  char dir[] = "/tmp/warpbook-gridsync-XXXXXX";
  REQUIRE(mkdtemp(dir));
  const fs::path src = fs::path(dir) / "k.cu";
  std::ofstream(src) << test::kGridSyncInPuzzle08;
  const fs::path out = fs::path(dir) / "out.txt";
  std::system(fmt::format("'{}' check 08 '{}' --data-dir '{}' > '{}' 2>&1", exe, src.string(), dir,
                          out.string())
                  .c_str());
  const std::string text = test::read_file(out);
  MESSAGE(text);
  CHECK(text.find("dot_partial synchronises the whole grid "
                  "(cooperative_groups::this_grid().sync()), which needs a cooperative launch") !=
        std::string::npos);
}
