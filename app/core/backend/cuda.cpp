// The CUDA backend: the driver API through cuda_driver.hpp (dlopen + cuGetProcAddress), one
// primary context for the backend's life, a module cache, a device-memory pool so that the
// reference and learner runs of one size reuse allocations, large transfers pipelined through
// pinned slots, a wall-clock watchdog instead of blocking synchronisation, and timing with the L2
// flushed before every sample (graph replay for short kernels).
//
// Device printf: the driver formats it on the host and writes it to the process's stdout when the
// context synchronises. run() points fd 1 at a temporary file meanwhile (StdoutCapture), so that it
// comes back in RunResult::printf_output, bounded as on the simulator (core/printf_guard.hpp).
#include "cuda_driver.hpp"

#include "core/backend.hpp"
#include "core/printf_guard.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace wb {
namespace cuda {

std::string Driver::error(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName) cuGetErrorName(r, &name);
  if (cuGetErrorString) cuGetErrorString(r, &text);
  return fmt::format("{} ({})", name ? name : fmt::format("CUresult {}", int(r)),
                     text ? text : "no description");
}

namespace {

using GetProcV2 = CUresult (*)(const char*, void**, int, cuuint64_t,
                               CUdriverProcAddressQueryResult*);
using GetProcV1 = CUresult (*)(const char*, void**, int, cuuint64_t);

bool load_driver(Driver& d, std::string& why) {
  // Never dlclose: the driver's own teardown at exit must find itself still mapped.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = "no NVIDIA driver found (libcuda.so.1 could not be loaded)";
    return false;
  }
  auto v2 = reinterpret_cast<GetProcV2>(dlsym(lib, "cuGetProcAddress_v2"));
  auto v1 = reinterpret_cast<GetProcV1>(dlsym(lib, "cuGetProcAddress"));
  auto get_version = reinterpret_cast<CUresult (*)(int*)>(dlsym(lib, "cuDriverGetVersion"));
  if ((!v2 && !v1) || !get_version) {
    why = "the NVIDIA driver is too old (libcuda.so.1 has no cuGetProcAddress)";
    return false;
  }
  int version = 0;
  if (get_version(&version) != CUDA_SUCCESS || version < 12000) {
    why = fmt::format("the NVIDIA driver supports CUDA {}.{}; Warpbook needs 12.0 or newer",
                      version / 1000, version % 1000 / 10);
    return false;
  }
  d.version = version;
  // Ask for the ABI of the headers we compiled against, or the driver's own if it is older (the
  // entry points used here kept their signatures across 12.x and 13.0).
  const int want = std::min(version, CUDA_VERSION);
  auto get = [&](const char* name, void** fn) {
    *fn = nullptr;
    CUresult r;
    if (v2) {
      CUdriverProcAddressQueryResult status{};
      r = v2(name, fn, want, CU_GET_PROC_ADDRESS_DEFAULT, &status);
      if (status != CU_GET_PROC_ADDRESS_SUCCESS) *fn = nullptr;
    } else {
      r = v1(name, fn, want, CU_GET_PROC_ADDRESS_DEFAULT);
    }
    if (r != CUDA_SUCCESS) *fn = nullptr;
    return *fn != nullptr;
  };
  std::string missing;
#define WB_CUDA_GET_REQUIRED(name)                                                                 \
  if (!get(#name, reinterpret_cast<void**>(&d.name)))                                              \
    missing += (missing.empty() ? "" : ", ") + std::string(#name);
#define WB_CUDA_GET_OPTIONAL(name) get(#name, reinterpret_cast<void**>(&d.name));
  WB_CUDA_REQUIRED(WB_CUDA_GET_REQUIRED)
  WB_CUDA_OPTIONAL(WB_CUDA_GET_OPTIONAL)
#undef WB_CUDA_GET_REQUIRED
#undef WB_CUDA_GET_OPTIONAL
  if (!missing.empty()) {
    why = fmt::format("the NVIDIA driver (CUDA {}.{}) lacks entry points Warpbook needs: {}",
                      version / 1000, version % 1000 / 10, missing);
    return false;
  }
  return true;
}

} // namespace

const Driver* driver(std::string& why) {
  static Driver d;
  static std::string load_why;
  static const bool ok = load_driver(d, load_why);
  if (!ok) why = load_why;
  return ok ? &d : nullptr;
}

} // namespace cuda

namespace {

using Clock = std::chrono::steady_clock;
using cuda::Driver;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string bytes_text(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} bytes", int64_t(b));
}

std::string dim_text(const Dim3& d) {
  return fmt::format("({}, {}, {})", d.x, d.y, d.z);
}

bool trace_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("WARPBOOK_CUDA_TRACE");
    return e && *e && std::strcmp(e, "0") != 0;
  }();
  return on;
}

// Percentile of sorted samples, linear between neighbours.
double percentile(const std::vector<double>& s, double q) {
  if (s.empty()) return 0;
  double pos = q * double(s.size() - 1);
  size_t lo = size_t(pos);
  size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (s[hi] - s[lo]) * (pos - double(lo));
}

// memcpy split over a few persistent threads: one thread moves ~11 GB/s on the H200 host, eight
// ~33 GB/s, and pageable <-> pinned copies are what limit host <-> device transfers.
class CopyPool {
public:
  explicit CopyPool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
    parts_ = threads;
  }
  ~CopyPool() {
    {
      std::lock_guard lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  void copy(std::byte* dst, const std::byte* src, size_t n) {
    if (workers_.empty() || n < (size_t(1) << 20)) {
      std::memcpy(dst, src, n);
      return;
    }
    {
      std::lock_guard lk(m_);
      dst_ = dst;
      src_ = src;
      n_ = n;
      pending_ = int(workers_.size());
      ++generation_;
    }
    cv_.notify_all();
    part(0);
    std::unique_lock lk(m_);
    done_.wait(lk, [&] { return pending_ == 0; });
  }

private:
  void part(int i) {
    const size_t per = (n_ / size_t(parts_) + 4095) & ~size_t(4095);
    const size_t begin = std::min(n_, per * size_t(i));
    const size_t end = i + 1 == parts_ ? n_ : std::min(n_, begin + per);
    if (end > begin) std::memcpy(dst_ + begin, src_ + begin, end - begin);
  }
  void work(int i) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lk(m_);
        cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      part(i);
      std::lock_guard lk(m_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_, done_;
  std::byte* dst_ = nullptr;
  const std::byte* src_ = nullptr;
  size_t n_ = 0;
  int parts_ = 1, pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

// The backend's own kernels, compiled once per context.
// warpbook_content_hash: content_hash (backend.hpp) on the device: the same weighted sum of 8-byte
// words (the last one zero-padded), added into *out; the host mixes it with the byte count as it
// does its own.
// warpbook_l2_flush: reads the scratch buffer (16-byte ld.global.cg, four in flight a thread), so
// that the L2 ends up holding its clean lines and nothing of the timed kernel's. A flush that
// writes the buffer instead (a memset) leaves the L2 full of dirty lines, and the timed kernel's
// own reads then pay for writing them back: on the H200, 13-21 MB of write-back and 9-19 us more
// for a 264-805 MiB read stream (bench/perfmodel/experiments/l2-flush). The xor reaches *sink only
// if it equals `never`, which the zeroed buffer cannot give, so the loads cannot be dropped.
constexpr const char* kInternalSource = R"(
extern "C" __global__ void warpbook_content_hash(const unsigned char* data, unsigned long long bytes,
                                                 unsigned long long* out) {
  const unsigned long long words = bytes / 8;
  const unsigned long long* w = reinterpret_cast<const unsigned long long*>(data);
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long sum = 0;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride)
    sum += w[i] * (2 * i + 1);
  if (blockIdx.x == 0 && threadIdx.x == 0 && (bytes & 7)) {
    unsigned long long t = 0;
    for (unsigned k = 0; k < (bytes & 7); ++k) t |= (unsigned long long)data[words * 8 + k] << (8 * k);
    sum += t * (2 * words + 1);
  }
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, sum);
}
extern "C" __global__ void __launch_bounds__(256) warpbook_l2_flush(const uint4* p, unsigned long long n,
                                                                   unsigned never, unsigned* sink) {
  const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + 3 * step < n; i += 4 * step) {
    const uint4 a = __ldcg(p + i), b = __ldcg(p + i + step), c = __ldcg(p + i + 2 * step),
                d = __ldcg(p + i + 3 * step);
    acc ^= a.x ^ a.w ^ b.y ^ b.z ^ c.x ^ c.w ^ d.y ^ d.z;
  }
  for (; i < n; i += step) acc ^= __ldcg(p + i).x;
  if (acc == never) *sink = acc;
}
)";

