// Helpers for the tests that run corpus-style plans: compile CUDA source to PTX with NVRTC (cached
// on disk in the build directory, so reruns are quick), make buffers with guard bands, run a plan.
// Shared by the simulator tests (tests/sim, CI) and the GPU parity test (tests/gpu), which swaps
// in a runner (plan_runner) that runs each plan on both backends and compares the outputs.
#pragma once
#include "core/backend.hpp"
#include "core/backend/sim/sim.hpp"
#include "core/compile.hpp"

#include <nvrtc.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace simtest {

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string corpus_path(const std::string& name) {
  return std::string(WARPBOOK_SOURCE_ROOT) + "/tests/corpus/" + name;
}

// NVRTC straight from the tests (the core's compile_source adds a prelude; these sources need
// none).
inline std::string compile_ptx(const std::string& source, const std::string& name = "kernel.cu",
                               const std::string& arch = "compute_80") {
  std::string key = std::to_string(std::hash<std::string>{}(source + "|" + arch + "|" + name));
  std::filesystem::path dir = std::filesystem::path(WARPBOOK_BINARY_DIR) / "sim_ptx_cache";
  std::filesystem::path cached = dir / (key + ".ptx");
  if (std::filesystem::exists(cached)) return read_file(cached.string());
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw std::runtime_error("nvrtcCreateProgram failed");
  std::string a = "--gpu-architecture=" + arch;
  std::string inc = "-I" + wb::toolkit_include_dir(); // cuda_fp16.h, mma.h, ...
  const char* opts[] = {a.c_str(), "-lineinfo", inc.c_str(), "-std=c++17"};
  nvrtcResult r = nvrtcCompileProgram(prog, 4, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  std::string log(n, '\0');
  nvrtcGetProgramLog(prog, log.data());
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    throw std::runtime_error("NVRTC failed for " + name + ":\n" + log);
  }
  nvrtcGetPTXSize(prog, &n);
  std::string ptx(n, '\0');
  nvrtcGetPTX(prog, ptx.data());
  nvrtcDestroyProgram(&prog);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  std::filesystem::create_directories(dir);
  std::ofstream(cached, std::ios::binary) << ptx;
  return ptx;
}

inline wb::Program program_from(const std::string& source, const std::string& name = "kernel.cu",
                                const std::string& arch = "compute_80") {
  wb::Program p;
  p.ok = true;
  p.file = name;
  p.arch = arch;
  p.ptx = compile_ptx(source, name, arch);
  return p;
}

constexpr size_t kGuard = 256;

template <class T> wb::DType dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return wb::DType::f32;
  else if constexpr (std::is_same_v<T, double>)
    return wb::DType::f64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return wb::DType::i32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return wb::DType::u32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return wb::DType::i64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return wb::DType::i64;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return wb::DType::f16;
  else if constexpr (std::is_same_v<T, int8_t>)
    return wb::DType::i8;
  else
    return wb::DType::u8;
}

struct Plan;
// Runs a plan instead of the simulator when set (the GPU parity test sets it); null: simulator.
inline std::function<wb::RunResult(Plan&, unsigned workers)>& plan_runner() {
  static std::function<wb::RunResult(Plan&, unsigned)> f;
  return f;
}

// What the GPU parity test may accept as equal in one buffer, where the simulator and a GPU are
// allowed to differ: .approx instructions and sums whose order depends on atomics or on tensor-core
// internals (a relative and absolute tolerance in the buffer's float type), and elements whose
// value depends on which thread's atomic came last (`any`). Everything else must be bit-identical.
struct ParityRule {
  double rtol = 0, atol = 0;
  std::vector<size_t> any; // element indices whose value may differ
};

// A plan under construction: buffers by name, launches, then run().
struct Plan {
  wb::Program program;
  std::vector<wb::HostBuffer> buffers;
  std::vector<wb::Launch> launches;
  wb::RunPlan rp;
  std::map<int, ParityRule> parity; // by buffer index; read only by the GPU parity test

