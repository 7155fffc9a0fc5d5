#include "probe.hpp"

#include "backend/cuda_driver.hpp"
#include "catalog.hpp"
#include "compile.hpp"
#include "roofline.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <future>
#include <numeric>
#include <sstream>
#include <thread>
#include <tuple>

namespace wb {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

constexpr unsigned kBlock = 256; // BS in probes.cu
constexpr int kMaxSamples = 48;

struct ProbeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Kernel arguments for cuLaunchKernel: each value in its own 8-byte slot.
class Args {
public:
  template <class T> Args& add(T v) {
    static_assert(sizeof(T) <= 8);
    Slot s{};
    std::memcpy(s.b, &v, sizeof v);
    slots_.push_back(s);
    return *this;
  }
  void** ptrs() {
    p_.clear();
    for (auto& s : slots_) p_.push_back(s.b);
    return p_.data();
  }

private:
  struct alignas(8) Slot {
    unsigned char b[8];
  };
  std::vector<Slot> slots_;
  std::vector<void*> p_;
};

// The primary context (the one the CUDA backend uses too), a stream, and what the probes
// allocate, all released on destruction.
class Gpu {
public:
  Gpu(const cuda::Driver& d, CUdevice dev) : d_(d), dev_(dev) {
    check(d_.cuDevicePrimaryCtxRetain(&ctx_, dev_), "retaining the CUDA context");
    retained_ = true;
    check(d_.cuCtxSetCurrent(ctx_), "making the CUDA context current");
    check(d_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "creating a stream");
  }
  ~Gpu() {
    d_.cuCtxSetCurrent(ctx_);
    if (stream_)
      while (d_.cuStreamQuery(stream_) == CUDA_ERROR_NOT_READY) std::this_thread::yield();
    for (auto p : allocs_) d_.cuMemFree(p);
    for (auto m : modules_) d_.cuModuleUnload(m);
    for (auto e : events_) d_.cuEventDestroy(e);
    for (auto e : spare_) d_.cuEventDestroy(e);
    if (stream_) d_.cuStreamDestroy(stream_);
    if (retained_) d_.cuDevicePrimaryCtxRelease(dev_);
  }
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  void check(CUresult r, const std::string& what) const {
    if (r != CUDA_SUCCESS) throw ProbeError(fmt::format("{}: {}", what, d_.error(r)));
  }
  int attr(CUdevice_attribute a) const {
    int v = 0;
    d_.cuDeviceGetAttribute(&v, a, dev_);
    return v;
  }
  size_t free_bytes() const {
    size_t f = 0, t = 0;
    d_.cuMemGetInfo(&f, &t);
    return f;
  }
  CUdeviceptr alloc(size_t bytes) {
    CUdeviceptr p = 0;
    check(d_.cuMemAlloc(&p, bytes), fmt::format("allocating {} MiB", bytes >> 20));
    allocs_.push_back(p);
    return p;
  }
  CUmodule load(const Program& p) {
    CUmodule m = nullptr;
    const void* image = p.cubin.empty() ? static_cast<const void*>(p.ptx.c_str())
                                        : static_cast<const void*>(p.cubin.data());
    check(d_.cuModuleLoadDataEx(&m, image, 0, nullptr, nullptr), "loading the probes");
    modules_.push_back(m);
    return m;
  }
  CUfunction function(CUmodule m, const std::string& name) const {
    CUfunction f = nullptr;
    check(d_.cuModuleGetFunction(&f, m, name.c_str()), "finding kernel " + name);
    return f;
  }
  // Resident blocks of `block` threads per SM, from the kernel's registers and shared memory.
  int blocks_per_sm(CUfunction f, unsigned block) const {
    int regs = 0, smem = 0;
    d_.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    d_.cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    const int max_threads = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    const int max_regs = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    const int max_smem = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    int max_blocks = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    if (max_blocks <= 0) max_blocks = 16;
    int n = std::min(max_blocks, max_threads / int(block));
    // Registers are allocated per warp in units of 256 (8 per thread).
    const int regs_per_block = ((std::max(regs, 1) + 7) / 8) * 8 * int(block);
    if (regs_per_block > 0) n = std::min(n, max_regs / regs_per_block);
    // Each block also reserves 1 KiB of shared memory for the system.
    if (smem > 0) n = std::min(n, max_smem / (smem + 1024));
    return std::max(n, 1);
  }
  void launch(CUfunction f, unsigned grid, unsigned block, Args& a) {
    check(d_.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream_, a.ptrs(), nullptr),
          "launching a probe");
  }
  // Polls the stream rather than cuCtxSynchronize, whose entry point changed signature in CUDA 13
  // (cuGetProcAddress hands out the version that takes a context).
  void sync() {
    for (int spins = 0;; ++spins) {
      CUresult r = d_.cuStreamQuery(stream_);
      if (r == CUDA_SUCCESS) return;
      if (r != CUDA_ERROR_NOT_READY) check(r, "waiting for a probe");
      if (spins > 1000)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      else
        std::this_thread::yield();
    }
  }
  // `n` launches back to back, each between its own pair of events; milliseconds per launch.
  std::vector<double> timed(CUfunction f, unsigned grid, unsigned block, Args& a, int n) {
    while (events_.size() < size_t(2 * n)) {
      CUevent e = nullptr;
      check(d_.cuEventCreate(&e, CU_EVENT_DEFAULT), "creating an event");
      events_.push_back(e);
    }
    for (int k = 0; k < n; ++k) {
      check(d_.cuEventRecord(events_[2 * k], stream_), "recording an event");
      launch(f, grid, block, a);
      check(d_.cuEventRecord(events_[2 * k + 1], stream_), "recording an event");
    }
    sync();
    std::vector<double> ms(n);
    for (int k = 0; k < n; ++k) {
      float t = 0;
      check(d_.cuEventElapsedTime(&t, events_[2 * k], events_[2 * k + 1]), "reading an event");
      ms[k] = t;
    }
    return ms;
  }
  // Two spare events (beyond those timed() uses) for timing a batch of launches.
  CUevent event(int i) {
    while (spare_.size() <= size_t(i)) {
      CUevent e = nullptr;
      check(d_.cuEventCreate(&e, CU_EVENT_DEFAULT), "creating an event");
      spare_.push_back(e);
    }
    return spare_[size_t(i)];
  }
  void record(CUevent e) { check(d_.cuEventRecord(e, stream_), "recording an event"); }
  double elapsed(CUevent a, CUevent b) {
    float t = 0;
    check(d_.cuEventElapsedTime(&t, a, b), "reading an event");
    return t;
  }
  double once_smem(CUfunction f, unsigned grid, unsigned block, Args& a, unsigned smem) {
    CUevent e0 = event(0), e1 = event(1);
    record(e0);
    check(d_.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, smem, stream_, a.ptrs(), nullptr),
          "launching a probe");
    record(e1);
    sync();
    return elapsed(e0, e1);
  }
  bool set_dynamic_smem(CUfunction f, unsigned bytes) {
    return d_.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(bytes)) ==
           CUDA_SUCCESS;
  }
  double once(CUfunction f, unsigned grid, unsigned block, Args& a) {
    return timed(f, grid, block, a, 1)[0];
  }
  CUstream stream() const { return stream_; }

