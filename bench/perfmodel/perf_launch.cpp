// Runs one kernel's launches once at its puzzle's [perf] size on the GPU, and nothing else: the
// process bench/perfmodel/measure_gpu.sh hands to Nsight Compute, so that the hardware counters
// it reads belong to the learner-style kernel alone (no reference run, no timing loop).
//
//   perf_launch PUZZLE FILE [CATALOG]
//
// Tunables come from the puzzle's defaults and the file's `// @tune` lines, as in a check.
#include "core/catalog.hpp"
#include "core/check.hpp"
#include "core/compile.hpp"

#include <fmt/format.h>
#include <fstream>
#include <sstream>

using namespace wb;

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: perf_launch PUZZLE FILE [CATALOG]\n");
    return 4;
  }
  Catalog cat = load_catalog(default_catalog_root(argc > 3 ? argv[3] : ""));
  const Puzzle* p = cat.find_puzzle(argv[1]);
  if (!p || !p->perf) {
    fmt::print(stderr, "perf_launch: no puzzle {} with a [perf] size\n", argv[1]);
    return 4;
  }
  std::ifstream in(argv[2], std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string source = ss.str();
  std::string why;
  auto gpu = make_cuda_backend(why);
  if (!gpu) {
    fmt::print(stderr, "perf_launch: {}\n", why);
    return 4;
  }
  std::vector<Diagnostic> diags;
  std::map<std::string, int64_t> tune;
  for (auto& t : p->tunables) tune[t.name] = t.default_value;
  for (auto& t : parse_tune_lines(source, argv[2], diags)) tune[t.name] = t.value;
  CompileOptions co = gpu->compile_options();
  co.defines = tune;
  Program prog = compile_source(source, argv[2], co);
  if (!prog.ok) {
    fmt::print(stderr, "perf_launch: {} does not compile\n{}\n", argv[2], prog.log);
    return 2;
  }
  CaseSetup cs = prepare_case(*p, *p->perf, p->env(*p->perf, tune), 1, 0);
  RunPlan plan;
  plan.program = &prog;
  plan.buffers = &cs.buffers;
  plan.launches = cs.launches;
  plan.timeout_s = 60;
  RunResult r = gpu->run(plan);
  if (r.fault) {
    fmt::print(stderr, "perf_launch: {}: {}\n", fault_name(r.fault.kind), r.fault.message);
    return 3;
  }
  fmt::print("perf_launch: {} {}: {} launches ran\n", p->id, argv[2], plan.launches.size());
  return 0;
}
