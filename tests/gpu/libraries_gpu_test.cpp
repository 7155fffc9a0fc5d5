// CUDA's device libraries on the GPU: every kernel of tests/libraries passes its puzzle, timed at
// the perf size beside the puzzle's own solution (the table lesson 0005 quotes).
#include "common/library_suite.hpp"
#include "gpu_util.hpp"

using namespace wb;

TEST_CASE("device libraries: every kernel of tests/libraries passes its puzzle on the GPU") {
  auto gpu = gpu::backend();
  CheckOptions opt;
  opt.seed = 0;
  for (const auto& k : test::library_kernels()) {
    CAPTURE(k.file.filename().string());
    const Puzzle& p = test::library_puzzle(k);
    const CheckReport r =
        check_puzzle(p, test::read_file(k.file), k.file.filename().string(), *gpu, opt);
    CHECK_MESSAGE(r.verdict == Verdict::passed, test::describe(r));
    const CheckReport s =
        check_puzzle(p, test::read_file(p.solution), p.solution.filename().string(), *gpu, opt);
    auto us = [](const CheckReport& c) { return c.perf ? c.perf->timing.median_us : 0.0; };
    MESSAGE(fmt::format("library {:<40} {:<14} {:>10.1f} us   solution {:>10.1f} us   {}",
                        k.file.filename().string(), verdict_name(r.verdict), us(r), us(s),
                        k.library));
  }
}