private:
  const cuda::Driver& d_;
  CUdevice dev_;
  CUcontext ctx_ = nullptr;
  bool retained_ = false;
  CUstream stream_ = nullptr;
  std::vector<CUdeviceptr> allocs_;
  std::vector<CUmodule> modules_;
  std::vector<CUevent> events_;
  std::vector<CUevent> spare_;
};

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One kernel whose work per launch is known: `work(args)` bytes or operations.
struct Runner {
  Gpu& gpu;
  const ProbeOptions& opt;

  // A warm launch, then enough timed launches for ms_per_probe of GPU time (at least 5).
  ProbeResult measure(ProbeResult r, CUfunction f, unsigned grid, Args& a, double work,
                      double share = 1.0) {
    gpu.launch(f, grid, kBlock, a);
    const double est = gpu.once(f, grid, kBlock, a);
    const int n = int(std::clamp(std::ceil(opt.ms_per_probe * share / std::max(est, 1e-3)), 5.0,
                                 double(kMaxSamples)));
    std::vector<double> ms = gpu.timed(f, grid, kBlock, a, n);
    const double best_ms = *std::min_element(ms.begin(), ms.end());
    const double med_ms = median_of(ms);
    r.samples = n;
    r.launch_us = med_ms * 1e3;
    r.best = work / (best_ms * 1e6); // per second, in units of 10^9
    r.median = work / (med_ms * 1e6);
    return r;
  }
  // Sizes a loop count so that one launch runs about opt.launch_ms.
  int calibrate(CUfunction f, unsigned grid, unsigned block, const std::function<Args(int)>& make,
                int iters0) {
    Args a = make(iters0);
    gpu.launch(f, grid, block, a); // first launch: module and code loading
    double t = gpu.once(f, grid, block, a);
    int iters = iters0;
    // Grow until a launch is long enough to extrapolate from (a few hundred microseconds).
    while (t < 0.2 && iters < (1 << 28)) {
      iters *= 4;
      a = make(iters);
      t = gpu.once(f, grid, block, a);
    }
    return std::max(1, int(std::lround(iters * opt.launch_ms / std::max(t, 1e-3))));
  }
};

struct Compiled {
  Program program;
  double ms = 0;
};

Compiled compile_part(const std::string& source, const std::string& arch, int part) {
  auto t0 = Clock::now();
  CompileOptions co;
  co.arch = arch;
  co.defines["WB_PART"] = part;
  Compiled c;
  c.program = compile_source(source, "probes.cu", co);
  c.ms = ms_since(t0);
  return c;
}

std::string first_error(const Program& p) {
  for (auto& d : p.diagnostics)
    if (d.severity == Diagnostic::Severity::error) return d.str();
  return p.log.substr(0, 300);
}

ProbeResult make_result(const char* metric, const char* label, const GpuProfile* prof) {
  ProbeResult r;
  r.metric = metric;
  r.label = label;
  r.unit = metric_unit(metric);
  r.kernel = "";
  if (prof) r.datasheet = datasheet_metric(*prof, metric);
  return r;
}

// ---- the performance model's probes ---------------------------------------------------------
// Each result is a ProbeResult whose `best` holds the figure (a latency in ns, a rate, a size)
// and `median` the median one; units follow the metric name (metric_unit).

// A chain of `slots` slots `stride` 8-byte words apart (each holding the next one's address) that
// visits every slot once per cycle, in jumps of about 0.618 of the footprint (so neighbouring hops
// are far apart in memory).
void init_chain(Gpu& gpu, CUmodule mod, CUdeviceptr buf, unsigned slots, unsigned stride) {
  unsigned step = std::max(1u, unsigned(double(slots) * 0.6180339887));
  while (std::gcd(step, slots) != 1) ++step;
  CUfunction f = gpu.function(mod, "chase_init");
  Args a;
  a.add(buf).add(slots).add(stride).add(step);
  gpu.launch(f, std::min(65535u, (slots + kBlock - 1) / kBlock), kBlock, a);
  gpu.sync();
}

bool d_max_dyn_smem(Gpu& gpu, CUfunction f, unsigned bytes) {
  return gpu.set_dynamic_smem(f, bytes);
}

// Nanoseconds per hop of a one-thread chase of `hops` hops (the fastest of `reps` launches).
double chase_ns(Gpu& gpu, CUfunction f, CUdeviceptr buf, int hops, float never, CUdeviceptr sink,
                int reps = 3) {
  double best = 1e30;
  hops = std::max(8, hops / 8 * 8); // the chase kernels take 8 hops per loop trip
  for (int r = 0; r < reps; ++r) {
    Args a;
    a.add(buf).add(hops).add(never).add(sink);
    best = std::min(best, gpu.once(f, 1, 1, a));
  }
  return best * 1e6 / hops;
}

