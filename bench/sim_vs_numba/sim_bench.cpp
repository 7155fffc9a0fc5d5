// Warpbook's PTX simulator on the three kernels of numba_bench.py, side by side with numba's CUDA
// simulator: vector add n = 4096 (256 threads per block), naive matmul 32x32x32 (16x16 blocks),
// shared-memory block sum n = 4096 (256 threads). Prints the table and the ratios, then the
// throughput of naive matmul 256^3 on one core with counters on (thread-instructions per second).
//
//   ./run.sh                      (builds this, runs numba, runs this)
//   sim_bench [numba.json]        (numba's seconds from numba_bench.py; without it, no ratios)
//   sim_bench --profile N [W]     (naive matmul 32^3 only, N runs on W workers: for callgrind)
//
// Timing: the best of several Simulator::run() calls (the PTX is parsed and decoded on the first
// call and cached, like numba's kernel object); the first call is shown too. NVRTC's compile is
// not timed: numba has no equivalent step.
#include "../bench_util.hpp"
#include "core/backend/sim/sim.hpp"
#include "core/compile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace wb;

namespace {

const char* kVectorAdd = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
})";
const char* kMatmul = R"(
extern "C" __global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
})";
const char* kBlockSum = R"(
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
})";

struct Timed {
  double first_ms = 0, best_ms = 1e30, median_ms = 0;
  RunResult last;
};

Timed time_runs(sim::Simulator& s, const RunPlan& plan, int reps) {
  Timed t;
  std::vector<double> all;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    t.last = s.run(plan);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r == 0) t.first_ms = ms;
    t.best_ms = std::min(t.best_ms, ms);
    all.push_back(ms);
    if (t.last.fault) {
      std::fprintf(stderr, "fault: %s\n", t.last.fault.message.c_str());
      std::exit(1);
    }
  }
  std::sort(all.begin(), all.end());
  t.median_ms = all[all.size() / 2];
  return t;
}

Program compile(const char* src, const char* name) {
  CompileOptions o;
  o.arch = "compute_80";
  Program p = compile_source(src, name, o);
  if (!p.ok) {
    std::fprintf(stderr, "compile failed for %s:\n%s\n", name, p.log.c_str());
    std::exit(1);
  }
  return p;
}