// The printf FIFO: the driver keeps at most this many bytes of records between synchronisations
// (older ones are overwritten) and formats them on the host, so it bounds the host's time per
// flush; with the guard's bounded fields a record formats to a few KiB at most.
constexpr size_t kPrintfFifoBytes = 256 * 1024;

// While it lives, fd 1 (where the driver writes device printf) goes to an anonymous file; take()
// puts fd 1 back and hands over what was written, bounded. Nothing else in a run writes to fd 1
// (the CLI's --json and the runner keep their protocol on a copy of it).
class StdoutCapture {
public:
  StdoutCapture() {
    std::fflush(stdout);
    file_ = ::memfd_create("warpbook-printf", MFD_CLOEXEC);
    if (file_ < 0) return;
    saved_ = ::dup(1);
    if (saved_ < 0 || ::dup2(file_, 1) < 0) {
      restore();
      return;
    }
  }
  ~StdoutCapture() { restore(); }
  StdoutCapture(const StdoutCapture&) = delete;
  StdoutCapture& operator=(const StdoutCapture&) = delete;

  // What device printf wrote, kept to the bound and escaped to valid UTF-8, the rest counted.
  void take(PrintfSink& sink) {
    std::fflush(stdout);
    if (file_ < 0 || saved_ < 0) return restore();
    const off_t size = ::lseek(file_, 0, SEEK_END);
    restore_fd1();
    if (size > 0) {
      std::string text(std::min<size_t>(size_t(size), kPrintfOutputBound), '\0');
      const ssize_t got = ::pread(file_, text.data(), text.size(), 0);
      text.resize(got > 0 ? size_t(got) : 0);
      sink.add(text);
      sink.drop(uint64_t(size) - text.size());
    }
    restore();
  }

private:
  void restore_fd1() {
    if (saved_ >= 0) {
      std::fflush(stdout);
      ::dup2(saved_, 1);
      ::close(saved_);
      saved_ = -1;
    }
  }
  void restore() {
    restore_fd1();
    if (file_ >= 0) ::close(file_);
    file_ = -1;
  }
  int file_ = -1, saved_ = -1;
};

class CudaBackend final : public Backend {
public:
  CudaBackend(const Driver& d, CUdevice dev, CUcontext ctx) : d_(d), dev_(dev), ctx_(ctx) {}

  ~CudaBackend() override {
    // A kernel that never ended still runs: touching the context could block forever, so leak
    // everything and let the process exit take it.
    if (timed_out_) return;
    d_.cuCtxSetCurrent(ctx_);
    if (sticky_) {
      // The context is poisoned, and with it CUDA in this whole process (a reset does not help:
      // the driver answers every later call with the same error), so free nothing.
      d_.cuDevicePrimaryCtxRelease(dev_);
      return;
    }
    for (auto& b : pool_) d_.cuMemFree(b.ptr);
    for (auto& b : kept_)
      if (b.ptr) d_.cuMemFree(b.ptr);
    if (hash_sums_) d_.cuMemFree(hash_sums_);
    if (flush_ptr_) d_.cuMemFree(flush_ptr_);
    for (auto& [key, m] : modules_) d_.cuModuleUnload(m.module);
    for (CUevent e : events_) d_.cuEventDestroy(e);
    for (CUevent e : slot_events_) d_.cuEventDestroy(e);
    if (pinned_) d_.cuMemFreeHost(pinned_);
    if (stream_) d_.cuStreamDestroy(stream_);
    d_.cuDevicePrimaryCtxRelease(dev_);
  }

  // Returns an empty string when ready, else why not.
  std::string init();

  const DeviceInfo& info() const override { return info_; }

  CompileOptions compile_options() const override {
    CompileOptions o;
    // Compute capability 9.0 builds for sm_90a: its arch-specific features (wgmma, setmaxnreg)
    // are a superset of sm_90's on the device they target.
    o.arch = info_.cc_major == 9 && info_.cc_minor == 0
                 ? std::string("sm_90a")
                 : fmt::format("sm_{}{}", info_.cc_major, info_.cc_minor);
    o.ptxas_report = false; // the driver reports registers and shared memory: kernel_resources()
    // A GPU runs nothing before the cubin is made, so it gains nothing from ptxas apart; NVRTC's
    // own assembler makes the cubin, as it did for every time a solution's header quotes.
    o.ptxas_apart = false;
    return o;
  }

  RunResult run(const RunPlan& plan) override;
  Timing time(const RunPlan& plan, const TimingOptions& opt) override;
  bool usable() const override { return usable_; }

  // Registers, static shared memory, stack frame and the most threads per block of every entry
  // of `p`, from the driver (spill figures are kept from p.resources when the compile has them).
  std::vector<KernelResources> kernel_resources(const Program& p) override;

private:
  struct Module {
    CUmodule module = nullptr;
    std::map<std::string, CUfunction> functions;
    uint64_t last_use = 0;
  };
  struct Block {
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
  };
  struct PreparedLaunch {
    CUfunction fn = nullptr;
    // Argument bytes; `params` points into these. 128 bytes, 64-aligned, for a CUtensorMap.
    struct alignas(64) ArgBytes {
      std::array<std::byte, kTensorMapBytes> b{};
    };
    std::vector<ArgBytes> values;
    std::vector<void*> params;
  };
  struct Prepared {
    std::vector<Block> blocks; // one per plan buffer: the whole image (guard + data + guard)
    std::vector<PreparedLaunch> launches;
  };

  void bind() const { d_.cuCtxSetCurrent(ctx_); }
  Fault encode_tensor_map(const TensorMapSpec& m, CUdeviceptr base, std::byte* out, int launch);
  Fault fault_from(CUresult r, int launch, const std::string& kernel, const char* during);
  Fault load_module(const Program& p, Module*& out);
  Fault get_function(Module& m, const std::string& name, int launch, CUfunction& fn);
  Fault check_launch(const Launch& l, CUfunction fn, int index);
  Fault prepare(const RunPlan& plan, Prepared& prep, bool upload);
  Fault enqueue(const RunPlan& plan, const Prepared& prep, int index);
  Fault wait(Clock::time_point deadline, int launch, const std::string& kernel, const char* during);
  Fault alloc(size_t bytes, CUdeviceptr& ptr);
  bool ensure_staging();
  Fault upload(CUdeviceptr dst, const std::byte* src, size_t n);
  Fault download(std::byte* dst, CUdeviceptr src, size_t n);
  void release(Prepared& prep);
  void release_kept();
  Fault hash_buffers(const RunPlan& plan, const Prepared& prep, std::vector<uint64_t>& hashes);
  Fault ensure_events(size_t n);
  Fault timing_samples(const RunPlan& plan, const Prepared& prep, const TimingOptions& opt,
                       bool graph, double est_ms, std::vector<double>& samples);

