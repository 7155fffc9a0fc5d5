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
#include <sstream>
#include <thread>

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

    // -- L2: a window of half the L2, warmed by one pass, reread `reps` times per launch.
    {
      const char* label = "L2 read (ld.global.cg, half the L2)";
      progress(label);
      ProbeResult r = make_result(metric::l2, label, prof);
      r.kernel = "l2_read";
      CUfunction f = gpu.function(mod, r.kernel);
      const unsigned grid = grid_for(f);
      const long unit = long(grid) * kBlock * 4;
      const long n = std::max(unit, long(l2 / 2 / 16) / unit * unit);
      auto make = [&](int reps) {
        Args a;
        a.add(a_buf).add(n).add(reps).add(never).add(sink);
        return a;
      };
      const int reps = run.calibrate(f, grid, kBlock, make, 2);
      Args a = make(reps);
      add(run.measure(r, f, grid, a, 16.0 * double(n) * reps));
    }

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