  // The buffer may differ from a GPU's within rtol/atol (see ParityRule).
  void approx(int buf, double rtol, double atol = 0) {
    parity[buf].rtol = rtol;
    parity[buf].atol = atol;
  }
  // Element `i` of the buffer depends on the order of atomics (for example atomicExch's winner).
  void any_value(int buf, size_t i) { parity[buf].any.push_back(i); }

  template <class T>
  int buffer(const std::string& name, const std::vector<T>& init, uint8_t guard_fill = 0xA5) {
    wb::HostBuffer b;
    b.name = name;
    b.type = dtype_of<T>();
    b.data_bytes = init.size() * sizeof(T);
    b.guard_bytes = kGuard;
    b.image.assign(kGuard * 2 + b.data_bytes, std::byte(guard_fill));
    if (!init.empty()) std::memcpy(b.image.data() + kGuard, init.data(), b.data_bytes);
    buffers.push_back(std::move(b));
    return int(buffers.size() - 1);
  }
  template <class T> std::vector<T> get(int i) const {
    const wb::HostBuffer& b = buffers[size_t(i)];
    std::vector<T> v(b.data_bytes / sizeof(T));
    std::memcpy(v.data(), b.image.data() + b.guard_bytes, b.data_bytes);
    return v;
  }
  bool guards_intact(int i, uint8_t fill = 0xA5) const {
    const wb::HostBuffer& b = buffers[size_t(i)];
    for (size_t k = 0; k < b.guard_bytes; ++k)
      if (b.image[k] != std::byte(fill) ||
          b.image[b.guard_bytes + b.data_bytes + k] != std::byte(fill))
        return false;
    return true;
  }
  static wb::KernelArg buf(int i) { return wb::KernelArg::of_buffer(i); }
  template <class T> static wb::KernelArg val(T v) { return wb::KernelArg::of_scalar(v); }
  // A CUtensorMap over buffer `i`: dims and box innermost first; strides (bytes, dimensions 1..)
  // packed from dims when empty.
  wb::KernelArg tensor_map(int i, std::vector<uint64_t> dims, std::vector<uint32_t> box,
                           wb::TmSwizzle swizzle = wb::TmSwizzle::none,
                           std::vector<uint64_t> strides = {}) const {
    wb::TensorMapSpec s;
    s.name = "tmap" + std::to_string(i);
    s.buffer = i;
    s.buffer_name = buffers[size_t(i)].name;
    s.buffer_bytes = buffers[size_t(i)].data_bytes;
    s.type = buffers[size_t(i)].type;
    s.rank = int(dims.size());
    s.swizzle = swizzle;
    uint64_t st = s.elem_bytes();
    for (size_t k = 0; k < dims.size(); ++k) {
      s.dims[k] = dims[k];
      s.box[k] = box[k];
      if (k + 1 < dims.size()) s.strides[k] = strides.empty() ? (st *= dims[k]) : strides[k];
    }
    return wb::KernelArg::of_tensor_map(s);
  }
  void launch(const std::string& kernel, wb::Dim3 grid, wb::Dim3 block,
              std::vector<wb::KernelArg> args, uint32_t shared = 0) {
    wb::Launch l;
    l.kernel = kernel;
    l.grid = grid;
    l.block = block;
    l.shared_bytes = shared;
    l.args = std::move(args);
    launches.push_back(std::move(l));
  }
  wb::RunResult run(unsigned workers = 0) {
    rp.program = &program;
    rp.buffers = &buffers;
    rp.launches = launches;
    if (plan_runner()) return plan_runner()(*this, workers);
    return run_sim(workers);
  }
  wb::RunResult run_sim(unsigned workers = 0) {
    rp.program = &program;
    rp.buffers = &buffers;
    rp.launches = launches;
    wb::sim::SimOptions o;
    o.workers = workers;
    wb::sim::Simulator s(o);
    return s.run(rp);
  }
};

inline double counter(const wb::RunResult& r, const std::string& name) {
  auto it = r.counters.total.find(name);
  return it == r.counters.total.end() ? 0.0 : it->second;
}

} // namespace simtest
