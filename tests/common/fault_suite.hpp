// Kernels that go wrong in distinct ways, checked against puzzle 01 (vector add), each with the
// verdict and the words its message must hold on each backend. Where a GPU cannot see a fault
// (a write just past the end lands in the guard band, not on an unmapped page), the expectation
// says so rather than loosening the simulator's.
#pragma once
#include "common/puzzle_suite.hpp"

#include <cstdlib>
#include <sys/wait.h>

namespace wb::test {

struct FaultCase {
  const char* name;
  const char* source;
  Verdict sim_verdict;
  const char* sim_words;
  Verdict gpu_verdict;
  const char* gpu_words;
  bool sticky_on_gpu = false; // leaves the CUDA context unusable: run last, in a fresh backend
};

inline const std::vector<FaultCase>& fault_cases() {
  static const std::vector<FaultCase> k = {
      {"write just past the end",
       "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (i <= n) c[i] = a[i < n ? i : 0] + b[i < n ? i : 0];\n}\n",
       Verdict::runtime_fault, "c[", Verdict::wrong_answer, "past the end of c"},
      {"unwritten output",
       "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (i < n && i % 2 == 0) c[i] = a[i] + b[i];\n}\n",
       Verdict::wrong_answer, "never written", Verdict::wrong_answer, "never written"},
      {"NaN output",
       "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (i < n) c[i] = (a[i] + b[i]) * (i == n / 2 ? __int_as_float(0x7fc00000) : 1.0f);\n}\n",
       Verdict::wrong_answer, "NaN", Verdict::wrong_answer, "NaN"},
      {"clobbered input",
       "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (i < n) { c[i] = a[i] + b[i]; ((float*)a)[i] = 0.0f; }\n}\n",
       Verdict::wrong_answer, "changed its input a", Verdict::wrong_answer, "changed its input a"},
      {"missing extern C", "__global__ void vector_add(const float* a, const float* b, float* c, int n) {}\n",
       Verdict::compile_error, "not declared extern \"C\"", Verdict::compile_error, "not declared extern \"C\""},
      {"compile error", "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
                        "  c[0] = a[0] + q;\n}\n",
       Verdict::compile_error, ":2:", Verdict::compile_error, ":2:"},
      {"trap", "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
               "  if (blockIdx.x == 0 && threadIdx.x == 3) __trap();\n}\n",
       Verdict::runtime_fault, "trap", Verdict::runtime_fault, "trap", true},
      {"write far out of bounds",
       "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  if (i < n) c[i + (1 << 28)] = a[i] + b[i];\n}\n",
       Verdict::runtime_fault, "c[", Verdict::runtime_fault, "illegal memory access", true},
  };
  return k;
}

// Checks `source` with the `warpbook` executable, as a separate process: a sticky GPU fault
// poisons CUDA for the whole process (as in the runner), so each GPU case gets its own.
inline CheckReport check_in_process(const std::string& source, int& exit_status) {
  const char* exe = std::getenv("WARPBOOK_EXE");
  REQUIRE_MESSAGE(exe, "WARPBOOK_EXE is not set (ctest sets it)");
  char dir[] = "/tmp/warpbook-fault-XXXXXX";
  REQUIRE(mkdtemp(dir));
  std::string file = std::string(dir) + "/learner.cu", json = std::string(dir) + "/report.json";
  std::ofstream(file) << source;
  std::string cmd = fmt::format("'{}' check 01-vector-add '{}' --backend cuda --json --no-time > '{}'", exe, file, json);
  int status = std::system(cmd.c_str());
  exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::string text = read_file(json);
  fs::remove_all(dir);
  REQUIRE_MESSAGE(!text.empty(), "warpbook printed no report (exit " << exit_status << ")");
  return report_from_json(text);
}

// Runs every case, each on a fresh backend from `make` (on the GPU, in a child process).
template <class Make> void check_fault_cases(Make make, bool gpu) {
  const Catalog& cat = builtin_catalog();
  const Puzzle* p = cat.find_puzzle("01-vector-add");
  REQUIRE(p);
  CheckOptions opt;
  opt.time = false;
  opt.perf_case = false;
  opt.case_timeout_s = 5;
  for (const FaultCase& fc : fault_cases()) {
    CAPTURE(std::string(fc.name));
    CheckReport r;
    bool sticky = false;
    if (gpu) {
      int status = 0;
      r = check_in_process(fc.source, status);
      CHECK(status == exit_code(r.verdict));
      for (auto& c : r.cases) sticky = sticky || c.fault.sticky;
    } else {
      auto backend = make();
      REQUIRE(backend);
      r = check_puzzle(*p, fc.source, "learner.cu", *backend, opt);
    }
    Verdict want = gpu ? fc.gpu_verdict : fc.sim_verdict;
    const char* words = gpu ? fc.gpu_words : fc.sim_words;
    std::string all = r.summary;
    for (auto& c : r.cases)
      for (auto& pr : c.problems) all += "\n" + pr;
    MESSAGE(fmt::format("{:<26} {:<14} {}", fc.name, verdict_name(r.verdict), r.summary));
    CHECK_MESSAGE(r.verdict == want, describe(r));
    CHECK_MESSAGE(all.find(words) != std::string::npos, "expected the words '" << words << "' in: " << all);
    if (gpu) CHECK(sticky == fc.sticky_on_gpu);
  }
}

} // namespace wb::test
