// The learner's Run comes first (DESIGN.md, "Backends"): a check stops within 200 ms of its
// cancel flag, wherever it is, and each case's verdict reaches the caller as soon as it is known.
#include "common/puzzle_suite.hpp"

#include "core/backend.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

using namespace wb;

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Vector add whose threads never finish: every run of it lasts until its time limit.
const char* kEndless =
    "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  volatile int spin = 1;\n"
    "  while (spin) {}\n"
    "  if (i < n) c[i] = a[i] + b[i];\n}\n";

// Vector add that subtracts: wrong on every case.
const char* kWrong =
    "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] - b[i];\n}\n";

struct Outcome {
  bool cancelled = false;
  std::string other; // what it ended with instead
  Clock::time_point end;
};

// Runs the check on a thread; sets the flag once `ready` says so (polled), plus `delay_ms`; returns
// how long the check took to end after the flag was set.
double cancel_latency_ms(const Puzzle& p, const std::string& source, CheckOptions opt,
                         const std::function<bool()>& ready, double delay_ms, Outcome& out) {
  std::string why;
  auto backend = make_sim_backend(why);
  REQUIRE(backend);
  std::atomic<bool> cancel{false};
  opt.cancel = &cancel;
  auto done = std::async(std::launch::async, [&] {
    Outcome o;
    try {
      CheckReport r = check_puzzle(p, source, "learner.cu", *backend, opt);
      o.other = test::describe(r);
    } catch (const Cancelled&) {
      o.cancelled = true;
    } catch (const std::exception& e) {
      o.other = e.what();
    }
    o.end = Clock::now();
    return o;
  });
  auto give_up = Clock::now() + std::chrono::seconds(120);
  while (!ready() && Clock::now() < give_up &&
         done.wait_for(std::chrono::milliseconds(5)) != std::future_status::ready) {
  }
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_ms));
  auto t0 = Clock::now();
  cancel.store(true);
  out = done.get();
  return ms_between(t0, out.end);
}

} // namespace

TEST_CASE("a cancel ends a check within 200 ms, in the middle of a simulated run") {
  const Puzzle* p = test::builtin_catalog().find_puzzle("01-vector-add");
  REQUIRE(p);
  CheckOptions opt;
  opt.seed = 1;
  opt.case_timeout_s = 120; // without the cancel, the endless kernel would run this long
  std::atomic<int> case_starts{0};
  opt.progress = [&](const std::string& phase, int, int) {
    if (phase.rfind("case ", 0) == 0) ++case_starts;
  };
  Outcome out;
  // A second into the first case: the endless kernel is being simulated, and the performance
  // model's sampled run of it meanwhile.
  double ms = cancel_latency_ms(
      *p, kEndless, opt, [&] { return case_starts.load() > 0; }, 1000, out);
  MESSAGE("cancel latency, endless kernel on the simulator: " << ms << " ms");
  CHECK_MESSAGE(out.cancelled, out.other);
  CHECK(ms < 200);
}

TEST_CASE("a cancel ends a check of puzzle 22's solution within 200 ms") {
  const Puzzle* p = test::builtin_catalog().find_puzzle("22-flash-attention");
  REQUIRE(p);
  const std::string source =
      test::read_file(test::builtin_catalog().root / "solutions" / "22-flash-attention.cu");
  REQUIRE_FALSE(source.empty());
  CheckOptions opt;
  opt.seed = 1;
  std::atomic<int> case_starts{0};
  opt.progress = [&](const std::string& phase, int, int) {
    if (phase.rfind("case ", 0) == 0) ++case_starts;
  };
  Outcome out;
  // Into the third case (a 64 x 64 tile at D = 128), with the prediction running beside it.
  double ms = cancel_latency_ms(
      *p, source, opt, [&] { return case_starts.load() >= 3; }, 300, out);
  MESSAGE("cancel latency, puzzle 22's solution on the simulator: " << ms << " ms");
  CHECK_MESSAGE(out.cancelled, out.other);
  CHECK(ms < 200);
}

TEST_CASE("each case's verdict is handed over before the next case runs") {
  const Puzzle* p = test::builtin_catalog().find_puzzle("01-vector-add");
  REQUIRE(p);
  REQUIRE(p->cases.size() >= 3);
  std::string why;
  auto backend = make_sim_backend(why);
  REQUIRE(backend);
  CheckOptions opt;
  opt.seed = 1;
  std::mutex mu;
  std::vector<std::string> order; // "start k" and "case k", as they happened
  opt.progress = [&](const std::string& phase, int done, int) {
    std::lock_guard lk(mu);
    if (phase.rfind("case ", 0) == 0) order.push_back("start " + std::to_string(done));
  };
  std::vector<Verdict> streamed;
  size_t total = 0;
  opt.on_case = [&](const CaseReport& c, size_t index, size_t n) {
    std::lock_guard lk(mu);
    order.push_back("case " + std::to_string(index));
    streamed.push_back(c.verdict);
    total = n;
  };
  CheckReport r = check_puzzle(*p, kWrong, "learner.cu", *backend, opt);
  CHECK(r.verdict == Verdict::wrong_answer);
  REQUIRE(streamed.size() == r.cases.size());
  CHECK(total == r.cases.size());
  CHECK(streamed[0] == Verdict::wrong_answer);
  // The first case's verdict came before the second case started, and so on for every case.
  REQUIRE(order.size() == 2 * r.cases.size());
  for (size_t i = 0; i < r.cases.size(); ++i) {
    CHECK(order[2 * i] == "start " + std::to_string(i));
    CHECK(order[2 * i + 1] == "case " + std::to_string(i));
  }
  // A wrong kernel gets no predicted time on the simulator: the prediction was stopped.
  CHECK_FALSE(r.prediction);
  CHECK_FALSE(r.perf);
}

TEST_CASE("a kernel ptxas refuses gets its compile error, and no case verdict before it") {
  // The simulator runs the PTX while ptxas makes the cubin: this kernel passes every case there,
  // but its 80 KB of __constant__ data is more than the GPU's 64 KiB bank, which ptxas refuses.
  const char* kTooMuchConstant =
      "__constant__ float table[20000];\n"
      "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) c[i] = a[i] + b[i] + 0.0f * table[i % 20000];\n}\n";
  const Puzzle* p = test::builtin_catalog().find_puzzle("01-vector-add");
  REQUIRE(p);
  std::string why;
  auto backend = make_sim_backend(why);
  REQUIRE(backend);
  CheckOptions opt;
  opt.seed = 1;
  std::vector<Verdict> streamed;
  opt.on_case = [&](const CaseReport& c, size_t, size_t) { streamed.push_back(c.verdict); };
  CheckReport r = check_puzzle(*p, kTooMuchConstant, "learner.cu", *backend, opt);
  CHECK(r.verdict == Verdict::compile_error);
  CHECK_MESSAGE(r.summary.find("ptxas") != std::string::npos, r.summary);
  CHECK_MESSAGE(r.summary.find("constant data") != std::string::npos, r.summary);
  CHECK(streamed.empty());
  CHECK(r.cases.empty());
  CHECK_FALSE(r.prediction);
}
