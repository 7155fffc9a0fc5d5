// Every puzzle on the GPU: reference and solution pass (the perf size included, and timed),
// the starter fails. Prints each solution's figures: time, GB/s, speed of light, medal. Then every
// kernel a lesson ships, timed the same way and held to its `// measured:` line.
#include "common/puzzle_suite.hpp"
#include "core/roofline.hpp"

#include <cstdlib>

using namespace wb;

// How far a solution's time may be from the model's prediction on a GPU the solution has no
// measured line for. On the GPUs the model was validated on (an H200 and an H100 SXM) its worst
// solution was 1.17x off and its mean error 7% (docs/perf-model.md); a GPU whose profile is partly
// datasheet figures (`warpbook devices` says which) gets the margin of the model's references,
// 1.5x, which still fails a solution that lost a third of its speed or a model badly off there.
constexpr double kModelSlack = 1.5;

TEST_CASE("every puzzle on the GPU: reference and solution pass and are timed; the starter fails") {
  // Speed of light is scored against this GPU's measured ceilings, as a learner's would be after
  // `warpbook probe`: measure them first (a separate process) into a fresh data folder.
  char dir[] = "/tmp/warpbook-gpu-test-XXXXXX";
  REQUIRE(mkdtemp(dir));
  const char* exe = std::getenv("WARPBOOK_EXE");
  REQUIRE_MESSAGE(exe, "WARPBOOK_EXE is not set (ctest sets it)");
  CHECK(std::system(fmt::format("'{}' probe --data-dir '{}' > '{}/probe.txt' 2>&1", exe, dir, dir)
                        .c_str()) == 0);
  fmt::print("{}\n", test::read_file(fs::path(dir) / "probe.txt"));
  std::string why;
  auto gpu = make_cuda_backend(why);
  REQUIRE_MESSAGE(gpu, why);
  CheckOptions opt;
  opt.data_dir = dir;
  std::vector<std::string> table, short_of_gold, off_their_line, off_the_model, paste;
  test::check_every_puzzle(*gpu, opt, [&](const Puzzle& p, const char* role, const CheckReport& r) {
    std::string figures;
    if (r.perf && r.perf->timing.ok)
      figures = fmt::format("{:9.2f} us {:8.1f} GB/s {:9.1f} GFLOP/s {:5.1f}% SOL {}",
                            r.perf->timing.median_us, r.perf->gbps, r.perf->gflops,
                            100 * r.perf->speed_of_light, r.perf->medal);
    table.push_back(
        fmt::format("{:<24} {:<9} {:<13} {}", p.id, role, verdict_name(r.verdict), figures));
    // A solution's `// measured:` line for this GPU is what it takes here: more than 15% off it,
    // the header (and whatever lesson quotes it) no longer tells the truth. A GPU it has no line
    // for is held to the model's prediction for this GPU (its profile with the figures the probe
    // above measured): within kModelSlack, and the line to paste is printed.
    if (std::string(role) == "solution" && r.perf && r.perf->timing.ok) {
      const double us = r.perf->timing.median_us;
      const auto lines = test::measured_lines(test::read_file(p.solution));
      if (const test::MeasuredLine* m = test::measured_on(lines, r.device.name)) {
        const double ratio = us / m->us;
        std::string line = fmt::format(
            "{}: measured {:.2f} us, its header says {:.2f} us ({:.2f}x)", p.id, us, m->us, ratio);
        MESSAGE(line);
        if (ratio < 1 / 1.15 || ratio > 1.15) off_their_line.push_back(line);
      } else {
        paste.push_back(fmt::format("{}: // measured: {:.2f} us on {}", p.id, us, r.device.name));
        const GpuProfile* prof = profile_for_device(r.device);
        if (!prof) {
          MESSAGE(p.id << ": no GPU profile matches " << r.device.name
                       << ", so no prediction to hold its time to");
        } else if (!r.prediction || !r.prediction->ok) {
          off_the_model.push_back(
              fmt::format("{}: no prediction for the {} ({})", p.id, prof->name,
                          r.prediction ? r.prediction->error : std::string("the check made none")));
        } else {
          const double ratio = us / r.prediction->us;
          std::string line = fmt::format(
              "{}: measured {:.2f} us, the model predicts {:.2f} us for the {} ({:.2f}x)", p.id, us,
              r.prediction->us, prof->name, ratio);
          MESSAGE(line);
          if (ratio < 1 / kModelSlack || ratio > kModelSlack) off_the_model.push_back(line);
        }
      }
    }
    if (std::string(role) == "solution" && r.verdict == Verdict::passed && r.perf && !p.demo) {
      bool gold = r.perf->medal == "gold";
      if (!gold)
        short_of_gold.push_back(fmt::format("{} ({:.1f}% of speed of light, {})", p.id,
                                            100 * r.perf->speed_of_light, r.perf->medal));
    }
  });
  fmt::print("\n{:<24} {:<9} {:<13} figures at the perf size\n", "puzzle", "file", "verdict");
  for (auto& l : table) fmt::print("{}\n", l);
  for (auto& s : off_their_line)
    FAIL_CHECK("a solution's `// measured:` line is off by more than 15%: " << s);
  if (!paste.empty()) {
    fmt::print("\nsolutions with no `// measured:` line for the {}; the lines to paste:\n",
               gpu->info().name);
    for (auto& l : paste) fmt::print("  {}\n", l);
  }
  for (auto& s : off_the_model)
    FAIL_CHECK("a solution is further than " << kModelSlack << "x from the model: " << s);
  // Every solution must earn its gold bar (its puzzle's bar). Reported as its own ctest
  // entry, label "medals", so the engine's pass/fail stays readable on its own.
  if (std::getenv("WARPBOOK_REQUIRE_GOLD"))
    for (auto& s : short_of_gold) FAIL_CHECK("solution short of gold: " << s);
  else
    for (auto& s : short_of_gold) MESSAGE("solution short of gold: " << s);
}