// Minimal reader for numba_bench.py's flat JSON object: numbers by key (other values skipped).
std::map<std::string, double> read_numba(const char* path) {
  std::map<std::string, double> m;
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  size_t i = s.find('{');
  while (i != std::string::npos && i < s.size()) {
    size_t k0 = s.find('"', i);
    if (k0 == std::string::npos) break;
    size_t k1 = s.find('"', k0 + 1);
    size_t c = s.find(':', k1);
    if (k1 == std::string::npos || c == std::string::npos) break;
    std::string key = s.substr(k0 + 1, k1 - k0 - 1);
    size_t v = s.find_first_not_of(" \t\n", c + 1);
    if (v == std::string::npos) break;
    if (s[v] == '"') { // a string value: skip it
      size_t e = s.find('"', v + 1);
      i = e == std::string::npos ? e : e + 1;
      continue;
    }
    char* end = nullptr;
    double d = std::strtod(s.c_str() + v, &end);
    if (end != s.c_str() + v) m[key] = d;
    i = s.find_first_of(",}", v);
    if (i != std::string::npos) ++i;
  }
  return m;
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--profile") {
    // Only the kernel whose ratio is tightest, run N times, so a profiler sees the steady state.
    sim::SimOptions o;
    o.workers = argc > 3 ? unsigned(std::atoi(argv[3])) : 0;
    sim::Simulator s(o);
    Program p = compile(kMatmul, "matmul.cu");
    std::vector<HostBuffer> b = {bench::filled_f32("A", 1024, 1.0f),
                                 bench::filled_f32("B", 1024, 0.5f), bench::filled_f32("C", 1024)};
    RunPlan plan;
    plan.program = &p;
    plan.buffers = &b;
    plan.launches.push_back({"matmul_naive",
                             {2, 2, 1},
                             {16, 16, 1},
                             0,
                             {KernelArg::of_buffer(0), KernelArg::of_buffer(1),
                              KernelArg::of_buffer(2), KernelArg::of_scalar<int>(32),
                              KernelArg::of_scalar<int>(32), KernelArg::of_scalar<int>(32)}});
    Timed t = time_runs(s, plan, std::atoi(argv[2]));
    std::printf("naive matmul 32^3: best %.4f ms, median %.4f ms\n", t.best_ms, t.median_ms);
    return 0;
  }
  std::map<std::string, double> numba;
  if (argc > 1) numba = read_numba(argv[1]);
  sim::Simulator s; // all cores, as the blocks would use them
  const int reps = 50;

  struct Row {
    std::string label, key;
    Timed t;
  };
  std::vector<Row> rows;
  {
    Program p = compile(kVectorAdd, "vector_add.cu");
    std::vector<HostBuffer> b = {bench::filled_f32("a", 4096, 1.0f),
                                 bench::filled_f32("b", 4096, 2.0f), bench::filled_f32("c", 4096)};
    RunPlan plan;
    plan.program = &p;
    plan.buffers = &b;
    plan.launches.push_back({"vector_add",
                             {16, 1, 1},
                             {256, 1, 1},
                             0,
                             {KernelArg::of_buffer(0), KernelArg::of_buffer(1),
                              KernelArg::of_buffer(2), KernelArg::of_scalar<int>(4096)}});
    rows.push_back(
        {"vector add, n = 4096, 256 threads/block", "vector_add", time_runs(s, plan, reps)});
  }
  {
    Program p = compile(kMatmul, "matmul.cu");
    std::vector<HostBuffer> b = {bench::filled_f32("A", 1024, 1.0f),
                                 bench::filled_f32("B", 1024, 0.5f), bench::filled_f32("C", 1024)};
    RunPlan plan;
    plan.program = &p;
    plan.buffers = &b;
    plan.launches.push_back({"matmul_naive",
                             {2, 2, 1},
                             {16, 16, 1},
                             0,
                             {KernelArg::of_buffer(0), KernelArg::of_buffer(1),
                              KernelArg::of_buffer(2), KernelArg::of_scalar<int>(32),
                              KernelArg::of_scalar<int>(32), KernelArg::of_scalar<int>(32)}});
    rows.push_back(
        {"naive matmul 32x32x32, 16x16 blocks", "matmul_naive_32", time_runs(s, plan, reps)});
  }
  {
    Program p = compile(kBlockSum, "block_sum.cu");
    std::vector<HostBuffer> b = {bench::filled_f32("in", 4096, 1.0f), bench::filled_f32("out", 16)};
    RunPlan plan;
    plan.program = &p;
    plan.buffers = &b;
    plan.launches.push_back(
        {"block_sum",
         {16, 1, 1},
         {256, 1, 1},
         0,
         {KernelArg::of_buffer(0), KernelArg::of_buffer(1), KernelArg::of_scalar<int>(4096)}});
    rows.push_back(
        {"shared-memory block sum, n = 4096, 256 threads", "block_sum", time_runs(s, plan, reps)});
  }

  std::printf("%-48s %10s %10s %10s %10s %9s\n", "kernel", "numba s", "first ms", "median ms",
              "best ms", "ratio");
  for (auto& r : rows) {
    auto it = numba.find(r.key);
    if (it != numba.end())
      std::printf("%-48s %10.3f %10.3f %10.3f %10.3f %8.0fx\n", r.label.c_str(), it->second,
                  r.t.first_ms, r.t.median_ms, r.t.best_ms, it->second * 1000.0 / r.t.best_ms);
    else
      std::printf("%-48s %10s %10.3f %10.3f %10.3f %9s\n", r.label.c_str(), "-", r.t.first_ms,
                  r.t.median_ms, r.t.best_ms, "-");
  }
  std::printf("(ratio: numba's best of its runs over our best of %d; first: includes parsing and "
              "decoding the PTX)\n",
              reps);

  // Throughput: naive matmul 256^3 on one core, counters on.
  {
    sim::SimOptions o;
    o.workers = 1;
    sim::Simulator one(o);
    int n = 256;
    Program p = compile(kMatmul, "matmul.cu");
    std::vector<HostBuffer> b = {bench::filled_f32("A", size_t(n) * n, 1.0f),
                                 bench::filled_f32("B", size_t(n) * n, 0.5f),
                                 bench::filled_f32("C", size_t(n) * n)};
    RunPlan plan;
    plan.program = &p;
    plan.buffers = &b;
    plan.counters = true;
    plan.launches.push_back({"matmul_naive",
                             {uint32_t(n / 16), uint32_t(n / 16), 1},
                             {16, 16, 1},
                             0,
                             {KernelArg::of_buffer(0), KernelArg::of_buffer(1),
                              KernelArg::of_buffer(2), KernelArg::of_scalar<int>(n),
                              KernelArg::of_scalar<int>(n), KernelArg::of_scalar<int>(n)}});
    Timed t = time_runs(one, plan, 3);
    double ti = t.last.counters.total["thread_instructions"];
    double wi = t.last.counters.total["warp_instructions"];
    std::printf("\nnaive matmul %dx%dx%d on one core, counters on: %.0f M thread-instructions in "
                "%.1f ms = %.0f M "
                "thread-instructions/s (%.1f M warp-instructions/s)\n",
                n, n, n, ti / 1e6, t.best_ms, ti / (t.best_ms / 1000.0) / 1e6,
                wi / (t.best_ms / 1000.0) / 1e6);
    float c0;
    std::memcpy(&c0, b[2].image.data() + 256, 4);
    if (c0 != 0.5f * n) {
      std::fprintf(stderr, "wrong result %f\n", c0);
      return 1;
    }
  }
  return 0;
}