  const Driver& d_;
  CUdevice dev_;
  CUcontext ctx_;
  CUstream stream_ = nullptr;
  DeviceInfo info_;
  int max_threads_ = 1024;
  int max_block_[3] = {1024, 1024, 64};
  int max_grid_[3] = {2147483647, 65535, 65535};
  int shared_default_ = 48 * 1024;
  bool usable_ = true;
  bool sticky_ = false;
  bool timed_out_ = false;
  std::map<std::pair<const Program*, size_t>, Module> modules_;
  uint64_t use_counter_ = 0;
  std::vector<Block> pool_; // device allocations kept from earlier runs, reused by exact size
  // Buffers a run left on the device (RunPlan::keep), by plan buffer index, until the next run or
  // timing takes them (Transfer::In::kept) or returns them to the pool.
  std::vector<Block> kept_;
  // The kernels of kInternalSource.
  Program internal_program_;
  // content_hash on the device (Transfer::hash): the checker's inputs stay here, so hashing them
  // here saves downloading hundreds of MiB. Without it, the data comes down and is hashed there.
  CUdeviceptr hash_sums_ = 0;
  size_t hash_slots_ = 0;
  // The L2 flush before each timed sample: a zeroed scratch buffer of twice the L2, read by
  // warpbook_l2_flush (flush_fn_), or rewritten by a memset where that kernel is missing.
  CUdeviceptr flush_ptr_ = 0;
  size_t flush_bytes_ = 0;
  CUfunction flush_fn_ = nullptr;
  CUresult flush_l2(uint8_t k) {
    if (!flush_fn_) return d_.cuMemsetD8Async(flush_ptr_, k, flush_bytes_, stream_);
    CUdeviceptr p = flush_ptr_;
    unsigned long long n = flush_bytes_ / 16;
    unsigned never = 1;
    void* params[] = {&p, &n, &never, &p};
    return d_.cuLaunchKernel(flush_fn_, unsigned(info_.sm_count) * 8, 1, 1, 256, 1, 1, 0, stream_,
                             params, nullptr);
  }
  std::vector<CUevent> events_;
  // Large transfers go through pinned slots, pipelined: the host copies into one slot while the
  // copy engine moves another (pageable copies ran at 9 GB/s up and 17 GB/s down on the H200).
  static constexpr size_t kSlotBytes = size_t(16) << 20;
  static constexpr size_t kSlots = 4;
  static constexpr size_t kStageMin = size_t(4) << 20;
  std::byte* pinned_ = nullptr;
  bool staging_failed_ = false;
  std::vector<CUevent> slot_events_;
  bool slot_busy_[kSlots] = {};
  size_t next_slot_ = 0;
  std::unique_ptr<CopyPool> copier_;
};

std::string CudaBackend::init() {
  CUresult r = d_.cuCtxSetCurrent(ctx_);
  if (r != CUDA_SUCCESS) return "could not make the CUDA context current: " + d_.error(r);
  if (d_.cuCtxSetLimit) {
    // Before any launch (the driver refuses both once a kernel that uses them has run): a small
    // printf FIFO bounds what a printing kernel costs the host, and the device heap is pinned to
    // the size the simulator gives malloc (the driver's default, 8 MiB).
    d_.cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, kPrintfFifoBytes);
    d_.cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, kDeviceHeapBytes);
  }
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    d_.cuDeviceGetAttribute(&v, a, dev_);
    return v;
  };
  char name[256] = {};
  d_.cuDeviceGetName(name, sizeof name, dev_);
  CUuuid uuid{};
  d_.cuDeviceGetUuid(&uuid, dev_);
  const auto* u = reinterpret_cast<const unsigned char*>(uuid.bytes);
  size_t total = 0;
  d_.cuDeviceTotalMem(&total, dev_);

  info_.backend = "cuda";
  info_.name = name;
  info_.uuid = fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
                           "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                           u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                           u[12], u[13], u[14], u[15]);
  info_.driver = fmt::format("{}.{}", d_.version / 1000, d_.version % 1000 / 10);
  info_.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info_.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info_.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info_.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info_.memory_bytes = int64_t(total);
  info_.clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info_.memory_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info_.bus_width_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  info_.max_shared_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  max_threads_ = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  max_block_[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  max_block_[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  max_block_[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  max_grid_[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  max_grid_[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  max_grid_[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  shared_default_ = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  if (info_.max_shared_per_block_optin < shared_default_)
    info_.max_shared_per_block_optin = shared_default_;

  r = d_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) return "could not create a CUDA stream: " + d_.error(r);
  // Pinning the staging slots takes ~20 ms: pay it with the context, not in the first check.
  ensure_staging();
  CompileOptions o = compile_options();
  internal_program_ = compile_source(kInternalSource, "warpbook-internal.cu", o);
  if (!internal_program_.ok && trace_enabled())
    std::fprintf(stderr,
                 "[cuda] the backend's kernels did not compile; hashing on the host and flushing "
                 "the L2 with a memset:\n%s\n",
                 internal_program_.log.c_str());
  return {};
}

Fault CudaBackend::fault_from(CUresult r, int launch, const std::string& kernel,
                              const char* during) {
  Fault f;
  f.launch = launch;
  const std::string where = launch >= 0 ? fmt::format("launch {} ({})", launch, kernel)
                                        : fmt::format("during {}", during);
  const std::string err = d_.error(r);
  auto sticky = [&](FaultKind k, const std::string& what) {
    f.kind = k;
    f.sticky = true;
    f.message = fmt::format("{}: {} [{}]; the GPU context is lost, so this runner must restart",
                            where, what, err);
    usable_ = false;
    sticky_ = true;
  };
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    sticky(FaultKind::illegal_address,
           "a thread read or wrote memory outside every buffer (an index past the end, or a "
           "pointer that points nowhere)");
    break;
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    // A stray generic address can land in the shared- or local-memory window instead of on an
    // unmapped page: the same learner mistake as an illegal address, reported as one.
    sticky(FaultKind::illegal_address,
           "a thread read or wrote through a pointer that points into the wrong kind of memory "
           "(an index far past the end of a buffer)");
    break;
  case CUDA_ERROR_MISALIGNED_ADDRESS:
    sticky(FaultKind::misaligned, "a thread accessed an address not aligned to the access size "
                                  "(a float4 load needs a 16-byte aligned address)");
    break;
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_INVALID_PC:
    sticky(FaultKind::trap, "the kernel stopped on a trap (__trap(), or an illegal instruction)");
    break;
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
    sticky(FaultKind::trap, "the kernel overflowed its call stack (deep recursion?)");
    break;
  case CUDA_ERROR_ASSERT:
    sticky(FaultKind::assertion, "a device-side assert() failed");
    break;
  case CUDA_ERROR_LAUNCH_TIMEOUT:
    sticky(FaultKind::timeout, "the kernel ran past the display watchdog's limit");
    break;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    f.kind = FaultKind::out_of_resources;
    f.message = fmt::format("{}: the block needs more registers or resources than a "
                            "multiprocessor has; use fewer threads per block or fewer registers "
                            "[{}]",
                            where, err);
    break;
  case CUDA_ERROR_INVALID_VALUE:
    f.kind = FaultKind::launch_config;
    f.message = fmt::format("{}: the driver rejected the launch configuration [{}]", where, err);
    break;
  case CUDA_ERROR_OUT_OF_MEMORY:
    f.kind = FaultKind::memory_limit;
    f.message = fmt::format("{}: the GPU is out of memory [{}]", where, err);
    break;
  default:
    f.kind = FaultKind::internal;
    f.message = fmt::format("{}: unexpected CUDA error during {} [{}]", where, during, err);
    // An unexpected error while a kernel ran may have poisoned the context: assume it did.
    if (std::strcmp(during, "a kernel") == 0) {
      f.sticky = true;
      usable_ = false;
      sticky_ = true;
    }
    break;
  }
  return f;
}

Fault CudaBackend::load_module(const Program& p, Module*& out) {
  const size_t key_hash = p.cubin.empty()
                              ? std::hash<std::string>{}(p.ptx)
                              : std::hash<std::string_view>{}({p.cubin.data(), p.cubin.size()});
  auto key = std::make_pair(&p, key_hash);
  auto it = modules_.find(key);
  if (it != modules_.end()) {
    it->second.last_use = ++use_counter_;
    out = &it->second;
    return {};
  }
  if (p.cubin.empty() && p.ptx.empty())
    return {FaultKind::internal, "the program has neither PTX nor a CUBIN to load"};
  // A handful of modules are plenty (the learner's and the reference); drop the least used.
  if (modules_.size() >= 16) {
    auto oldest = std::min_element(modules_.begin(), modules_.end(), [](auto& a, auto& b) {
      return a.second.last_use < b.second.last_use;
    });
    d_.cuModuleUnload(oldest->second.module);
    modules_.erase(oldest);
  }
  std::vector<char> log(16384, 0);
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log.data(), reinterpret_cast<void*>(uintptr_t(log.size() - 1))};
  const void* image = p.cubin.empty() ? static_cast<const void*>(p.ptx.c_str())
                                      : static_cast<const void*>(p.cubin.data());
  CUmodule m = nullptr;
  CUresult r = d_.cuModuleLoadDataEx(&m, image, 2, opts, vals);
  if (r != CUDA_SUCCESS) {
    Fault f;
    std::string text(log.data());
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_NO_BINARY_FOR_GPU) {
      f.kind = FaultKind::no_device;
      f.message =
          fmt::format("the driver (CUDA {}) cannot load this {} for {}: update the NVIDIA "
                      "driver [{}]",
                      info_.driver, p.cubin.empty() ? "PTX" : "CUBIN", info_.name, d_.error(r));
    } else {
      f.kind = FaultKind::internal;
      f.message = fmt::format("the driver could not load the compiled {} [{}]{}{}",
                              p.cubin.empty() ? "PTX" : "CUBIN", d_.error(r),
                              text.empty() ? "" : ": ", text);
    }
    return f;
  }
  Module& mod = modules_[key];
  mod.module = m;
  mod.last_use = ++use_counter_;
  out = &mod;
  return {};
}

Fault CudaBackend::get_function(Module& m, const std::string& name, int launch, CUfunction& fn) {
  auto it = m.functions.find(name);
  if (it != m.functions.end()) {
    fn = it->second;
    return {};
  }
  CUresult r = d_.cuModuleGetFunction(&fn, m.module, name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) {
    Fault f{FaultKind::launch_config,
            fmt::format("launch {}: the program has no kernel named '{}' (is it extern \"C\" "
                        "__global__?)",
                        launch, name)};
    f.launch = launch;
    return f;
  }
  if (r != CUDA_SUCCESS) return fault_from(r, launch, name, "function lookup");
  m.functions[name] = fn;
  return {};
}

Fault CudaBackend::check_launch(const Launch& l, CUfunction fn, int index) {
  auto bad = [&](FaultKind k, std::string msg) {
    Fault f{k, fmt::format("launch {} ({}): {}", index, l.kernel, msg)};
    f.launch = index;
    return f;
  };
  auto fattr = [&](CUfunction_attribute a) {
    int v = 0;
    d_.cuFuncGetAttribute(&v, a, fn);
    return v;
  };
  const uint32_t g[3] = {l.grid.x, l.grid.y, l.grid.z};
  const uint32_t b[3] = {l.block.x, l.block.y, l.block.z};
  const char* axis = "xyz";
  for (int i = 0; i < 3; ++i) {
    if (g[i] == 0 || b[i] == 0)
      return bad(FaultKind::launch_config,
                 fmt::format("grid {} and block {} have a zero dimension, so nothing would run "
                             "(is a size zero, or the grid expression wrong?)",
                             dim_text(l.grid), dim_text(l.block)));
    if (g[i] > uint32_t(max_grid_[i]))
      return bad(FaultKind::launch_config,
                 fmt::format("grid {} has {} blocks along {}; the GPU allows at most {}",
                             dim_text(l.grid), g[i], axis[i], max_grid_[i]));
    if (b[i] > uint32_t(max_block_[i]))
      return bad(FaultKind::launch_config,
                 fmt::format("block {} has {} threads along {}; the GPU allows at most {}",
                             dim_text(l.block), b[i], axis[i], max_block_[i]));
  }
  const uint64_t threads = l.block.count();
  if (threads > uint64_t(max_threads_))
    return bad(FaultKind::launch_config,
               fmt::format("a block of {} threads is more than the {} a block may have", threads,
                           max_threads_));
  const int fn_max = fattr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  if (fn_max > 0 && threads > uint64_t(fn_max))
    return bad(FaultKind::launch_config,
               register_refusal(threads, fn_max, fattr(CU_FUNC_ATTRIBUTE_NUM_REGS)));
  if (auto why = local_memory_refusal(fattr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)); !why.empty())
    return bad(FaultKind::launch_config, why);
  const int64_t static_shared = fattr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  const int64_t total_shared = static_shared + l.shared_bytes;
  if (total_shared > info_.max_shared_per_block_optin)
    return bad(FaultKind::launch_config,
               fmt::format("the block needs {} of shared memory ({} static + {} dynamic); a block "
                           "may have at most {} on this GPU",
                           bytes_text(double(total_shared)), bytes_text(double(static_shared)),
                           bytes_text(l.shared_bytes),
                           bytes_text(info_.max_shared_per_block_optin)));
  // Over 48 KiB a kernel must opt in to its dynamic shared memory.
  if (l.shared_bytes > 0 &&
      int64_t(l.shared_bytes) > fattr(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)) {
    CUresult r = d_.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       int(l.shared_bytes));
    if (r != CUDA_SUCCESS)
      return bad(FaultKind::launch_config,
                 fmt::format("could not allow {} of dynamic shared memory [{}]",
                             bytes_text(l.shared_bytes), d_.error(r)));
  }
  // The kernel's parameters against what the puzzle passes: a mismatch would read garbage.
  if (d_.cuFuncGetParamInfo) {
    size_t count = 0, offset = 0, size = 0;
    std::vector<size_t> sizes;
    while (count < 512 && d_.cuFuncGetParamInfo(fn, count, &offset, &size) == CUDA_SUCCESS) {
      sizes.push_back(size);
      ++count;
    }
    std::string names;
    for (auto& a : l.args) names += (names.empty() ? "" : ", ") + a.name;
    if (count != l.args.size())
      return bad(FaultKind::launch_config,
                 fmt::format("the kernel takes {} parameters, but the puzzle passes {} ({})", count,
                             l.args.size(), names));
    for (size_t i = 0; i < count; ++i) {
      const KernelArg& a = l.args[i];
      const size_t want = a.kind == KernelArg::Kind::buffer       ? sizeof(CUdeviceptr)
                          : a.kind == KernelArg::Kind::tensor_map ? sizeof(CUtensorMap)
                                                                  : a.size;
      if (sizes[i] != want)
        return bad(FaultKind::launch_config,
                   a.kind == KernelArg::Kind::buffer
                       ? fmt::format("parameter {} ({}) should be a pointer, but the kernel "
                                     "declares it as {} bytes",
                                     i + 1, a.name, sizes[i])
                   : a.kind == KernelArg::Kind::tensor_map
                       ? fmt::format("parameter {} ({}) is a tensor map (128 bytes), but the "
                                     "kernel declares it as {} bytes: declare it `const "
                                     "__grid_constant__ CUtensorMap {}`",
                                     i + 1, a.name, sizes[i], a.name)
                       : fmt::format("parameter {} ({}) is {} bytes in the kernel, but the puzzle "
                                     "passes a {}-byte value: check its type",
                                     i + 1, a.name, sizes[i], a.size));
    }
  }
  return {};
}

