// The Nsight Compute comparison set: five corpus kernels (coalesced and strided copy, naive and
// padded transpose, a 32-way bank conflict) at the sizes of sim_counters_test.cpp, run on the
// simulator (its counters, per source line for shared memory) and, with --gpu, once each on the
// GPU through the CUDA backend, so that ncu can read the hardware counters of those launches:
//
//   ncu --clock-control none --csv --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,...
//       build/bench/ncu/ncu_counters --gpu          (bench/ncu/run.sh does this)
//
// Both backends run the same PTX (compute_80, JIT-compiled by the driver on the GPU) with the same
// inputs; the outputs are compared too.
#include "../bench_util.hpp"
#include "core/backend.hpp"
#include "core/backend/sim/sim.hpp"
#include "core/compile.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace wb;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Case {
  std::string label, file, kernel;
  Dim3 grid, block;
  std::vector<HostBuffer> buffers;
  std::vector<KernelArg> args;
};

double get(const RunResult& r, const char* k) {
  auto it = r.counters.total.find(k);
  return it == r.counters.total.end() ? 0 : it->second;
}

} // namespace

int main(int argc, char** argv) {
  bool use_gpu = argc > 1 && std::string(argv[1]) == "--gpu";
  const int n = 1 << 18, R = 1024, C = 1024;
  std::vector<Case> cases;
  for (int stride : {1, 2, 4}) {
    Case c{"copy stride " + std::to_string(stride),
           "27_strided_copy.cu",
           "strided_copy",
           {n / 256, 1, 1},
           {256, 1, 1},
           {bench::filled_f32("in", size_t(n) * stride, 1.5f), bench::filled_f32("out", n, 0)},
           {KernelArg::of_buffer(0), KernelArg::of_buffer(1), KernelArg::of_scalar<int>(n),
            KernelArg::of_scalar<int>(stride)}};
    cases.push_back(std::move(c));
  }
  cases.push_back(
      {"naive transpose 1024^2 (16x16)",
       "11_transpose_naive.cu",
       "transpose_naive",
       {C / 16, R / 16, 1},
       {16, 16, 1},
       {bench::filled_f32("in", size_t(R) * C, 2.0f), bench::filled_f32("out", size_t(R) * C, 0)},
       {KernelArg::of_buffer(0), KernelArg::of_buffer(1), KernelArg::of_scalar<int>(R),
        KernelArg::of_scalar<int>(C)}});
  cases.push_back(
      {"padded transpose 1024^2 (32x8)",
       "10_transpose_padded.cu",
       "transpose_padded",
       {C / 32, R / 32, 1},
       {32, 8, 1},
       {bench::filled_f32("in", size_t(R) * C, 3.0f), bench::filled_f32("out", size_t(R) * C, 0)},
       {KernelArg::of_buffer(0), KernelArg::of_buffer(1), KernelArg::of_scalar<int>(R),
        KernelArg::of_scalar<int>(C)}});
  cases.push_back({"bank conflict stride 32 (256 x 256)",
                   "28_bank_conflict.cu",
                   "bank_conflict",
                   {256, 1, 1},
                   {256, 1, 1},
                   {bench::filled_f32("out", 256 * 256, 0)},
                   {KernelArg::of_buffer(0), KernelArg::of_scalar<int>(32)}});

  std::unique_ptr<Backend> gpu;
  if (use_gpu) {
    std::string why;
    gpu = make_cuda_backend(why);
    if (!gpu) {
      std::fprintf(stderr, "no CUDA backend: %s\n", why.c_str());
      return 1;
    }
  }
  sim::Simulator s;
  std::printf("%-36s %12s %12s %12s %12s %10s %10s %10s\n", "kernel (simulator)", "ld sectors",
              "st sectors", "ld requests", "st requests", "sh waves", "conflicts", "warp inst");
  int rc = 0;
  for (auto& c : cases) {
    CompileOptions o;
    o.arch = "compute_80";
    std::string path = std::string(WARPBOOK_SOURCE_ROOT) + "/tests/corpus/" + c.file;
    Program p = compile_source(read_file(path), c.file, o);
    if (!p.ok) {
      std::fprintf(stderr, "compile failed: %s\n%s\n", c.file.c_str(), p.log.c_str());
      return 1;
    }
    std::vector<HostBuffer> sb = c.buffers, gb = c.buffers;
    RunPlan plan;
    plan.program = &p;
    plan.buffers = &sb;
    plan.launches.push_back({c.kernel, c.grid, c.block, 0, c.args});
    RunResult r = s.run(plan);
    if (r.fault) {
      std::fprintf(stderr, "%s: %s\n", c.label.c_str(), r.fault.message.c_str());
      return 1;
    }
    std::printf("%-36s %12.0f %12.0f %12.0f %12.0f %10.0f %10.0f %10.0f\n", c.label.c_str(),
                get(r, "global_load_sectors"), get(r, "global_store_sectors"),
                get(r, "global_load_requests"), get(r, "global_store_requests"),
                get(r, "shared_wavefronts"), get(r, "shared_bank_conflicts"),
                get(r, "warp_instructions"));
    // Shared memory per source line: which line is a load and which a store is in the source.
    for (auto& [line, m] : r.counters.by_line) {
      auto w = m.find("shared_wavefronts");
      if (w == m.end() || w->second == 0) continue;
      auto k = m.find("shared_bank_conflicts");
      std::printf("    line %-3d shared wavefronts %.0f, bank conflicts %.0f\n", line, w->second,
                  k == m.end() ? 0.0 : k->second);
    }
    if (gpu) {
      plan.buffers = &gb;
      RunResult g = gpu->run(plan);
      if (g.fault) {
        std::fprintf(stderr, "%s on the GPU: %s\n", c.label.c_str(), g.fault.message.c_str());
        return 1;
      }
      bool same = true;
      for (size_t i = 0; i < sb.size(); ++i) same = same && sb[i].image == gb[i].image;
      std::printf("    GPU output %s\n", same ? "identical" : "DIFFERS");
      if (!same) rc = 1;
    }
  }
  return rc;
}