void machine_probes(Gpu& gpu, CUmodule mod, ProbeSuite& suite, const GpuProfile* prof,
                    CUdeviceptr big, size_t big_bytes, CUdeviceptr flush, size_t flush_bytes,
                    float never, CUdeviceptr sink,
                    const std::function<void(const std::string&)>& progress) {
  auto put = [&](const char* metric, const char* label, double best, double median,
                 std::string kernel) {
    ProbeResult r = make_result(metric, label, prof);
    r.best = best;
    r.median = median;
    r.samples = 1;
    r.model_parameter = true;
    r.kernel = std::move(kernel);
    suite.results.push_back(std::move(r));
  };
  const unsigned sms = unsigned(std::max(1, suite.device.sm_count));
  const size_t l2 = size_t(std::max<int64_t>(suite.device.l2_bytes, 1 << 20));
  progress("latencies");

  // -- L1: 128 slots 128 bytes apart (16 KiB), cached in L1; warmed by the first launch.
  {
    init_chain(gpu, mod, big, 128, 16);
    CUfunction f = gpu.function(mod, "chase_ca");
    chase_ns(gpu, f, big, 1024, never, sink, 1);
    double ns = chase_ns(gpu, f, big, 200000, never, sink);
    put(metric::l1_latency, "L1 hit latency (pointer chase)", ns, ns, "chase_ca 16 KiB");
  }
  // -- L2: a footprint of 4 MiB (far past L1, far inside L2), walked once to warm it.
  CUfunction cg = gpu.function(mod, "chase_cg");
  double l2_ns = 0;
  {
    const unsigned slots = unsigned((size_t(4) << 20) / 128);
    init_chain(gpu, mod, big, slots, 16);
    chase_ns(gpu, cg, big, int(slots), never, sink, 1);
    l2_ns = chase_ns(gpu, cg, big, int(4 * slots), never, sink, 2);
    put(metric::l2_latency, "L2 hit latency (pointer chase)", l2_ns, l2_ns, "chase_cg 4 MiB");
  }
  // -- Atomics' round trip: the same warm 4 MiB chain walked with atomicAdd(p, 0).
  {
    const unsigned slots = unsigned((size_t(4) << 20) / 128);
    CUfunction f = gpu.function(mod, "chase_atomic");
    double ns = chase_ns(gpu, f, big, int(slots), never, sink, 2);
    put(metric::atomic_latency, "atomic latency (L2, chain of atomicAdd)", ns, ns,
        "chase_atomic 4 MiB");
  }
  // -- DRAM: a footprint of 8 L2s, each slot visited at most once, after reading another buffer
  // of twice the L2 through the L2 (so that nothing chase_init wrote is still there).
  double dram_ns = 0;
  {
    size_t foot = std::min(big_bytes, 8 * l2);
    const unsigned slots = unsigned(foot / 128);
    init_chain(gpu, mod, big, slots, 16);
    const int hops = int(std::min<unsigned>(slots / 2, 20000));
    {
      CUfunction fr = gpu.function(mod, "sector_read");
      const long count = long(std::min(flush_bytes, 2 * l2) / 4);
      Args a;
      a.add(flush).add(count).add(1).add(never).add(sink);
      gpu.launch(fr, sms * 8, kBlock, a);
      gpu.sync();
    }
    dram_ns = chase_ns(gpu, cg, big, hops, never, sink, 1);
    put(metric::dram_latency, "DRAM latency (pointer chase, 8x the L2)", dram_ns, dram_ns,
        fmt::format("chase_cg {} MiB", foot >> 20));
  }
  // -- The L2's effective capacity: the largest footprint (in steps of 1/16 of the L2 the device
  // reports) whose warm chase stays nearer the L2's latency than DRAM's. (On an H200 this is about
  // half the 60 MiB: the L2 is two partitions, and data read by SMs of both can sit in each.)
  {
    double cap = 0;
    for (int sixteenths = 4; sixteenths <= 32; ++sixteenths) {
      size_t foot = l2 * size_t(sixteenths) / 16 / 128 * 128;
      if (foot > big_bytes) break;
      const unsigned slots = unsigned(foot / 128);
      init_chain(gpu, mod, big, slots, 16);
      chase_ns(gpu, cg, big, int(slots), never, sink, 1); // warm
      double ns = chase_ns(gpu, cg, big, int(slots), never, sink, 1);
      if (ns > 0.5 * (l2_ns + dram_ns)) break;
      cap = double(foot);
    }
    put(metric::l2_capacity, "L2 effective capacity (warm chase stays in L2)", cap / 1048576.0,
        cap / 1048576.0, "chase_cg sweep");
  }
  // -- Shared memory.
  {
    CUfunction f = gpu.function(mod, "chase_shared");
    auto run = [&](int hops) {
      double best = 1e30;
      for (int r = 0; r < 3; ++r) {
        Args a;
        a.add(hops).add(5003u).add(never).add(sink);
        best = std::min(best, gpu.once(f, 1, 32, a));
      }
      return best;
    };
    run(1000);
    double ns = (run(400000) - run(200000)) * 1e6 / 200000; // (multiples of 8)
    put(metric::shared_latency, "shared memory latency (pointer chase)", ns, ns, "chase_shared");
  }

  // -- Atomics' throughput: a resident grid, iterations sized to a few milliseconds.
  progress("atomics");
  auto atomic_rate = [&](const char* kernel, auto make, double per_thread_iter) {
    CUfunction f = gpu.function(mod, kernel);
    const unsigned grid = sms * unsigned(gpu.blocks_per_sm(f, kBlock));
    int iters = 4;
    double t = 0;
    for (;;) {
      Args a = make(iters);
      gpu.launch(f, grid, kBlock, a);
      t = gpu.once(f, grid, kBlock, a);
      if (t > 2.0 || iters > (1 << 24)) break;
      iters *= 4;
    }
    std::vector<double> ms;
    for (int r = 0; r < 5; ++r) {
      Args a = make(iters);
      ms.push_back(gpu.once(f, grid, kBlock, a));
    }
    const double n = double(grid) * kBlock * iters * per_thread_iter;
    return std::pair{n / (*std::min_element(ms.begin(), ms.end()) * 1e6),
                     n / (median_of(ms) * 1e6)};
  };
  {
    auto [b, m] = atomic_rate(
        "atomic_one",
        [&](int it) {
          Args a;
          a.add(big).add(it);
          return a;
        },
        1);
    put(metric::atomic_one, "atomics on one address (whole grid)", b, m, "atomic_one");
  }
  {
    auto [b, m] = atomic_rate(
        "atomic_one_u32",
        [&](int it) {
          Args a;
          a.add(big).add(it);
          return a;
        },
        1);
    put(metric::atomic_one_u32, "u32 atomics on one address (whole grid)", b, m, "atomic_one_u32");
  }
  {
    // One lane per warp: counted per lane, so per-lane serialisation gives the figure above and
    // per-warp-instruction serialisation gives it too (but then atomic_one / 32 per lane above).
    auto [b, m] = atomic_rate(
        "atomic_one_lane",
        [&](int it) {
          Args a;
          a.add(big).add(it);
          return a;
        },
        1.0 / 32);
    put(metric::atomic_one_lane, "atomics on one address, one lane per warp", b, m,
        "atomic_one_lane");
  }
  {
    auto [b, m] = atomic_rate(
        "atomic_warp",
        [&](int it) {
          Args a;
          a.add(big).add(it);
          return a;
        },
        1);
    put(metric::atomic_warp, "atomics, one address per warp", b, m, "atomic_warp");
  }
  {
    const unsigned mask = unsigned((size_t(8) << 20) / 4 - 1); // 8 MiB of counters
    auto [b, m] = atomic_rate(
        "atomic_spread",
        [&](int it) {
          Args a;
          a.add(big).add(mask).add(it);
          return a;
        },
        1);
    put(metric::atomic_spread, "atomics, every thread its own sector (L2)", b, m, "atomic_spread");
  }
  {
    auto [b, m] = atomic_rate(
        "atomic_shared_one",
        [&](int it) {
          Args a;
          a.add(it).add(never).add(sink);
          return a;
        },
        1);
    put(metric::atomic_shared_one, "shared-memory atomics on one address per block", b, m,
        "atomic_shared_one");
  }

  for (auto [spread, metric, label] :
       {std::tuple{0, metric::atomic_shared_u32_one, "shared u32 atomics, one word per block"},
        std::tuple{1, metric::atomic_shared_u32_spread, "shared u32 atomics, a word per lane"},
        std::tuple{2, metric::atomic_shared_u32_warp, "shared u32 atomics, one word per warp"}}) {
    auto [b, m] = atomic_rate(
        "atomic_shared_u32",
        [&, spread = spread](int it) {
          Args a;
          a.add(it).add(spread).add(never).add(sink);
          return a;
        },
        1);
    put(metric, label, b, m, "atomic_shared_u32");
  }

  // Float adds on many words: one per warp (a sector apart), one per block (side by side).
  for (auto [kernel, metric, label] :
       {std::tuple{"atomic_warp_f32", metric::atomic_warp_f32, "float atomics, one word per warp"},
        std::tuple{"atomic_row_f32", metric::atomic_row_f32,
                   "float atomics, one word per block (side by side)"}}) {
    auto [b, m] = atomic_rate(
        kernel,
        [&](int it) {
          Args a;
          a.add(big).add(it);
          return a;
        },
        1);
    put(metric, label, b, m, kernel);
  }
  {
    auto [b, m] = atomic_rate(
        "atomic_shared_f32_warp",
        [&](int it) {
          Args a;
          a.add(it).add(never).add(sink);
          return a;
        },
        1);
    put(metric::atomic_shared_f32_warp, "shared float atomics, one word per warp", b, m,
        "atomic_shared_f32_warp");
  }

  // -- Memory-level parallelism: a read stream with a known number of bytes in flight per SM
  // (warps x 32 lanes x 16 bytes x loads in flight per thread), and the bandwidth it reaches.
  progress("memory-level parallelism");
  {
    struct Point {
      const char* metric;
      int blocks; // 128-thread blocks per SM
      int unroll;
    };
    for (Point pt : {Point{metric::dram_mlp_2k, 1, 1}, Point{metric::dram_mlp_4k, 2, 1},
                     Point{metric::dram_mlp_8k, 4, 1}, Point{metric::dram_mlp_16k, 8, 1},
                     Point{metric::dram_mlp_32k, 16, 1}, Point{metric::dram_mlp_64k, 16, 2},
                     Point{metric::dram_mlp_128k, 16, 4}}) {
      const char* kernel = pt.unroll == 1   ? "mlp_read_u1"
                           : pt.unroll == 2 ? "mlp_read_u2"
                                            : "mlp_read_u4";
      CUfunction f = gpu.function(mod, kernel);
      const unsigned grid = sms * unsigned(pt.blocks);
      const long unit = long(grid) * 128 * pt.unroll;
      const long n4 = long(big_bytes / 16) / unit * unit;
      Args a;
      a.add(big).add(n4).add(never).add(sink);
      gpu.launch(f, grid, 128, a);
      std::vector<double> ms;
      for (int r = 0; r < 3; ++r) ms.push_back(gpu.once(f, grid, 128, a));
      const double bytes = 16.0 * double(n4);
      const double kb = double(pt.blocks) * 4 * 32 * 16 * pt.unroll / 1024.0;
      put(pt.metric, "", bytes / (*std::min_element(ms.begin(), ms.end()) * 1e6),
          bytes / (median_of(ms) * 1e6),
          fmt::format("{} ({} blocks of 128 per SM: {:.0f} KiB in flight per SM)", kernel,
                      pt.blocks, kb));
      suite.results.back().label = fmt::format("DRAM read, {:.0f} KiB in flight per SM", kb);
    }
  }

  // -- The L2 a sector at a time (uncoalesced reads, partial-sector writes) and whole-line
  // writes, on an 8 MiB window the L2 keeps.
  progress("l2 sectors");
  {
    const unsigned mask = (1u << 21) - 1; // 2^21 floats: 8 MiB
    auto l2_rate = [&](const char* kernel, auto make, double per_rep) {
      CUfunction f = gpu.function(mod, kernel);
      const unsigned grid = sms * unsigned(gpu.blocks_per_sm(f, kBlock));
      int reps = 1;
      double t = 0;
      for (;;) {
        Args a = make(reps);
        gpu.launch(f, grid, kBlock, a);
        t = gpu.once(f, grid, kBlock, a);
        if (t > 1.0 || reps > (1 << 20)) break;
        reps *= 4;
      }
      std::vector<double> ms;
      for (int r = 0; r < 3; ++r) {
        Args a = make(reps);
        ms.push_back(gpu.once(f, grid, kBlock, a));
      }
      const double n = per_rep * reps;
      return std::pair{n / (*std::min_element(ms.begin(), ms.end()) * 1e6),
                       n / (median_of(ms) * 1e6)};
    };
    const double sectors = double(mask + 1) / 8;
    {
      auto [b, m] = l2_rate(
          "l2_sector_read",
          [&](int reps) {
            Args a;
            a.add(big).add(mask).add(reps).add(never).add(sink);
            return a;
          },
          sectors);
      put(metric::l2_sector_read, "L2 reads of 4 bytes, a sector per lane (G sectors/s)", b, m,
          "l2_sector_read 8 MiB");
    }
    {
      auto [b, m] = l2_rate(
          "l2_sector_write",
          [&](int reps) {
            Args a;
            a.add(big).add(mask).add(reps);
            return a;
          },
          sectors);
      put(metric::l2_sector_write, "L2 writes of 4 bytes, a sector per lane (G sectors/s)", b, m,
          "l2_sector_write 8 MiB");
    }
    {
      const unsigned n4 = (mask + 1) / 4;
      auto [b, m] = l2_rate(
          "l2_write",
          [&](int reps) {
            Args a;
            a.add(big).add(n4).add(reps);
            return a;
          },
          16.0 * n4);
      put(metric::l2_write, "L2 write (whole lines, 8 MiB window)", b, m, "l2_write 8 MiB");
    }
  }

  // -- A sequential stream, one thread per SM: nanoseconds per 64 bytes.
  {
    CUfunction f = gpu.function(mod, "seq_read");
    const long per_block = long(std::min<size_t>(big_bytes / 4 / sms, size_t(1) << 18)); // 1 MiB
    Args a;
    a.add(big).add(per_block).add(never).add(sink);
    gpu.launch(f, sms, 32, a);
    std::vector<double> ms;
    for (int r = 0; r < 3; ++r) ms.push_back(gpu.once(f, sms, 32, a));
    const double ns = *std::min_element(ms.begin(), ms.end()) * 1e6 / (double(per_block) * 4 / 64);
    put(metric::seq_read_ns, "one thread streaming its own MiB: ns per 64 bytes", ns, ns,
        "seq_read");
  }

  // -- Launches: one empty launch between events; 200 back to back; many empty blocks.
  progress("launches");
  {
    CUfunction f = gpu.function(mod, "empty_kernel");
    Args a;
    a.add(never).add(sink);
    gpu.launch(f, 1, 32, a);
    std::vector<double> one = gpu.timed(f, 1, 32, a, 40);
    put(metric::launch, "empty kernel launch (events around one)",
        *std::min_element(one.begin(), one.end()) * 1e3, median_of(one) * 1e3, "empty_kernel");
    // Back to back: events around the whole batch.
    std::vector<double> per;
    for (int r = 0; r < 5; ++r) {
      CUevent e0 = gpu.event(0), e1 = gpu.event(1);
      gpu.record(e0);
      for (int k = 0; k < 200; ++k) gpu.launch(f, 1, 32, a);
      gpu.record(e1);
      gpu.sync();
      per.push_back(gpu.elapsed(e0, e1) * 1e3 / 200);
    }
    put(metric::launch_gap, "empty kernels back to back (per launch)",
        *std::min_element(per.begin(), per.end()), median_of(per), "empty_kernel x200");
    {
      // One block at a time per SM (120 KiB of dynamic shared memory each): how soon an SM starts
      // the next block after one ends.
      const unsigned smem = 120 * 1024;
      if (d_max_dyn_smem(gpu, f, smem)) {
        const unsigned g1 = sms * 16, g2 = sms * 256;
        double t1 = 1e30, t2 = 1e30;
        for (int r = 0; r < 3; ++r) {
          t1 = std::min(t1, gpu.once_smem(f, g1, 32, a, smem));
          t2 = std::min(t2, gpu.once_smem(f, g2, 32, a, smem));
        }
        double ns = (t2 - t1) * 1e6 / double(g2 / sms - g1 / sms);
        put(metric::block_turnover, "one block at a time per SM: ns from one to the next", ns, ns,
            "empty_kernel (120 KiB shared)");
      }
    }
    for (auto [threads, metric, label] :
         {std::tuple{32u, metric::block_rate_32, "empty blocks of 32 threads per microsecond"},
          std::tuple{256u, metric::block_rate_256, "empty blocks of 256 threads per microsecond"},
          std::tuple{1024u, metric::block_rate_1024,
                     "empty blocks of 1024 threads per microsecond"}}) {
      const unsigned g1 = sms * 64, g2 = sms * 1024;
      double t1 = 1e30, t2 = 1e30;
      for (int r = 0; r < 3; ++r) {
        t1 = std::min(t1, gpu.once(f, g1, threads, a));
        t2 = std::min(t2, gpu.once(f, g2, threads, a));
      }
      double rate = double(g2 - g1) / std::max((t2 - t1) * 1e3, 1e-6);
      put(metric, label, rate, rate, fmt::format("empty_kernel ({} threads)", threads));
    }
  }

  // -- Sector-sized DRAM traffic over the big buffer (16 L2s), one word per `stride` words.
  progress("dram sectors");
  {
    CUfunction fr = gpu.function(mod, "sector_read");
    CUfunction fw = gpu.function(mod, "sector_write");
    CUfunction fs = gpu.function(mod, "dram_write_cs");
    const unsigned grid = sms * 8;
    auto best_median = [&](CUfunction f, unsigned g, auto make, double bytes) {
      Args a = make();
      gpu.launch(f, g, kBlock, a);
      std::vector<double> ms;
      for (int r = 0; r < 5; ++r) ms.push_back(gpu.once(f, g, kBlock, a));
      return std::pair{bytes / (*std::min_element(ms.begin(), ms.end()) * 1e6),
                       bytes / (median_of(ms) * 1e6)};
    };
    for (auto [stride, metric, label] :
         {std::tuple{16, metric::dram_sector_read_64, "DRAM reads, one sector per 64 bytes"},
          std::tuple{32, metric::dram_sector_read, "DRAM reads, one sector per 128-byte line"}}) {
      const long count = long(big_bytes / (size_t(stride) * 4));
      auto [b, m] = best_median(
          fr, grid,
          [&] {
            Args a;
            a.add(big).add(count).add(stride).add(never).add(sink);
            return a;
          },
          32.0 * double(count));
      put(metric, label, b, m,
          fmt::format("sector_read stride {} (32 B counted per sector)", stride));
    }
    {
      const long count = long(big_bytes / 128);
      auto [b, m] = best_median(
          fw, grid,
          [&] {
            Args a;
            a.add(big).add(count).add(32);
            return a;
          },
          32.0 * double(count));
      put(metric::dram_sector_write, "DRAM writes of 4 bytes, one per 128-byte line", b, m,
          "sector_write stride 32 (32 B counted per sector)");
    }
    {
      const long n4 = long(big_bytes / 16) / (long(grid) * kBlock * 4) * (long(grid) * kBlock * 4);
      auto [b, m] = best_median(
          fs, grid,
          [&] {
            Args a;
            a.add(big).add(n4);
            return a;
          },
          16.0 * double(n4));
      put(metric::dram_write, "DRAM write stream", b, m, "dram_write_cs");
    }
  }
}

} // namespace