// The driver's own encoding of a [[tensor_map]]: tiled, no interleave, element strides of 1,
// out-of-bounds elements filled with zeros (never NaN).
Fault CudaBackend::encode_tensor_map(const TensorMapSpec& m, CUdeviceptr base, std::byte* out,
                                     int launch) {
  CUtensorMapDataType dt = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  switch (m.type) {
  case DType::f64:
    dt = CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    break;
  case DType::f32:
    dt = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    break;
  case DType::f16:
    dt = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    break;
  case DType::bf16:
    dt = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    break;
  case DType::i64:
    dt = CU_TENSOR_MAP_DATA_TYPE_INT64;
    break;
  case DType::i32:
    dt = CU_TENSOR_MAP_DATA_TYPE_INT32;
    break;
  case DType::u32:
    dt = CU_TENSOR_MAP_DATA_TYPE_UINT32;
    break;
  case DType::i16:
    dt = CU_TENSOR_MAP_DATA_TYPE_UINT16; // TMA moves bytes: the 16-bit unsigned type will do
    break;
  default: // fp8, i8, u8
    dt = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    break;
  }
  const auto swz = m.swizzle == TmSwizzle::b128  ? CU_TENSOR_MAP_SWIZZLE_128B
                   : m.swizzle == TmSwizzle::b64 ? CU_TENSOR_MAP_SWIZZLE_64B
                   : m.swizzle == TmSwizzle::b32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                 : CU_TENSOR_MAP_SWIZZLE_NONE;
  const auto l2 = m.l2_promotion == 256   ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                  : m.l2_promotion == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                  : m.l2_promotion == 64  ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                                          : CU_TENSOR_MAP_L2_PROMOTION_NONE;
  cuuint64_t dims[kTensorMapMaxRank], strides[kTensorMapMaxRank];
  cuuint32_t box[kTensorMapMaxRank], estr[kTensorMapMaxRank];
  for (int i = 0; i < m.rank; ++i) {
    dims[i] = m.dims[size_t(i)];
    box[i] = m.box[size_t(i)];
    estr[i] = 1;
    if (i + 1 < m.rank) strides[i] = m.strides[size_t(i)];
  }
  CUtensorMap map;
  CUresult r = d_.cuTensorMapEncodeTiled(
      &map, dt, cuuint32_t(m.rank), reinterpret_cast<void*>(base), dims, strides, box, estr,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swz, l2, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    Fault f;
    f.kind = FaultKind::launch_config;
    f.launch = launch;
    f.message =
        fmt::format("the driver refused to encode tensor map '{}' [{}]", m.name, d_.error(r));
    return f;
  }
  static_assert(sizeof(CUtensorMap) == kTensorMapBytes);
  std::memcpy(out, &map, sizeof map);
  return {};
}

