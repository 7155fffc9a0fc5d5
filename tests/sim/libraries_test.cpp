// CUDA's device libraries in a learner's kernel, on the simulator: the corpus in tests/libraries
// passes its puzzles and counts what the hand-written kernels count; the mistakes these libraries
// make possible get verdicts that name them.
#include "common/library_suite.hpp"
#include "core/compile.hpp"

using namespace wb;

namespace {

CheckReport check_sim(const Puzzle& p, const std::string& src, const std::string& name) {
  std::string why;
  static auto sim = make_sim_backend(why);
  REQUIRE_MESSAGE(sim, why);
  CheckOptions opt;
  opt.seed = 0;
  opt.predict = false;
  return check_puzzle(p, src, name, *sim, opt);
}

double counter(const CheckReport& r, const std::string& name) {
  REQUIRE_MESSAGE(r.sim_perf, r.file << " has no counters at the sim_perf size");
  auto it = r.sim_perf->counters.total.find(name);
  REQUIRE_MESSAGE(it != r.sim_perf->counters.total.end(), "no counter " << name);
  return it->second;
}

std::string library_file(const std::string& name) {
  return test::read_file(fs::path(WARPBOOK_SOURCE_ROOT) / "tests" / "libraries" / name);
}

} // namespace

TEST_CASE("device libraries: every kernel of tests/libraries passes its puzzle on the simulator") {
  const auto kernels = test::library_kernels();
  REQUIRE(kernels.size() >= 9);
  for (const auto& k : kernels) {
    CAPTURE(k.file.filename().string());
    const Puzzle& p = test::library_puzzle(k);
    const CheckReport r = check_sim(p, test::read_file(k.file), k.file.filename().string());
    CHECK_MESSAGE(r.verdict == Verdict::passed, test::describe(r));
    MESSAGE(fmt::format("{:<40} {:<12} {}", k.file.filename().string(), verdict_name(r.verdict),
                        k.library));
    if (k.same.empty() || r.verdict != Verdict::passed) continue;
    const fs::path like = fs::path(WARPBOOK_SOURCE_ROOT) / k.like;
    const CheckReport h = check_sim(p, test::read_file(like), like.filename().string());
    REQUIRE_MESSAGE(h.verdict == Verdict::passed, test::describe(h));
    for (const auto& c : k.same) {
      CAPTURE(c);
      CHECK(counter(r, c) == doctest::Approx(counter(h, c)).epsilon(0.01));
    }
  }
}

TEST_CASE("device libraries: a tile read before its cp.async group is waited for is wrong, as on "
          "the GPU") {
  // The H200 got 3336 of 65537 elements wrong for this mistake (the last stage not waited for):
  // cp.async copies land only when their group is waited for, not when they are issued.
  std::string src = library_file("05-cuda-pipeline-vector-add.cu");
  const std::string fix = "cuda::pipeline_consumer_wait_prior<0>(pipe);";
  src.replace(src.find(fix), fix.size(), "cuda::pipeline_consumer_wait_prior<1>(pipe);");
  const CheckReport r =
      check_sim(*test::builtin_catalog().find_puzzle("01-vector-add"), src, "k.cu");
  CHECK_MESSAGE(r.verdict == Verdict::wrong_answer, test::describe(r));
}

TEST_CASE("device libraries: an mbarrier nobody completes is a deadlock that names it") {
  // Initialised for two arrivals, but only the 32 threads of warp 0 ... of which each arrives:
  // so count 33 waits for one arrival that never comes.
  const std::string src = R"(
#include <cuda/barrier>
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x + 1);
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  bar.arrive_and_wait();
  if (i < n) c[i] = a[i] + b[i];
}
)";
  const CheckReport r =
      check_sim(*test::builtin_catalog().find_puzzle("01-vector-add"), src, "k.cu");
  REQUIRE(r.verdict == Verdict::runtime_fault);
  const std::string& m = r.cases.front().message;
  CHECK_MESSAGE(m.find("deadlock in block (0,0,0): every live warp waits on an mbarrier") !=
                    std::string::npos,
                m);
  CHECK_MESSAGE(m.find("bar (phase 0: 1 of 257 arrivals still missing)") != std::string::npos, m);
  CHECK_MESSAGE(m.find("at line 8") != std::string::npos, m);
}