const ProbeResult* ProbeSuite::find(std::string_view metric) const {
  for (auto& r : results)
    if (r.metric == metric) return &r;
  return nullptr;
}

fs::path find_probe_source(const std::string& catalog) {
  std::error_code ec;
  for (fs::path root : {default_catalog_root(catalog), fs::path(WARPBOOK_SOURCE_ROOT)}) {
    fs::path p = root / "kernels" / "probes.cu";
    if (fs::is_regular_file(p, ec)) return p;
  }
  return {};
}

ProbeSuite run_probes(const ProbeOptions& opt) {
  const auto t_start = Clock::now();
  ProbeSuite suite;
  auto progress = [&](const std::string& s) {
    if (opt.progress) opt.progress(s);
  };

  fs::path src_path =
      opt.kernels_file.empty() ? find_probe_source(opt.catalog) : fs::path(opt.kernels_file);
  if (src_path.empty() || !fs::is_regular_file(src_path)) {
    suite.error = "kernels/probes.cu was not found (looked beside the catalog and in the source "
                  "tree)";
    return suite;
  }
  const std::string source = read_text(src_path);

  // The compute capability, straight from the driver (no context yet), so that compiling can
  // start while the context is created.
  std::string why;
  const cuda::Driver* drv = cuda::driver(why);
  CUdevice dev = 0;
  int cc = 0;
  if (drv && drv->cuInit(0) == CUDA_SUCCESS && drv->cuDeviceGet(&dev, 0) == CUDA_SUCCESS) {
    int major = 0, minor = 0;
    drv->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    drv->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    cc = major * 10 + minor;
  }
  if (!drv || cc == 0) {
    suite.error = "no GPU: " + (why.empty() ? std::string("the driver found no CUDA device") : why);
    return suite;
  }
  const bool hopper = cc == 90;
  const bool want_wgmma = hopper && opt.wgmma;
  // sm_90a (arch-specific features) on Hopper, so the wgmma kernels exist.
  const std::string arch = hopper ? "sm_90a" : fmt::format("sm_{}", cc);

  // Three programs at once: ptxas spends a few hundred milliseconds on each wgmma kernel, and all
  // of it overlaps the context's creation and the first probes.
  progress("compiling");
  std::future<Compiled> f_main = std::async(std::launch::async, compile_part, source, arch, 0);
  std::future<Compiled> f_bf16, f_f16;
  if (want_wgmma) {
    f_bf16 = std::async(std::launch::async, compile_part, source, arch, 1);
    f_f16 = std::async(std::launch::async, compile_part, source, arch, 2);
  }
  auto wait_all = [&] {
    for (auto* f : {&f_main, &f_bf16, &f_f16})
      if (f->valid()) f->wait();
  };
  double wgmma_compile_ms = 0;

  // The backend gives the device's identity exactly as the checks see it (UUID, driver).
  auto backend = make_cuda_backend(why);
  if (!backend) {
    suite.error = "no GPU: " + why;
    wait_all();
    return suite;
  }
  suite.device = backend->info();
  const GpuProfile* prof = profile_for_device(suite.device);
  if (prof) suite.profile = prof->key;
  Compiled main_prog = f_main.get();
  if (!main_prog.program.ok) {
    suite.error = "the probes do not compile: " + first_error(main_prog.program);
    wait_all();
    return suite;
  }

  try {
    Gpu gpu(*drv, dev);
    CUmodule mod = gpu.load(main_prog.program);
    Runner run{gpu, opt};
    const unsigned sms = unsigned(std::max(1, suite.device.sm_count));
    const float never = -1.2345e-37f; // no probe's result can equal this
    CUdeviceptr sink = gpu.alloc(size_t(sms) * 64 * kBlock * sizeof(float));

    auto grid_for = [&](CUfunction f) { return sms * unsigned(gpu.blocks_per_sm(f, kBlock)); };
    auto add = [&](ProbeResult r) { suite.results.push_back(std::move(r)); };

    // -- Clock ramp: FMA launches until three in a row agree within 1% (100..500 ms).
    progress("clock ramp");
    {
      auto t0 = Clock::now();
      CUfunction f = gpu.function(mod, "fma_f32");
      const unsigned grid = grid_for(f);
      auto make = [&](int iters) {
        Args a;
        a.add(iters).add(0.9999f).add(1e-4f).add(never).add(sink);
        return a;
      };
      Args a = make(run.calibrate(f, grid, kBlock, make, 64));
      std::vector<double> t;
      while (ms_since(t0) < 500) {
        t.push_back(gpu.once(f, grid, kBlock, a));
        const size_t n = t.size();
        if (ms_since(t0) > 100 && n >= 3 &&
            std::max({t[n - 1], t[n - 2], t[n - 3]}) <
                1.01 * std::min({t[n - 1], t[n - 2], t[n - 3]}))
          break;
      }
      suite.ramp_ms = ms_since(t0);
      if (t.size() >= 2) suite.ramp_start_mhz_ratio = t.front() / t.back();
    }

    // -- Arithmetic.
    auto compute_probe = [&](const char* metric, const char* label, const char* kernel,
                             double work_per_thread_iter, auto make) {
      progress(label);
      ProbeResult r = make_result(metric, label, prof);
      r.kernel = kernel;
      CUfunction f = gpu.function(mod, kernel);
      const unsigned grid = grid_for(f);
      const int iters = run.calibrate(f, grid, kBlock, make, 16);
      Args a = make(iters);
      add(run.measure(r, f, grid, a, work_per_thread_iter * double(grid) * kBlock * iters));
    };
    auto plain = [&](int iters) {
      Args a;
      a.add(iters).add(never).add(sink);
      return a;
    };
    compute_probe(metric::fp32, "FP32 FMA (8 chains, unrolled 16)", "fma_f32", 2.0 * 8 * 16,
                  [&](int iters) {
                    Args a;
                    a.add(iters).add(0.9999f).add(1e-4f).add(never).add(sink);
                    return a;
                  });
    compute_probe(metric::fp64, "FP64 FMA (8 chains, unrolled 8)", "fma_f64", 2.0 * 8 * 8,
                  [&](int iters) {
                    Args a;
                    a.add(iters).add(0.9999).add(1e-4).add(never).add(sink);
                    return a;
                  });
    if (cc >= 80) {
      // Per thread per iteration: 8 mma of 4096 (8192 for int8) operations per warp, / 32 lanes.
      compute_probe(metric::mma_f16, "FP16 tensor mma.sync m16n8k16 (f32 accumulate)", "mma_f16",
                    8 * 4096.0 / 32, plain);
      compute_probe(metric::mma_bf16, "BF16 tensor mma.sync m16n8k16 (f32 accumulate)", "mma_bf16",
                    8 * 4096.0 / 32, plain);
      compute_probe(metric::mma_s8, "INT8 tensor mma.sync m16n8k32 (s32 accumulate)", "mma_s8",
                    8 * 8192.0 / 32, plain);
      if (cc >= 89)
        compute_probe(metric::mma_e4m3, "FP8 e4m3 tensor mma.sync m16n8k32 (f32 accumulate)",
                      "mma_e4m3", 8 * 8192.0 / 32, plain);
    } else {
      for (auto [m, l] : {std::pair{metric::mma_f16, "FP16 tensor mma.sync"},
                          std::pair{metric::mma_bf16, "BF16 tensor mma.sync"},
                          std::pair{metric::mma_s8, "INT8 tensor mma.sync"}}) {
        ProbeResult r = make_result(m, l, prof);
        r.skipped = "the m16n8k16 probes need compute capability 8.0";
        add(r);
      }
    }

    // -- Shared memory: 8 loads of 16 bytes per thread per iteration.
    {
      const char* label = "shared memory (16-byte loads)";
      progress(label);
      ProbeResult r = make_result(metric::shared, label, prof);
      r.kernel = "shared_read";
      CUfunction f = gpu.function(mod, r.kernel);
      const unsigned grid = grid_for(f);
      const int iters = run.calibrate(f, grid, kBlock, plain, 64);
      Args a = plain(iters);
      add(run.measure(r, f, grid, a, 8.0 * 16 * double(grid) * kBlock * iters));
    }

    // -- DRAM: buffers of at least 16 times the L2 each, filled on the device.
    const size_t l2 = size_t(std::max<int64_t>(suite.device.l2_bytes, 1 << 20));
    size_t arr = std::max<size_t>(16 * l2, size_t(256) << 20);
    arr = std::min(arr, gpu.free_bytes() / 12); // the three arrays within a quarter of free memory
    arr &= ~size_t((1 << 20) - 1);
    const long n4 = long(arr / 16);
    CUdeviceptr a_buf = gpu.alloc(arr), b_buf = gpu.alloc(arr), c_buf = gpu.alloc(arr);
    {
      CUfunction fill = gpu.function(mod, "wb_fill");
      for (auto [p, seed] : {std::pair{a_buf, 1u}, std::pair{b_buf, 2u}, std::pair{c_buf, 3u}}) {
        Args a;
        a.add(p).add(n4).add(seed);
        gpu.launch(fill, sms * 8, kBlock, a);
      }
      gpu.sync();
    }
    struct Variant {
      const char* kernel;
      int unroll;
      int streams;       // arrays touched: read 1, copy 2, triad 3
      bool flat = false; // one step per thread and as many blocks as that takes, instead of a
                         // resident grid striding over the arrays
    };
    auto dram_probe = [&](const char* metric, const char* label, std::vector<Variant> vs) {
      progress(label);
      ProbeResult best = make_result(metric, label, prof);
      for (auto& v : vs) {
        CUfunction f = gpu.function(mod, v.kernel);
        // Every thread runs the same number of steps: n a multiple of one grid-wide step.
        const long per_block = long(kBlock) * v.unroll;
        const unsigned grid = v.flat ? unsigned(n4 / per_block) : grid_for(f);
        const long unit = long(grid) * per_block;
        const long n = n4 / unit * unit;
        Args a;
        if (v.streams == 1)
          a.add(a_buf).add(n).add(never).add(sink);
        else if (v.streams == 2)
          a.add(a_buf).add(b_buf).add(n);
        else
          a.add(c_buf).add(a_buf).add(b_buf).add(0.5f).add(n);
        ProbeResult r = make_result(metric, label, prof);
        r.kernel = std::string(v.kernel) + (v.flat ? " (flat)" : "");
        r = run.measure(r, f, grid, a, 16.0 * double(n) * v.streams, 1.0 / double(vs.size()));
        if (opt.variants) suite.variants.push_back(r);
        if (r.best > best.best) best = r;
      }
      add(best);
    };
    // The variants seen fastest on an H200 (flat grids, streaming stores) and a few neighbours.
    dram_probe(
        metric::dram_read, "DRAM read stream",
        {{"dram_read_u4", 4, 1}, {"dram_read_u4", 4, 1, true}, {"dram_read_u4_pf", 4, 1, true}});
    dram_probe(metric::dram_copy, "DRAM copy y = x",
               {{"dram_copy_u8_cs", 8, 2},
                {"dram_copy_u4_cs", 4, 2, true},
                {"dram_copy_u4_cs_pf", 4, 2, true},
                {"dram_copy_u8_cs_pf", 8, 2, true}});
    dram_probe(metric::dram_triad, "DRAM triad a = b + s*c",
               {{"dram_triad_u4_cs", 4, 3},
                {"dram_triad_u4_cs", 4, 3, true},
                {"dram_triad_u4_cs_pf", 4, 3, true},
                {"dram_triad_u8_cs_pf", 8, 3, true}});

    // -- L2: a window of half the L2, warmed by one pass, reread `reps` times per launch. The
    // kernel takes (window, items, reps, never, sink) and reads `item` bytes per item; a grid-wide
    // step is `per_step` items, so that every block does the same work.
    auto l2_probe = [&](const char* metric, const char* label, const char* kernel, long item,
                        auto per_step) {
      progress(label);
      ProbeResult r = make_result(metric, label, prof);
      r.kernel = kernel;
      CUfunction f = gpu.function(mod, r.kernel);
      const unsigned grid = grid_for(f);
      const long step = per_step(grid);
      const long n = std::max(step, long(l2 / 2) / item / step * step);
      auto make = [&](int reps) {
        Args a;
        a.add(a_buf).add(n).add(reps).add(never).add(sink);
        return a;
      };
      const int reps = run.calibrate(f, grid, kBlock, make, 2);
      Args a = make(reps);
      add(run.measure(r, f, grid, a, double(item) * double(n) * reps));
    };
    l2_probe(metric::l2, "L2 read (ld.global.cg, half the L2)", "l2_read", 16,
             [](unsigned grid) { return long(grid) * kBlock * 4; });
    // The same window read by the copy engine (sm_90: cp.async.bulk into shared memory, 8 KB a
    // copy, WB_BULK_CHUNK): what TMA-fed kernels get from the L2.
    if (cc >= 90)
      l2_probe(metric::l2_bulk, "L2 read by the copy engine (cp.async.bulk, half the L2)",
               "l2_bulk_read", 8192, [](unsigned grid) { return long(grid); });

    // The performance model's probes use the first DRAM array (16 L2s) as scratch.
    if (opt.machine)
      machine_probes(gpu, mod, suite, prof, a_buf, arr, b_buf, arr, never, sink, progress);

    // -- wgmma (sm_90a): two warpgroups per block, one block per SM; 4 x m64n256k16 per group.
    auto wgmma_probe = [&](const char* metric, const char* label, const char* kernel,
                           std::future<Compiled>& fut) {
      ProbeResult r = make_result(metric, label, prof);
      r.kernel = kernel;
      if (!fut.valid()) {
        r.skipped = hopper ? "turned off" : "wgmma needs compute capability 9.0 (sm_90a)";
        add(r);
        return;
      }
      progress(label);
      Compiled c = fut.get();
      wgmma_compile_ms = std::max(wgmma_compile_ms, c.ms);
      if (!c.program.ok) {
        r.skipped = "does not compile: " + first_error(c.program);
        add(r);
        return;
      }
      CUmodule m = gpu.load(c.program);
      CUfunction f = gpu.function(m, kernel);
      const unsigned grid = sms; // 154 registers a thread: one block of 256 per SM
      const int iters = run.calibrate(f, grid, kBlock, plain, 8);
      Args a = plain(iters);
      // Per thread per iteration: 4 wgmma of 2*64*256*16 FLOPs per warpgroup, / 128 threads.
      add(run.measure(r, f, grid, a, 4.0 * 524288.0 / 128 * double(grid) * kBlock * iters));
    };
    wgmma_probe(metric::wgmma_f16, "FP16 tensor wgmma m64n256k16 (f32 accumulate)", "wgmma_f16",
                f_f16);
    wgmma_probe(metric::wgmma_bf16, "BF16 tensor wgmma m64n256k16 (f32 accumulate)", "wgmma_bf16",
                f_bf16);
  } catch (const std::exception& e) {
    suite.error = e.what();
  }
  wait_all();
  suite.compile_ms = std::max(main_prog.ms, wgmma_compile_ms);
  suite.total_ms = ms_since(t_start);
  return suite;
}

std::vector<MeasuredCeiling> suite_ceilings(const ProbeSuite& s) {
  std::vector<MeasuredCeiling> out;
  auto put = [&](const std::string& metric, const ProbeResult& r) {
    out.push_back({metric, r.best, r.median, metric_unit(metric), s.device.name, ""});
  };
  for (auto& r : s.results)
    if (r.ok()) put(r.metric, r);
  // The family bests a speed of light uses.
  auto best_of = [&](const char* family, std::initializer_list<const char*> members) {
    const ProbeResult* b = nullptr;
    for (auto* m : members)
      if (auto* r = s.find(m); r && r->ok() && (!b || r->best > b->best)) b = r;
    if (b) put(family, *b);
  };
  best_of(metric::dram, {metric::dram_read, metric::dram_copy, metric::dram_triad});
  best_of(metric::fp16_tc, {metric::mma_f16, metric::wgmma_f16});
  best_of(metric::bf16_tc, {metric::mma_bf16, metric::wgmma_bf16});
  best_of(metric::int8_tc, {metric::mma_s8});
  return out;
}

} // namespace wb