Fault CudaBackend::alloc(size_t bytes, CUdeviceptr& ptr) {
  for (size_t i = 0; i < pool_.size(); ++i) {
    if (pool_[i].bytes == bytes) {
      ptr = pool_[i].ptr;
      pool_.erase(pool_.begin() + long(i));
      return {};
    }
  }
  const size_t want = std::max<size_t>(bytes, 1);
  size_t free_b = 0, total_b = 0;
  d_.cuMemGetInfo(&free_b, &total_b);
  CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
  if (want + (64u << 20) > free_b) {
    // Make room from the pool first.
    for (auto& b : pool_) d_.cuMemFree(b.ptr);
    pool_.clear();
    d_.cuMemGetInfo(&free_b, &total_b);
  }
  if (want + (64u << 20) <= free_b) r = d_.cuMemAlloc(&ptr, want);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return {FaultKind::memory_limit,
            fmt::format("a buffer of {} does not fit: the GPU has {} free of {}", bytes_text(want),
                        bytes_text(double(free_b)), bytes_text(double(total_b)))};
  if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "memory allocation");
  return {};
}

bool CudaBackend::ensure_staging() {
  if (pinned_) return true;
  if (staging_failed_ || !d_.cuMemAllocHost || !d_.cuMemFreeHost) return false;
  const auto t0 = Clock::now();
  void* p = nullptr;
  if (d_.cuMemAllocHost(&p, kSlotBytes * kSlots) != CUDA_SUCCESS) {
    staging_failed_ = true;
    return false;
  }
  for (size_t i = 0; i < kSlots; ++i) {
    CUevent e = nullptr;
    if (d_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
      d_.cuMemFreeHost(p);
      staging_failed_ = true;
      return false;
    }
    slot_events_.push_back(e);
  }
  pinned_ = static_cast<std::byte*>(p);
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  copier_ = std::make_unique<CopyPool>(int(std::clamp(hw / 2, 1u, 8u)));
  if (trace_enabled())
    std::fprintf(stderr, "[cuda] staging: %s pinned and %u copy threads in %.2f ms\n",
                 bytes_text(double(kSlotBytes * kSlots)).c_str(), std::clamp(hw / 2, 1u, 8u),
                 ms_since(t0));
  return true;
}

Fault CudaBackend::upload(CUdeviceptr dst, const std::byte* src, size_t n) {
  if (n < kStageMin || !ensure_staging()) {
    CUresult r = d_.cuMemcpyHtoDAsync(dst, src, n, stream_);
    if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "the upload of a buffer");
    return {};
  }
  for (size_t off = 0; off < n; off += kSlotBytes) {
    const size_t len = std::min(kSlotBytes, n - off);
    const size_t s = next_slot_++ % kSlots;
    std::byte* slot = pinned_ + s * kSlotBytes;
    CUresult r = CUDA_SUCCESS;
    if (slot_busy_[s] && (r = d_.cuEventSynchronize(slot_events_[s])) != CUDA_SUCCESS)
      return fault_from(r, -1, "", "the upload of a buffer");
    slot_busy_[s] = false;
    copier_->copy(slot, src + off, len);
    if ((r = d_.cuMemcpyHtoDAsync(dst + off, slot, len, stream_)) != CUDA_SUCCESS ||
        (r = d_.cuEventRecord(slot_events_[s], stream_)) != CUDA_SUCCESS)
      return fault_from(r, -1, "", "the upload of a buffer");
    slot_busy_[s] = true;
  }
  return {};
}

Fault CudaBackend::download(std::byte* dst, CUdeviceptr src, size_t n) {
  if (n < kStageMin || !ensure_staging()) {
    // To pageable memory this returns once the copy is done.
    CUresult r = d_.cuMemcpyDtoHAsync(dst, src, n, stream_);
    if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "the download of a buffer");
    return {};
  }
  const size_t chunks = (n + kSlotBytes - 1) / kSlotBytes;
  auto issue = [&](size_t c) -> CUresult {
    const size_t s = c % kSlots;
    CUresult r = CUDA_SUCCESS;
    if (slot_busy_[s] && (r = d_.cuEventSynchronize(slot_events_[s])) != CUDA_SUCCESS) return r;
    const size_t off = c * kSlotBytes;
    if ((r = d_.cuMemcpyDtoHAsync(pinned_ + s * kSlotBytes, src + off,
                                  std::min(kSlotBytes, n - off), stream_)) != CUDA_SUCCESS)
      return r;
    r = d_.cuEventRecord(slot_events_[s], stream_);
    slot_busy_[s] = r == CUDA_SUCCESS;
    return r;
  };
  size_t issued = 0;
  CUresult r = CUDA_SUCCESS;
  for (; issued < std::min(chunks, kSlots) && r == CUDA_SUCCESS; ++issued) r = issue(issued);
  for (size_t c = 0; c < chunks && r == CUDA_SUCCESS; ++c) {
    const size_t s = c % kSlots;
    if ((r = d_.cuEventSynchronize(slot_events_[s])) != CUDA_SUCCESS) break;
    slot_busy_[s] = false;
    const size_t off = c * kSlotBytes;
    copier_->copy(dst + off, pinned_ + s * kSlotBytes, std::min(kSlotBytes, n - off));
    if (issued < chunks) r = issue(issued++);
  }
  if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "the download of a buffer");
  return {};
}

Fault CudaBackend::prepare(const RunPlan& plan, Prepared& prep, bool upload) {
  if (!plan.program || !plan.buffers)
    return {FaultKind::internal, "the run plan has no program or no buffers"};
  Module* mod = nullptr;
  if (Fault f = load_module(*plan.program, mod)) return f;
  auto& bufs = *plan.buffers;

  // Check the configuration and arguments of every launch before touching memory.
  prep.launches.resize(plan.launches.size());
  for (size_t i = 0; i < plan.launches.size(); ++i) {
    const Launch& l = plan.launches[i];
    PreparedLaunch& pl = prep.launches[i];
    if (Fault f = get_function(*mod, l.kernel, int(i), pl.fn)) return f;
    if (Fault f = check_launch(l, pl.fn, int(i))) return f;
    for (auto& a : l.args) {
      if (a.kind != KernelArg::Kind::scalar && (a.buffer < 0 || size_t(a.buffer) >= bufs.size()))
        return {FaultKind::internal,
                fmt::format("launch {}: argument {} names buffer {}, which the plan lacks", i,
                            a.name, a.buffer)};
      if (a.kind == KernelArg::Kind::tensor_map) {
        if (std::string why = tensor_map_problem(a.map); !why.empty())
          return {FaultKind::launch_config, why, 0, int(i)};
        if (!d_.cuTensorMapEncodeTiled)
          return {FaultKind::no_device,
                  fmt::format("the kernel takes tensor map {}, but this NVIDIA driver has no "
                              "cuTensorMapEncodeTiled",
                              a.name)};
      }
    }
  }

  // Buffers an earlier run left here and this plan takes as they are; the rest go to the pool.
  auto transfer = [&](size_t i) {
    return i < plan.transfers.size() ? plan.transfers[i] : Transfer{};
  };
  prep.blocks.assign(bufs.size(), Block{});
  for (size_t i = 0; i < bufs.size(); ++i)
    if (transfer(i).in == Transfer::In::kept && i < kept_.size() && kept_[i].ptr &&
        kept_[i].bytes == bufs[i].image.size())
      std::swap(prep.blocks[i], kept_[i]);
  release_kept();

  // Everything the plan still needs, against what the GPU has, before allocating any of it.
  size_t need = 0;
  for (size_t i = 0; i < bufs.size(); ++i)
    if (!prep.blocks[i].ptr) need += bufs[i].image.size();
  size_t free_b = 0, total_b = 0;
  d_.cuMemGetInfo(&free_b, &total_b);
  size_t pooled = 0;
  for (auto& b : pool_) pooled += b.bytes;
  if (need > free_b + pooled)
    return {FaultKind::memory_limit,
            fmt::format("the buffers need {} but the GPU has {} free (of {}); use smaller sizes",
                        bytes_text(double(need)), bytes_text(double(free_b + pooled)),
                        bytes_text(double(total_b)))};

  for (size_t i = 0; i < bufs.size(); ++i) {
    Block& blk = prep.blocks[i];
    if (blk.ptr) continue; // kept from the last run
    const HostBuffer& b = bufs[i];
    const Transfer t = transfer(i);
    blk.bytes = b.image.size();
    if (Fault f = alloc(blk.bytes, blk.ptr)) return f;
    if (!upload || b.image.empty()) continue;
    if (t.in == Transfer::In::fill) {
      CUresult r = d_.cuMemsetD8Async(blk.ptr, uint8_t(t.guard_fill), blk.bytes, stream_);
      if (r == CUDA_SUCCESS && b.data_bytes)
        r = d_.cuMemsetD8Async(blk.ptr + b.guard_bytes, uint8_t(t.data_fill), b.data_bytes,
                               stream_);
      if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "filling a buffer");
    } else if (Fault f = this->upload(blk.ptr, b.image.data(), b.image.size())) {
      return f;
    }
  }

  // Argument bytes: device pointers point past the leading guard band (256-byte aligned).
  for (size_t i = 0; i < plan.launches.size(); ++i) {
    const Launch& l = plan.launches[i];
    PreparedLaunch& pl = prep.launches[i];
    pl.values.assign(l.args.size(), {});
    pl.params.resize(l.args.size());
    for (size_t k = 0; k < l.args.size(); ++k) {
      const KernelArg& a = l.args[k];
      if (a.kind == KernelArg::Kind::buffer) {
        CUdeviceptr p = prep.blocks[size_t(a.buffer)].ptr + bufs[size_t(a.buffer)].guard_bytes;
        std::memcpy(pl.values[k].b.data(), &p, sizeof p);
      } else if (a.kind == KernelArg::Kind::tensor_map) {
        CUdeviceptr p = prep.blocks[size_t(a.buffer)].ptr + bufs[size_t(a.buffer)].guard_bytes;
        if (Fault f = encode_tensor_map(a.map, p, pl.values[k].b.data(), int(i))) return f;
      } else {
        std::memcpy(pl.values[k].b.data(), a.value.data(), a.value.size());
      }
      pl.params[k] = pl.values[k].b.data();
    }
  }
  return {};
}