TEST_CASE("device libraries: device malloc's double free, use after free and leaks are named") {
  const Puzzle& p = *test::builtin_catalog().find_puzzle("02-row-sum");
  const std::string base = library_file("08-device-malloc-row-sum.cu");
  auto variant = [&](const std::string& after_free) {
    std::string s = base;
    const std::string at = "    free(scratch);\n";
    s.replace(s.find(at), at.size(), at + after_free);
    return s;
  };
  // free(scratch) is on line 33 of the file, malloc on line 14.
  const CheckReport twice = check_sim(p, variant("    free(scratch);\n"), "twice.cu");
  REQUIRE(twice.verdict == Verdict::runtime_fault);
  CHECK_MESSAGE(twice.cases.front().message.find(
                    "called free at line 34 on the 1024 bytes malloc'd by thread (0,0,0) of block "
                    "(0,0,0) at line 14, which thread (0,0,0) of block (0,0,0) at line 33 already "
                    "freed (a double free)") != std::string::npos,
                twice.cases.front().message);
  const CheckReport after = check_sim(p, variant("    y[blockIdx.x] = scratch[1];\n"), "uaf.cu");
  REQUIRE(after.verdict == Verdict::runtime_fault);
  CHECK_MESSAGE(
      after.cases.front().message.find("read the 1024 bytes malloc'd by thread (0,0,0) of "
                                       "block (0,0,0) at line 14 after thread (0,0,0) of "
                                       "block (0,0,0) at line 33 freed it (a use after "
                                       "free) at line 34") != std::string::npos,
      after.cases.front().message);
  std::string leak = base;
  leak.replace(leak.find("    free(scratch);\n"), 19, "");
  const CheckReport kept = check_sim(p, leak, "leak.cu");
  CHECK(kept.verdict == Verdict::passed); // a leak is not a wrong answer: a warning says it
  bool warned = false;
  for (auto& c : kept.cases)
    for (auto& w : c.problems)
      warned |= w.find("the 1024 bytes malloc'd by thread (0,0,0) of block (0,0,0) at line 14 were "
                       "never freed") != std::string::npos;
  CHECK_MESSAGE(warned, test::describe(kept));
}

TEST_CASE("device libraries: a header the toolkit lacks is named with where Warpbook looked") {
  const CheckReport r = check_sim(*test::builtin_catalog().find_puzzle("01-vector-add"),
                                  "#include <cub/no_such_header.cuh>\n", "k.cu");
  REQUIRE(r.verdict == Verdict::compile_error);
  bool named = false;
  for (auto& d : r.diagnostics)
    named |= d.message.find("CUB (part of CUDA's CCCL) is not in the toolkit's headers Warpbook "
                            "gives NVRTC") != std::string::npos;
  CHECK_MESSAGE(named, test::describe(r));
}

TEST_CASE(
    "device libraries: the test catalog's cooperative puzzle: reference passes, starter fails") {
  const Catalog& cat = test::library_catalog();
  REQUIRE_MESSAGE(cat.errors.empty(), cat.errors.front().message);
  const Puzzle* p = cat.find_puzzle("01-grid-dot");
  REQUIRE(p);
  CHECK(p->launches.front().cooperative);
  const CheckReport ref = check_sim(*p, test::read_file(p->reference), "reference.cu");
  CHECK_MESSAGE(ref.verdict == Verdict::passed, test::describe(ref));
  const CheckReport start = check_sim(*p, test::read_file(p->starter), "starter.cu");
  CHECK_MESSAGE(start.verdict == Verdict::wrong_answer, test::describe(start));
}

TEST_CASE("device libraries: a grid sync without a cooperative launch is named, not a bare trap") {
  const CheckReport r = check_sim(*test::builtin_catalog().find_puzzle("08-dot-product"),
                                  test::kGridSyncInPuzzle08, "k.cu");
  REQUIRE(r.verdict == Verdict::runtime_fault);
  const std::string& m = r.cases.front().message;
  CHECK_MESSAGE(m.find("trap: dot_partial synchronises the whole grid "
                       "(cooperative_groups::this_grid().sync()), which needs a cooperative "
                       "launch") != std::string::npos,
                m);
}

