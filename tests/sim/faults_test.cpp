#include "common/fault_suite.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

TEST_CASE("each fault kind gets its verdict on the simulator") {
  wb::test::check_fault_cases(
      [] {
        std::string why;
        return wb::make_sim_backend(why);
      },
      false);
}

namespace {

const char* kVectorAdd =
    "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n}\n";

struct ScopedEnv {
  std::string name;
  ScopedEnv(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

} // namespace

TEST_CASE(
    "a case that needs more host memory than allowed is refused before anything is allocated") {
  using namespace wb;
  const Puzzle* p = test::builtin_catalog().find_puzzle("01-vector-add");
  REQUIRE(p);
  std::string why;
  auto backend = make_sim_backend(why);
  REQUIRE(backend);
  CheckOptions opt;
  opt.time = false;
  opt.seed = 1;
  auto refused = [&](const Env& sizes) {
    auto t0 = std::chrono::steady_clock::now();
    CheckReport r = run_puzzle(*p, kVectorAdd, "learner.cu", *backend, sizes, opt);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(r.cases.size() == 1);
    CHECK(r.verdict == Verdict::runtime_fault);
    CHECK(r.cases[0].fault.kind == FaultKind::memory_limit);
    CHECK_MESSAGE(r.summary.find("refused before allocating anything") != std::string::npos,
                  r.summary);
    CHECK(s < 30); // compiling only: nothing was made
    return r.summary;
  };
  SUBCASE("2^36 elements per buffer: 768 GiB, past 3/4 of this machine's memory") {
    std::string s = refused({{"n", int64_t(1) << 36}});
    CHECK(s.find("3/4 of this machine's memory") != std::string::npos);
  }
  SUBCASE("WARPBOOK_HOST_MEMORY_LIMIT=64M: 8 M elements are refused, 65537 pass") {
    ScopedEnv env("WARPBOOK_HOST_MEMORY_LIMIT", "64M");
    std::string s = refused({{"n", 8000000}});
    CHECK(s.find("WARPBOOK_HOST_MEMORY_LIMIT") != std::string::npos);
    CHECK(run_puzzle(*p, kVectorAdd, "learner.cu", *backend, {{"n", 65537}}, opt).verdict ==
          Verdict::passed);
  }
}

TEST_CASE("the GPU suite's path, through the warpbook executable, on the simulator") {
  // tests/gpu runs every fault case this way (a process per case, several at once); here three
  // of them, at once, on the simulator, so that CI covers the command line, the exit codes, the
  // JSON round trip and the threads that run the processes.
  using namespace wb;
  std::vector<test::FaultCase> cases;
  for (const char* name : {"01-compile-undeclared", "15-write-just-past-end", "36-one-block-only"})
    cases.push_back(test::load_fault_case(test::fault_dir() / (std::string(name) + ".cu")));
  std::string exe = test::warpbook_exe();
  auto ran = test::run_concurrently<test::ProcessCheck>(cases.size(), 3, [&](size_t i) {
    return test::run_check_process(exe, cases[i].puzzle, cases[i].source, "sim");
  });
  for (size_t i = 0; i < cases.size(); ++i) {
    const test::FaultCase& fc = cases[i];
    CAPTURE(fc.name);
    CheckReport r = test::report_of(ran[i]);
    CHECK(ran[i].exit_status == exit_code(r.verdict));
    CHECK(std::find(fc.sim.verdicts.begin(), fc.sim.verdicts.end(), r.verdict) !=
          fc.sim.verdicts.end());
    std::string all = test::shown_text(r);
    for (auto& w : fc.sim.words)
      CHECK_MESSAGE(all.find(w) != std::string::npos, w << " in " << all);
  }
}

TEST_CASE("run at the timed size uses the timed case's inputs (24's sequences at full length)") {
  // A kernel that takes every sequence to be L long (it never reads lens) is right only where
  // lens[b] = L, which the puzzle's sim_perf case asks for and its other sizes do not.
  using namespace wb;
  const Puzzle* p = test::builtin_catalog().find_puzzle("24-decode-attention");
  REQUIRE(p);
  REQUIRE(p->sim_perf);
  REQUIRE(p->sim_perf->init.count("lens"));
  std::string src;
  {
    std::ifstream in(p->solution);
    src.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (auto [from, to] : {std::pair{"const int n = lens[b];", "const int n = L;"},
                          std::pair{"ns = (lens[b] + F * CHUNK", "ns = (L + F * CHUNK"}}) {
    auto at = src.find(from);
    REQUIRE(at != std::string::npos);
    src.replace(at, std::strlen(from), to);
  }
  std::string why;
  auto backend = make_sim_backend(why);
  REQUIRE(backend);
  CheckOptions opt;
  opt.time = false;
  opt.seed = 7;
  Env timed = p->sim_perf->sizes;
  CHECK(run_puzzle(*p, src, "ignores-lens.cu", *backend, timed, opt).verdict == Verdict::passed);
  Env other = timed;
  other["Hq"] = 16; // not the timed size: lens are drawn at random, and the kernel is wrong
  CheckReport r = run_puzzle(*p, src, "ignores-lens.cu", *backend, other, opt);
  CHECK(r.verdict == Verdict::wrong_answer);
}