Fault CudaBackend::enqueue(const RunPlan& plan, const Prepared& prep, int index) {
  const Launch& l = plan.launches[size_t(index)];
  const PreparedLaunch& pl = prep.launches[size_t(index)];
  if (l.cooperative) {
    // Every block must be resident at once: the driver refuses a larger grid with a bare
    // CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, so say how large it may be first.
    int per_sm = 0;
    d_.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pl.fn, int(l.block.count()),
                                                   l.shared_bytes);
    const uint64_t most = uint64_t(per_sm) * uint64_t(info_.sm_count);
    if (l.grid.count() > most) {
      Fault f;
      f.kind = FaultKind::launch_config;
      f.launch = index;
      f.message = fmt::format(
          "{}: a cooperative launch needs all {} blocks resident at once; this GPU holds at most "
          "{} "
          "of them ({} per SM on {} SMs, with this kernel's registers and shared memory): make the "
          "grid smaller, and let each block loop over more of the work",
          l.kernel, l.grid.count(), most, per_sm, info_.sm_count);
      return f;
    }
    CUresult r = d_.cuLaunchCooperativeKernel(pl.fn, l.grid.x, l.grid.y, l.grid.z, l.block.x,
                                              l.block.y, l.block.z, l.shared_bytes, stream_,
                                              const_cast<void**>(pl.params.data()));
    if (r != CUDA_SUCCESS) return fault_from(r, index, l.kernel, "the cooperative launch");
    return {};
  }
  CUresult r =
      d_.cuLaunchKernel(pl.fn, l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z,
                        l.shared_bytes, stream_, const_cast<void**>(pl.params.data()), nullptr);
  if (r != CUDA_SUCCESS) return fault_from(r, index, l.kernel, "the launch");
  return {};
}

Fault CudaBackend::wait(Clock::time_point deadline, int launch, const std::string& kernel,
                        const char* during) {
  // Poll instead of blocking: a kernel cannot be killed, but we can stop waiting for it.
  const auto start = Clock::now();
  for (;;) {
    CUresult r = d_.cuStreamQuery(stream_);
    if (r == CUDA_SUCCESS) return {};
    if (r != CUDA_ERROR_NOT_READY) return fault_from(r, launch, kernel, during);
    const auto now = Clock::now();
    if (now > deadline) {
      usable_ = false;
      sticky_ = true;
      timed_out_ = true;
      Fault f;
      f.kind = FaultKind::timeout;
      f.sticky = true;
      f.launch = launch;
      f.message = fmt::format("{} did not finish within {:.1f} s (an endless loop, or a barrier "
                              "some threads never reach?); a running kernel cannot be stopped, so "
                              "this runner must exit",
                              launch >= 0 ? fmt::format("launch {} ({})", launch, kernel)
                                          : std::string("the kernels"),
                              std::chrono::duration<double>(now - start).count());
      return f;
    }
    const auto waited = now - start;
    if (waited < std::chrono::microseconds(200))
      std::this_thread::yield();
    else if (waited < std::chrono::milliseconds(20))
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    else
      std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

void CudaBackend::release_kept() {
  for (auto& b : kept_)
    if (b.ptr) pool_.push_back(b);
  kept_.clear();
}

Fault CudaBackend::hash_buffers(const RunPlan& plan, const Prepared& prep,
                                std::vector<uint64_t>& hashes) {
  const auto& bufs = *plan.buffers;
  std::vector<size_t> which;
  for (size_t i = 0; i < plan.transfers.size() && i < bufs.size(); ++i)
    if (plan.transfers[i].hash) which.push_back(i);
  if (which.empty()) return {};
  hashes.assign(bufs.size(), 0);
  Module* mod = nullptr;
  CUfunction fn = nullptr;
  if (internal_program_.ok && !load_module(internal_program_, mod) &&
      get_function(*mod, "warpbook_content_hash", -1, fn))
    fn = nullptr;
  if (fn && hash_slots_ < which.size()) { // one 8-byte sum per hashed buffer
    if (hash_sums_) d_.cuMemFree(hash_sums_);
    hash_slots_ = std::max<size_t>(which.size(), 16);
    if (d_.cuMemAlloc(&hash_sums_, 8 * hash_slots_) != CUDA_SUCCESS)
      hash_sums_ = 0, hash_slots_ = 0, fn = nullptr;
  }
  if (!fn) {
    // No kernel: bring the data down and hash it here.
    for (size_t i : which) {
      Bytes data(bufs[i].data_bytes);
      if (Fault f = download(data.data(), prep.blocks[i].ptr + bufs[i].guard_bytes, data.size()))
        return f;
      if (Fault f = wait(Clock::now() + std::chrono::seconds(60), -1, "", "a download")) return f;
      hashes[i] = content_hash(data.data(), data.size());
    }
    return {};
  }
  CUresult r = d_.cuMemsetD8Async(hash_sums_, 0, 8 * which.size(), stream_);
  for (size_t k = 0; k < which.size() && r == CUDA_SUCCESS; ++k) {
    const HostBuffer& b = bufs[which[k]];
    CUdeviceptr data = prep.blocks[which[k]].ptr + b.guard_bytes, out = hash_sums_ + 8 * k;
    unsigned long long bytes = b.data_bytes;
    void* params[] = {&data, &bytes, &out};
    const uint64_t words = std::max<uint64_t>(1, (b.data_bytes + 7) / 8);
    const unsigned grid =
        unsigned(std::clamp<uint64_t>((words + 255) / 256, 1, uint64_t(info_.sm_count) * 8));
    r = d_.cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, stream_, params, nullptr);
  }
  std::vector<uint64_t> sums(which.size(), 0);
  if (r == CUDA_SUCCESS)
    r = d_.cuMemcpyDtoHAsync(sums.data(), hash_sums_, 8 * which.size(), stream_);
  if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "hashing the inputs");
  if (Fault f = wait(Clock::now() + std::chrono::seconds(60), -1, "", "hashing the inputs"))
    return f;
  for (size_t k = 0; k < which.size(); ++k)
    hashes[which[k]] = content_hash_finish(sums[k], bufs[which[k]].data_bytes);
  return {};
}

