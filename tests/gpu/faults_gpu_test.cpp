#include "common/fault_suite.hpp"
#include "core/runner.hpp"

TEST_CASE("each fault kind gets its verdict on the GPU") {
  wb::test::check_fault_cases(
      [] {
        std::string why;
        return wb::make_cuda_backend(why);
      },
      true);
}

TEST_CASE("GPU: a kernel that never ends is stopped by the runner, reported, and the next request "
          "works") {
  using namespace wb::runner;
  const char* exe = std::getenv("WARPBOOK_EXE");
  REQUIRE(exe);
  ClientOptions o;
  o.command = std::string("'") + exe + "' runner";
  o.timeout_s = 120;
  Client c(o);
  auto result = [&](uint64_t id, double s) -> std::optional<Event> {
    for (int i = 0; i < int(s * 20); ++i)
      if (auto e = c.wait(0.05); e && e->kind == EventKind::result && e->id == id) return e;
    return std::nullopt;
  };
  Request r;
  r.op = Op::check;
  r.puzzle = "01-vector-add";
  r.file = "learner.cu";
  r.backend = "cuda";
  r.time = false;
  r.source =
      "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
      "  volatile const float* va = a;\n  while (va[0] < 1e30f) { }\n}\n"; // a is in [-1, 1]
  auto hung = result(c.send(r), 100);
  REQUIRE(hung);
  CAPTURE(hung->text);
  REQUIRE(hung->report);
  CHECK(hung->report->verdict == wb::Verdict::runtime_fault);
  CHECK_MESSAGE(hung->report->summary.find("did not finish within") != std::string::npos,
                hung->report->summary);
  r.source =
      "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) c[i] = a[i] + b[i];\n}\n";
  auto next = result(c.send(r), 100);
  REQUIRE(next);
  REQUIRE(next->report);
  CHECK_MESSAGE(next->report->verdict == wb::Verdict::passed, next->report->summary);
  CHECK(c.starts() == 2); // the stuck runner ended itself; the next request got a fresh one
}

TEST_CASE("GPU: a case that needs more host memory than allowed is refused before anything is "
          "allocated") {
  using namespace wb;
  const Puzzle* p = test::builtin_catalog().find_puzzle("01-vector-add");
  REQUIRE(p);
  std::string why;
  auto backend = make_cuda_backend(why);
  REQUIRE_MESSAGE(backend, why);
  CheckOptions opt;
  opt.time = false;
  opt.seed = 1;
  CheckReport r = run_puzzle(
      *p,
      "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, "
      "int n) {}\n",
      "learner.cu", *backend, {{"n", int64_t(1) << 36}}, opt);
  CHECK(r.verdict == Verdict::runtime_fault);
  CHECK_MESSAGE(r.summary.find("refused before allocating anything") != std::string::npos,
                r.summary);
  CHECK(backend->usable());
}