TEST_CASE(
    "device libraries: a cooperative grid larger than can be resident is refused, saying why") {
  const Catalog& cat = test::library_catalog();
  const Puzzle* p = cat.find_puzzle("01-grid-dot");
  REQUIRE(p);
  // 1024-thread blocks: 2 per SM on an H200, 264 at most; GRID = 2048 asks for 293 at n = 300001.
  std::string src = test::read_file(p->reference);
  src = "// @tune BLOCK=1024\n// @tune GRID=2048\n" + src;
  const CheckReport r = check_sim(*p, src, "big.cu");
  REQUIRE(r.verdict == Verdict::runtime_fault);
  bool named = false;
  for (auto& c : r.cases)
    named |= c.message.find("a cooperative launch needs all 293 blocks resident at once; an H200 "
                            "holds at most 264 blocks of 1024 threads") != std::string::npos;
  CHECK_MESSAGE(named, test::describe(r));
}

TEST_CASE("device libraries: every header of cooperative groups, CUB's block and warp primitives "
          "and libcu++'s synchronisation compiles with NVRTC") {
  // The header list comes from the toolkit itself, so a header added to a later CUDA is tried too.
  std::string src = "#include <cooperative_groups.h>\n";
  for (const char* h : {"reduce", "scan", "memcpy_async"})
    src += fmt::format("#include <cooperative_groups/{}.h>\n", h);
  const fs::path inc = fs::path(toolkit_include_dir());
  const fs::path cub = fs::exists(inc / "cccl" / "cub") ? inc / "cccl" / "cub" : inc / "cub";
  int headers = 0;
  for (const char* dir : {"block", "warp"})
    for (auto& e : fs::directory_iterator(cub / dir))
      if (e.path().extension() == ".cuh") {
        src += fmt::format("#include <cub/{}/{}>\n", dir, e.path().filename().string());
        ++headers;
      }
  CHECK(headers >= 20);
  for (const char* h : {"barrier", "pipeline", "atomic", "std/atomic", "std/type_traits",
                        "std/limits", "std/cmath", "std/span", "std/array", "std/utility",
                        "std/tuple", "std/bit", "std/complex", "std/functional", "annotated_ptr"})
    src += fmt::format("#include <cuda/{}>\n", h);
  src += "extern \"C\" __global__ void k(int* x) { *x = 1; }\n";
  for (const char* arch : {"compute_80", "compute_90"}) {
    CompileOptions opt;
    opt.arch = arch;
    const Program prog = compile_source(src, "all_headers.cu", opt);
    std::string errors;
    for (auto& d : prog.diagnostics) errors += d.str() + "\n";
    CHECK_MESSAGE(prog.ok, arch << ":\n" << errors);
    CHECK_MESSAGE(errors.empty(), arch << ":\n" << errors);
  }
}

TEST_CASE("check: an FP8 wgmma kernel passes on the simulator with one note that the GPU keeps "
          "fewer bits") {
  // bench/perfmodel/experiments/fp8-wgmma/wgmma-k64.cu, an FP8 wgmma kernel, passes here, where
  // sums are exact; on a GPU the tensor cores' FP8 sums keep fewer bits: the report says so once.
  const Puzzle* p = test::builtin_catalog().find_puzzle("33-fp8-gemm");
  REQUIRE(p);
  const std::string rel = "bench/perfmodel/experiments/fp8-wgmma/wgmma-k64.cu";
  const CheckReport r =
      check_sim(*p, test::read_file(fs::path(WARPBOOK_SOURCE_ROOT) / rel), "wgmma-k64.cu");
  CHECK(r.verdict == Verdict::passed);
  int notes = 0;
  for (const auto& c : r.cases)
    for (const auto& m : c.problems)
      if (m.find("FP8 wgmma") != std::string::npos && m.find("14 bits") != std::string::npos)
        ++notes;
  CHECK(notes == 1);
  // An mma.sync kernel gets no such note.
  const CheckReport s =
      check_sim(*p,
                test::read_file(fs::path(WARPBOOK_SOURCE_ROOT) /
                                "bench/perfmodel/curriculum2/33-fp8-unpacked-f16-mma.cu"),
                "mma.cu");
  CHECK(s.verdict == Verdict::passed);
  for (const auto& c : s.cases)
    for (const auto& m : c.problems) CHECK(m.find("FP8 wgmma") == std::string::npos);
}