void CudaBackend::release(Prepared& prep) {
  for (auto& b : prep.blocks)
    if (b.ptr) pool_.push_back(b);
  prep.blocks.clear();
  // Keep at most min(8 GiB, a quarter of the GPU) for the next run; free the largest first.
  const size_t cap = std::min<size_t>(size_t(8) << 30, size_t(info_.memory_bytes / 4));
  size_t held = 0;
  for (auto& b : pool_) held += b.bytes;
  std::sort(pool_.begin(), pool_.end(), [](auto& a, auto& b) { return a.bytes > b.bytes; });
  while (held > cap && !pool_.empty()) {
    held -= pool_.front().bytes;
    d_.cuMemFree(pool_.front().ptr);
    pool_.erase(pool_.begin());
  }
}

RunResult CudaBackend::run(const RunPlan& plan) {
  RunResult res;
  const auto t0 = Clock::now();
  if (!usable_) {
    res.fault = {FaultKind::no_device,
                 "the GPU context was lost after an earlier fault; this runner must restart"};
    res.fault.sticky = true;
    return res;
  }
  bind();
  StdoutCapture printed;
  Prepared prep;
  res.fault = prepare(plan, prep, true);
  const double t_prep = ms_since(t0);
  double t_kernels = 0;
  if (!res.fault) {
    const auto k0 = Clock::now();
    const auto deadline =
        k0 + std::chrono::duration_cast<Clock::duration>(
                 std::chrono::duration<double>(plan.timeout_s > 0 ? plan.timeout_s : 1e9));
    const size_t n = plan.launches.size();
    for (size_t i = 0; i < n && !res.fault; ++i) {
      res.fault = enqueue(plan, prep, int(i));
      // Waiting after each launch names the launch that faulted; a single launch waits once.
      if (!res.fault && (n > 1 || i + 1 == n))
        res.fault = wait(deadline, int(i), plan.launches[i].kernel, "a kernel");
    }
    if (n == 0) res.fault = wait(deadline, -1, "", "the upload");
    t_kernels = ms_since(k0);
  }
  const auto d0 = Clock::now();
  if (!sticky_ && !res.fault) res.fault = hash_buffers(plan, prep, res.hashes);
  if (!sticky_) {
    // Download what the plan asks for (after a non-sticky fault too: the checker may still look).
    for (size_t i = 0; i < prep.blocks.size(); ++i) {
      HostBuffer& b = (*plan.buffers)[i];
      if (b.image.empty() || !prep.blocks[i].ptr) continue;
      const bool whole =
          i >= plan.transfers.size() || plan.transfers[i].out == Transfer::Out::image;
      const size_t tail = b.guard_bytes + b.data_bytes;
      Fault f = whole ? download(b.image.data(), prep.blocks[i].ptr, b.image.size())
                      : download(b.image.data(), prep.blocks[i].ptr, b.guard_bytes);
      if (!whole && !f && b.image.size() > tail)
        f = download(b.image.data() + tail, prep.blocks[i].ptr + tail, b.image.size() - tail);
      if (f) {
        if (!res.fault) res.fault = f;
        break;
      }
    }
    if (!res.fault) {
      auto deadline = Clock::now() + std::chrono::seconds(60);
      res.fault = wait(deadline, -1, "", "the download of the buffers");
    }
    if (plan.keep && !sticky_) {
      release_kept();
      kept_ = std::move(prep.blocks);
    } else {
      release(prep);
    }
    // A blocking synchronisation makes the driver write out the run's printf records now; the
    // stream is idle already, so it returns at once.
    if (!sticky_ && ensure_events(1).kind == FaultKind::none &&
        d_.cuEventRecord(events_[0], stream_) == CUDA_SUCCESS)
      d_.cuEventSynchronize(events_[0]);
  }
  PrintfSink sink;
  printed.take(sink);
  res.printf_output = sink.finish();
  res.printf_truncated = sink.dropped() > 0;
  res.run_ms = ms_since(t0);
  if (trace_enabled()) {
    size_t bytes = 0;
    for (auto& b : *plan.buffers) bytes += b.image.size();
    std::fprintf(stderr,
                 "[cuda] run: %zu launches, %s each way; load+alloc+upload %.2f ms, kernels "
                 "%.2f ms, download %.2f ms, total %.2f ms%s\n",
                 plan.launches.size(), bytes_text(double(bytes)).c_str(), t_prep, t_kernels,
                 ms_since(d0), res.run_ms, res.fault ? " (faulted)" : "");
  }
  return res;
}

Fault CudaBackend::ensure_events(size_t n) {
  while (events_.size() < n) {
    CUevent e = nullptr;
    CUresult r = d_.cuEventCreate(&e, CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "event creation");
    events_.push_back(e);
  }
  return {};
}

// One sample = the L2 flush (untimed), then every launch of the plan between two events.
Fault CudaBackend::timing_samples(const RunPlan& plan, const Prepared& prep,
                                  const TimingOptions& opt, bool graph, double est_ms,
                                  std::vector<double>& samples) {
  const bool flush = opt.flush_l2 && flush_ptr_;
  const double per_ms = std::max(est_ms, 0.001);
  const size_t want = size_t(std::clamp(std::ceil(opt.min_total_ms / per_ms),
                                        double(std::max(opt.min_reps, 1)), 200000.0));
  // Pairs of events per batch (graph: per replay), so that one batch runs a few milliseconds.
  const size_t batch = graph ? size_t(std::clamp(std::ceil(2.0 / per_ms), 4.0, 128.0))
                             : size_t(std::clamp(std::ceil(20.0 / per_ms), 1.0, 256.0));
  if (Fault f = ensure_events(2 * batch)) return f;
  auto timeout = [&](size_t reps) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                              std::max(plan.timeout_s, 1.0) + 4e-3 * double(reps) * per_ms));
  };
  auto enqueue_sample = [&](size_t k, bool capture) -> Fault {
    if (flush) {
      CUresult r = flush_l2(uint8_t(k));
      if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "the L2 flush");
    }
    CUresult r = capture
                     ? d_.cuEventRecordWithFlags(events_[2 * k], stream_, CU_EVENT_RECORD_EXTERNAL)
                     : d_.cuEventRecord(events_[2 * k], stream_);
    if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "an event record");
    for (size_t i = 0; i < plan.launches.size(); ++i)
      if (Fault f = enqueue(plan, prep, int(i))) return f;
    r = capture ? d_.cuEventRecordWithFlags(events_[2 * k + 1], stream_, CU_EVENT_RECORD_EXTERNAL)
                : d_.cuEventRecord(events_[2 * k + 1], stream_);
    if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "an event record");
    return {};
  };
  auto read = [&](size_t n) -> Fault {
    for (size_t k = 0; k < n; ++k) {
      float ms = 0;
      CUresult r = d_.cuEventElapsedTime(&ms, events_[2 * k], events_[2 * k + 1]);
      if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "reading an event");
      samples.push_back(double(ms) * 1000.0);
    }
    return {};
  };
  // Enough samples and kernel time; for tiny kernels, whose flushes dominate (~33 us each on the
  // H200), also stop once the sampling has taken 1.5 times min_total_ms of wall clock.
  const auto s0 = Clock::now();
  auto done = [&] {
    double total_us = 0;
    for (double s : samples) total_us += s;
    return samples.size() >= size_t(std::max(opt.min_reps, 1)) &&
           (total_us >= opt.min_total_ms * 1000.0 || ms_since(s0) >= 1.5 * opt.min_total_ms);
  };

  if (graph) {
    CUgraph g = nullptr;
    CUgraphExec exec = nullptr;
    CUresult r = d_.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "graph capture");
    Fault f;
    for (size_t k = 0; k < batch && !f; ++k) f = enqueue_sample(k, true);
    r = d_.cuStreamEndCapture(stream_, &g);
    if (f) {
      if (g) d_.cuGraphDestroy(g);
      return f;
    }
    if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "graph capture");
    r = d_.cuGraphInstantiateWithFlags(&exec, g, 0);
    d_.cuGraphDestroy(g);
    if (r != CUDA_SUCCESS) return fault_from(r, -1, "", "graph instantiation");
    while (!done() && samples.size() < want + batch && !cancel_requested(plan.cancel)) {
      r = d_.cuGraphLaunch(exec, stream_);
      if (r != CUDA_SUCCESS) {
        f = fault_from(r, -1, "", "a graph launch");
        break;
      }
      if ((f = wait(timeout(batch), -1, "", "a kernel"))) break;
      if ((f = read(batch))) break;
    }
    if (!timed_out_) d_.cuGraphExecDestroy(exec);
    return f;
  }
  // Between batches a cancel stops the sampling (the caller then drops the figures).
  while (!done() && samples.size() < 2 * want + 1000 && !cancel_requested(plan.cancel)) {
    const size_t n = std::min(batch, want > samples.size() ? want - samples.size() : batch);
    for (size_t k = 0; k < n; ++k)
      if (Fault f = enqueue_sample(k, false)) return f;
    if (Fault f = wait(timeout(n), -1, "", "a kernel")) return f;
    if (Fault f = read(n)) return f;
  }
  return {};
}

