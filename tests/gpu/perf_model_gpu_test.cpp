// The performance model against this GPU: a subset of the validation corpus
// (bench/perfmodel/corpus.toml) is timed here and predicted for this GPU's profile, side by side
// in one run. Fails when fewer than 80% of the predictions are within 2x of the measurement (the
// whole corpus and its tables: bench/perfmodel/validate.py, docs/perf-model.md).
#include "common/puzzle_suite.hpp"
#include "core/perf/explain.hpp"

#include <cmath>

using namespace wb;

TEST_CASE("perf model: predictions within 2x of this GPU on a subset of the corpus") {
  std::string why;
  auto gpu = make_cuda_backend(why);
  REQUIRE_MESSAGE(gpu, why);
  // Spread over the limiters and over 1% to 95% of speed of light.
  const std::pair<const char*, const char*> kernels[] = {
      {"01-vector-add", "solutions/01-vector-add.cu"},
      {"03-softmax", "solutions/03-softmax.cu"},
      {"07-transpose", "solutions/07-transpose.cu"},
      {"17-tiled-sgemm", "solutions/17-tiled-sgemm.cu"},
      {"01-vector-add", "puzzles/01-vector-add/reference.cu"},
      {"02-row-sum", "puzzles/02-row-sum/reference.cu"},
      {"07-transpose", "puzzles/07-transpose/reference.cu"},
      {"13-layernorm", "puzzles/13-layernorm/reference.cu"},
      {"91-demo-strided-copy", "puzzles/91-demo-strided-copy/starter.cu"},
      {"01-vector-add", "bench/perfmodel/corpus/v01-vadd-block32.cu"},
      {"02-row-sum", "bench/perfmodel/corpus/v02-rowsum-atomic.cu"},
      {"06-gelu-half2", "bench/perfmodel/corpus/v06-gelu-fp64.cu"},
      {"07-transpose", "bench/perfmodel/corpus/v07-transpose-smem-nopad.cu"},
      {"08-dot-product", "bench/perfmodel/corpus/v08-dot-grid265.cu"},
      {"17-tiled-sgemm", "bench/perfmodel/corpus/v17-sgemm-smem16.cu"},
      {"91-demo-strided-copy", "bench/perfmodel/corpus/v91-strided-copy-s4.cu"},
  };
  CheckOptions opt;
  opt.predict = true;
  int within2 = 0, n = 0;
  std::string table;
  for (auto [id, rel] : kernels) {
    const Puzzle* p = test::builtin_catalog().find_puzzle(id);
    REQUIRE_MESSAGE(p, id);
    const std::string source = test::read_file(fs::path(WARPBOOK_SOURCE_ROOT) / rel);
    CheckReport r = check_puzzle(*p, source, rel, *gpu, opt);
    CHECK_MESSAGE(r.verdict == Verdict::passed, rel << ": " << r.summary);
    if (!(r.perf && r.perf->timing.ok && r.prediction && r.prediction->ok)) {
      FAIL_CHECK(rel << ": no measured time or no prediction");
      continue;
    }
    const double meas = r.perf->timing.median_us, pred = r.prediction->us;
    const double ratio = pred / meas;
    ++n;
    within2 += ratio <= 2 && ratio >= 0.5;
    table += fmt::format("{:<52} {:>10.1f} us {:>10.1f} us {:>6.2f}  {}\n", rel, meas, pred, ratio,
                         r.prediction->factors.empty() ? "" : r.prediction->factors[0].key);
  }
  fmt::print("\n{:<52} {:>13} {:>13} {:>6}  limiter (predicted)\n{}", "kernel", "measured",
             "predicted", "ratio", table);
  fmt::print("within 2x: {} of {}\n", within2, n);
  CHECK(n == int(std::size(kernels)));
  CHECK(within2 >= 0.8 * n);
}
