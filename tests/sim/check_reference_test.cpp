// How the checker gets its expected outputs on the simulator (the reference's runs, computed on a
// thread of their own while the learner's file compiles) and how it compares against them
// ([check] rtol_of_max).
#include "common/puzzle_suite.hpp"

#include "core/backend.hpp"

#include <algorithm>
#include <random>

using namespace wb;

namespace {

// Vector add scaled by (1 + 4e-4): every element off by 4e-4 of its own value.
const char* kScaled =
    "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = (a[i] + b[i]) * 1.0004f;\n}\n";

bool has_step(const CaseReport& c, const char* name) {
  return std::any_of(c.steps_ms.begin(), c.steps_ms.end(),
                     [&](auto& s) { return s.first == name; });
}

CheckReport check_on_sim(const Puzzle& p, const std::string& source) {
  std::string why;
  auto backend = make_sim_backend(why);
  REQUIRE(backend);
  CheckOptions opt;
  opt.seed = 7;
  opt.predict = false;
  return check_puzzle(p, source, "learner.cu", *backend, opt);
}

} // namespace

TEST_CASE("on the simulator the reference runs while the learner's file compiles") {
  // Puzzle 44's solution takes NVRTC a second or more; the reference's first cases run meanwhile
  // on the other thread, the rest inline, and the verdict is the same either way. A comment no
  // earlier run had keeps the file out of NVRTC's disk cache, so the compile really takes that
  // long.
  const Puzzle* p = test::builtin_catalog().find_puzzle("44-flash-attention-3");
  REQUIRE(p);
  CheckReport good = check_on_sim(
      *p, test::read_file(test::builtin_catalog().root / "solutions" / "44-flash-attention-3.cu") +
              "\n// " + std::to_string(std::random_device{}()) + "\n");
  CHECK_MESSAGE(good.verdict == Verdict::passed, test::describe(good));
  REQUIRE(good.cases.size() == p->cases.size());
  CHECK(has_step(good.cases.front(), "reference (computed ahead)"));
  for (auto& c : good.cases)
    CHECK_MESSAGE(has_step(c, "reference (computed ahead)") != has_step(c, "reference run"),
                  c.label);

  // A wrong kernel fails the same way (and is not counted at [sim_perf]).
  CheckReport bad = check_on_sim(*p, test::read_file(p->starter));
  CHECK(bad.verdict == Verdict::wrong_answer);
  CHECK_FALSE(bad.sim_perf);
}

TEST_CASE("[check] rtol_of_max allows an error in proportion to the output's largest value") {
  const Puzzle* base = test::builtin_catalog().find_puzzle("01-vector-add");
  REQUIRE(base);
  Puzzle p = *base;
  p.rtol = 0;
  p.atol = 1e-7;
  // Off by 4e-4 of each element, so at most 4e-4 of the largest: within 1e-3 of it, not 1e-4.
  p.rtol_of_max = 1e-3;
  CheckReport loose = check_on_sim(p, kScaled);
  CHECK_MESSAGE(loose.verdict == Verdict::passed, test::describe(loose));
  p.rtol_of_max = 1e-4;
  CheckReport tight = check_on_sim(p, kScaled);
  CHECK_MESSAGE(tight.verdict == Verdict::wrong_answer, test::describe(tight));
  p.rtol_of_max.reset();
  CHECK(check_on_sim(p, kScaled).verdict == Verdict::wrong_answer);
}