TEST_CASE("every kernel a lesson ships on the GPU: it passes, and its `// measured:` line for this "
          "GPU holds within 15%") {
  // Lesson 0008's ladder quotes what each rung measured on one GPU; the sim tests hold the
  // lesson's table to the files' lines, this holds the lines to the GPU they name.
  std::string why;
  auto gpu = make_cuda_backend(why);
  REQUIRE_MESSAGE(gpu, why);
  CheckOptions opt;
  opt.seed = 0;
  int held = 0;
  std::vector<std::string> off_their_line;
  for (const test::LessonKernel& k : test::lesson_kernels()) {
    CAPTURE(k.file.string());
    REQUIRE_MESSAGE(k.puzzle, k.file.string() << ": no puzzle " << k.puzzle_id);
    const CheckReport r = check_puzzle(*k.puzzle, k.source, k.file.filename().string(), *gpu, opt);
    CHECK_MESSAGE(r.verdict == Verdict::passed, test::describe(r));
    const double us = r.perf && r.perf->timing.ok ? r.perf->timing.median_us : 0;
    const auto lines = test::measured_lines(k.source);
    const test::MeasuredLine* m = test::measured_on(lines, r.device.name);
    std::string line =
        fmt::format("{:<48} {:<13} {:10.2f} us", k.named, verdict_name(r.verdict), us);
    if (m && us > 0) {
      ++held;
      line += fmt::format("   its line says {:.2f} us ({:.2f}x)", m->us, us / m->us);
      if (us / m->us < 1 / 1.15 || us / m->us > 1.15) off_their_line.push_back(line);
    }
    MESSAGE(line);
  }
  for (auto& s : off_their_line)
    FAIL_CHECK("a lesson kernel's `// measured:` line is off by more than 15%: " << s);
  if (held == 0) MESSAGE("no lesson kernel has a `// measured:` line on " << gpu->info().name);
}