Timing CudaBackend::time(const RunPlan& plan, const TimingOptions& opt) {
  Timing t;
  const auto t0 = Clock::now();
  if (!usable_) {
    t.fault = {FaultKind::no_device,
               "the GPU context was lost after an earlier fault; this runner must restart"};
    return t;
  }
  bind();
  Prepared prep;
  if ((t.fault = prepare(plan, prep, true))) {
    if (!sticky_) release(prep);
    return t;
  }

  // A scratch buffer of twice the L2, read before each sample, evicts the kernel's data.
  if (opt.flush_l2 && !flush_ptr_) {
    const size_t want = std::max<size_t>(size_t(2 * info_.l2_bytes), size_t(64) << 20);
    if (!alloc(want, flush_ptr_) &&
        d_.cuMemsetD8Async(flush_ptr_, 0, want, stream_) == CUDA_SUCCESS) {
      flush_bytes_ = want;
    } else {
      if (flush_ptr_) d_.cuMemFree(flush_ptr_);
      flush_ptr_ = 0; // timing goes on without a flush rather than failing
    }
  }
  // Looked up on every call: the module cache may have unloaded the module since the last one.
  flush_fn_ = nullptr;
  if (flush_ptr_ && internal_program_.ok) {
    Module* mod = nullptr;
    if (load_module(internal_program_, mod) ||
        get_function(*mod, "warpbook_l2_flush", -1, flush_fn_))
      flush_fn_ = nullptr;
  }
  if ((t.fault = ensure_events(3))) {
    release(prep);
    return t;
  }
  auto one_timeout = [&] {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(std::max(plan.timeout_s, 1.0)));
  };

  // Warm-up: the requested count, and at least min_warmup_ms so that the clocks ramp up. Each run
  // is timed (flush included and not) to pick the method and size the batches.
  double est_ms = 0, est_with_flush_ms = 0;
  int warm = 0;
  const auto w0 = Clock::now();
  do {
    CUresult r = d_.cuEventRecord(events_[2], stream_);
    if (r == CUDA_SUCCESS && opt.flush_l2 && flush_ptr_) r = flush_l2(uint8_t(warm));
    if (r == CUDA_SUCCESS) r = d_.cuEventRecord(events_[0], stream_);
    if (r != CUDA_SUCCESS) {
      t.fault = fault_from(r, -1, "", "the warm-up");
      break;
    }
    for (size_t i = 0; i < plan.launches.size() && !t.fault; ++i)
      t.fault = enqueue(plan, prep, int(i));
    if (t.fault) break;
    if ((r = d_.cuEventRecord(events_[1], stream_)) != CUDA_SUCCESS) {
      t.fault = fault_from(r, -1, "", "the warm-up");
      break;
    }
    if ((t.fault = wait(one_timeout(), -1, "", "a kernel"))) break;
    float a = 0, b = 0;
    d_.cuEventElapsedTime(&a, events_[0], events_[1]);
    d_.cuEventElapsedTime(&b, events_[2], events_[1]);
    est_ms = a;
    est_with_flush_ms = b;
    ++warm;
  } while (warm < std::max(opt.warmup, 1) || (ms_since(w0) < opt.min_warmup_ms && warm < 10000));
  const double t_warm = ms_since(w0);

  if (!t.fault) {
    // Under ~100 us a run is comparable to the launch gaps: replay a captured graph instead.
    bool graph = est_ms < 0.1 && d_.has_graphs();
    std::vector<double> samples;
    t.fault = timing_samples(plan, prep, opt, graph, std::max(est_ms, 1e-3), samples);
    if (t.fault && graph && !t.fault.sticky) {
      if (trace_enabled())
        std::fprintf(stderr, "[cuda] time: graph replay failed, using events: %s\n",
                     t.fault.message.c_str());
      samples.clear();
      graph = false;
      t.fault = timing_samples(plan, prep, opt, false, std::max(est_ms, 1e-3), samples);
    }
    if (!t.fault && !samples.empty()) {
      t.ok = true;
      t.method = graph ? "graph" : "events";
      t.samples_us = samples;
      std::sort(samples.begin(), samples.end());
      t.min_us = samples.front();
      t.max_us = samples.back();
      t.median_us = percentile(samples, 0.5);
      t.p10_us = percentile(samples, 0.1);
      t.p90_us = percentile(samples, 0.9);
    }
  }
  if (!sticky_) {
    Fault sync = wait(one_timeout(), -1, "", "a kernel");
    if (!t.fault) t.fault = sync;
    if (!sticky_) release(prep);
  }
  if (trace_enabled())
    std::fprintf(stderr,
                 "[cuda] time: %d warm-ups in %.2f ms (last %.1f us, %.1f us with the flush), "
                 "%s, %zu samples, median %.2f us, total %.2f ms\n",
                 warm, t_warm, est_ms * 1e3, est_with_flush_ms * 1e3, t.method.c_str(),
                 t.samples_us.size(), t.median_us, ms_since(t0));
  return t;
}

std::vector<KernelResources> CudaBackend::kernel_resources(const Program& p) {
  std::vector<KernelResources> out;
  if (!usable_) return p.resources;
  bind();
  Module* mod = nullptr;
  if (load_module(p, mod)) return p.resources;
  for (const std::string& name : p.entries) {
    KernelResources k;
    k.name = name;
    for (auto& r : p.resources)
      if (r.name == name) k = r;
    CUfunction fn = nullptr;
    if (get_function(*mod, name, -1, fn)) {
      out.push_back(k);
      continue;
    }
    auto fattr = [&](CUfunction_attribute a) {
      int v = -1;
      if (d_.cuFuncGetAttribute(&v, a, fn) != CUDA_SUCCESS) v = -1;
      return v;
    };
    k.registers = fattr(CU_FUNC_ATTRIBUTE_NUM_REGS);
    k.shared_bytes = fattr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    k.local_bytes = fattr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    k.max_threads = fattr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    out.push_back(k);
  }
  return out;
}

} // namespace

std::unique_ptr<Backend> make_cuda_backend(std::string& why) {
  const cuda::Driver* d = cuda::driver(why);
  if (!d) return nullptr;
  CUresult r = d->cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    why = "the driver found no CUDA device";
    return nullptr;
  }
  if (r != CUDA_SUCCESS) {
    why = "the NVIDIA driver could not start: " + d->error(r);
    return nullptr;
  }
  int count = 0;
  r = d->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    why = "the driver found no CUDA device";
    return nullptr;
  }
  CUdevice dev = 0;
  if ((r = d->cuDeviceGet(&dev, 0)) != CUDA_SUCCESS) {
    why = "could not open CUDA device 0: " + d->error(r);
    return nullptr;
  }
  CUcontext ctx = nullptr;
  if ((r = d->cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS) {
    why = "could not create a CUDA context: " + d->error(r);
    if (r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_MISALIGNED_ADDRESS ||
        r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_ILLEGAL_INSTRUCTION ||
        r == CUDA_ERROR_ASSERT || r == CUDA_ERROR_HARDWARE_STACK_ERROR ||
        r == CUDA_ERROR_INVALID_PC || r == CUDA_ERROR_INVALID_ADDRESS_SPACE)
      why += "; an earlier fault in this process left CUDA unusable: start a new process";
    return nullptr;
  }
  auto b = std::make_unique<CudaBackend>(*d, dev, ctx);
  if (std::string e = b->init(); !e.empty()) {
    why = e;
    return nullptr;
  }
  return b;
}

} // namespace wb
