// The interface every backend implements: the CUDA driver (backend/cuda.cpp) and the PTX
// simulator (backend/sim/). The checker prepares host images of every buffer, a backend makes
// device copies, runs the launches, and hands the images back; all judging happens in check.cpp.
#pragma once
#include "compile.hpp"
#include "dtype.hpp"
#include "tensor_map.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <sys/mman.h>
#include <type_traits>
#include <utility>
#include <vector>

namespace wb {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
};

// An allocator that leaves new bytes uninitialised: perf-size images are hundreds of MiB, and
// the checker writes every byte itself, on every core, so zero-filling first would only cost.
template <class T> struct UninitAllocator : std::allocator<T> {
  template <class U> struct rebind { using other = UninitAllocator<U>; };
  UninitAllocator() = default;
  template <class U> UninitAllocator(const UninitAllocator<U>&) noexcept {}
  // Large images come 2 MiB-aligned and marked for huge pages: first-touch page faults on
  // hundreds of MiB otherwise cost more than generating the data.
  static constexpr size_t kHuge = size_t(2) << 20;
  T* allocate(size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes < 4 * kHuge) return std::allocator<T>::allocate(n);
    size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < 4 * kHuge)
      std::allocator<T>::deallocate(p, n);
    else
      std::free(p);
  }
  template <class U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
  template <class U, class... A> void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using Bytes = std::vector<std::byte, UninitAllocator<std::byte>>;

// One buffer as the device sees it: `image` is guard + data + guard bytes. The kernel gets a
// pointer to the data, which is 256-byte aligned on every backend; the guard bands hold a known
// pattern that the checker inspects afterwards.
struct HostBuffer {
  std::string name;
  DType type = DType::f32;
  size_t data_bytes = 0;
  size_t guard_bytes = 0;
  Bytes image; // guard_bytes + data_bytes + guard_bytes
  std::byte* data() { return image.data() + guard_bytes; }
  const std::byte* data() const { return image.data() + guard_bytes; }
};

struct KernelArg {
  // tensor_map: a CUtensorMap passed by value (128 bytes), which each backend encodes from `map`
  // and the buffer it describes (map.buffer).
  enum class Kind { buffer, scalar, tensor_map } kind = Kind::scalar;
  int buffer = -1;                  // index into the plan's buffers
  std::array<std::byte, 8> value{}; // scalar bytes, little-endian
  uint32_t size = 0;                // scalar size in bytes
  std::string name;
  TensorMapSpec map; // Kind::tensor_map only

  static KernelArg of_buffer(int index, std::string name = {}) {
    KernelArg a;
    a.kind = Kind::buffer;
    a.buffer = index;
    a.name = std::move(name);
    return a;
  }
  static KernelArg of_tensor_map(TensorMapSpec m) {
    KernelArg a;
    a.kind = Kind::tensor_map;
    a.buffer = m.buffer;
    a.size = uint32_t(kTensorMapBytes);
    a.name = m.name;
    a.map = std::move(m);
    return a;
  }
  template <class T> static KernelArg of_scalar(T v, std::string name = {}) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
    KernelArg a;
    std::memcpy(a.value.data(), &v, sizeof v);
    a.size = sizeof v;
    a.name = std::move(name);
    return a;
  }
};

struct Launch {
  std::string kernel;
  Dim3 grid, block;
  uint32_t shared_bytes = 0; // dynamic
  std::vector<KernelArg> args;
  // Every block resident at once, so the kernel may synchronise the whole grid
  // (cooperative_groups::this_grid().sync()): cuLaunchCooperativeKernel on a GPU.
  bool cooperative = false;
};

// The hash the checker compares inputs by, before and after a run: the sum over the data's 8-byte
// little-endian words (the last one zero-padded) of word * (2 * index + 1), mod 2^64, mixed with
// the byte count. Sums of parts add up, so it is computed in chunks, on every core or on the GPU
// (the CUDA backend's own kernel), and a change to any one word always moves it.
uint64_t content_hash_part(const std::byte* data, size_t bytes, uint64_t first_word);
uint64_t content_hash_finish(uint64_t sum, size_t bytes);
uint64_t content_hash(const std::byte* data, size_t bytes); // on every core

// How one buffer travels for a run. The defaults move the whole image both ways.
struct Transfer {
  enum class In {
    image, // upload the host image
    fill,  // set the guard bands to `guard_fill` and the data to `data_fill` on the device; the
           // host image's bytes are not read (an output starting poisoned)
    kept,  // the copy an earlier run left on the device (RunPlan::keep) will do as well as the
           // image; a backend that kept none uploads the image
  } in = In::image;
  enum class Out {
    image,  // the whole image comes back
    guards, // only the guard bands must come back: the data bytes on the host are left alone or
            // overwritten with the device's, whichever is cheaper for the backend
  } out = Out::image;
  bool hash = false; // RunResult::hashes gets content_hash of the data as the run left it
  std::byte guard_fill{}, data_fill{};
  // Simulator, sampled runs (Simulator::run_sampled): the image is never built on the host; the
  // simulator asks for its bytes [offset, offset + n) (guard bands included) the first time a
  // kernel touches them. Must not allocate or lock (it runs in a signal handler).
  std::function<void(uint64_t offset, std::byte* dst, size_t n)> lazy;
};

struct RunPlan {
  const Program* program = nullptr;
  std::vector<HostBuffer>* buffers = nullptr; // in: initial images; out: images after the run
  std::vector<Transfer> transfers;            // per buffer; empty: the defaults for every one
  // Leave every buffer on the device afterwards, for the next run or timing to take as `kept`
  // (the checker's reference run, then the learner's, then the timing share one upload).
  bool keep = false;
  std::vector<Launch> launches;
  double timeout_s = 10; // wall clock for the whole run
  // Set by whoever asked for the run (the runner, on a cancel): the simulator stops within a few
  // milliseconds, the GPU backend between timing samples. The result then says `cancelled`.
  const std::atomic<bool>* cancel = nullptr;
  uint64_t instruction_budget = 0; // simulator: warp instructions per launch; 0 = scaled default
  bool shuffle_warps = false;      // simulator: vary warp order to shake out races
  uint64_t seed = 0;
  bool counters = true; // simulator: gather counters (a little slower)
  // The puzzle's own reference: only its outputs are wanted, so the simulator skips what it
  // watches a learner's kernel for (shared-memory races, local and shared variables' bounds, which
  // thread wrote each element). Accesses outside every allocation still fault.
  bool trusted = false;
  // Simulator: this run stands for the [perf] size ([sim_perf]), so the device heap is shared as
  // there, by as many blocks as the GPU holds at once, not by this launch's fewer blocks.
  bool heap_as_at_perf = false;
};

// The device heap malloc and new take from: CUDA's default (cudaLimitMallocHeapSize), which the
// GPU backend pins and the simulator's DeviceHeap enforces.
inline constexpr uint64_t kDeviceHeapBytes = 8ull << 20;

enum class FaultKind {
  none,
  launch_config,    // bad grid/block/shared-memory configuration
  out_of_resources, // too many registers/threads for the launch
  out_of_bounds,    // simulator: access outside every allocation (names thread and buffer)
  illegal_address,  // GPU: CUDA_ERROR_ILLEGAL_ADDRESS (sticky)
  misaligned,       // misaligned address
  trap,             // __trap(), or an illegal instruction
  assertion,        // device-side assert
  timeout,          // wall clock or instruction budget exhausted (an infinite loop?)
  deadlock,         // simulator: a barrier some threads never reach
  race,             // simulator: shared-memory race
  unsupported,      // simulator: an instruction it does not implement (names the PTX line)
  memory_limit,     // a request for more memory than the device or host allows
  no_device,        // the backend cannot run here (no driver, no GPU)
  internal,         // a bug in Warpbook: say so plainly
};
std::string_view fault_name(FaultKind k);

struct Fault {
  FaultKind kind = FaultKind::none;
  std::string message; // one sentence a learner can act on
  int source_line = 0; // learner's line when known
  int launch = -1;     // which launch of the plan
  bool sticky = false; // the device context is unusable afterwards (GPU)
  explicit operator bool() const { return kind != FaultKind::none; }
};

// Counters from the simulator (and anything else a backend counts), by name, per launch total and
// per learner source line. Names: warp_instructions, thread_instructions, active_lane_efficiency,
// divergent_branches, global_load_requests, global_store_requests, global_load_sectors,
// global_load_ideal_sectors, global_store_sectors, global_store_ideal_sectors,
// shared_wavefronts, shared_bank_conflicts, flops_f32, flops_f16, flops_f64, flops_tensor,
// special_ops, bytes_loaded, bytes_stored, atomics, max_global_loads_per_thread,
// max_global_stores_per_thread.
struct Counters {
  std::map<std::string, double> total;
  std::map<int, std::map<std::string, double>> by_line;
  bool empty() const { return total.empty(); }
};

// A thread that wrote an element (simulator only): index into the output's elements -> (block,
// thread).
struct Writer {
  Dim3 block, thread;
};

struct RunResult {
  Fault fault;
  Counters counters;
  std::string printf_output; // bounded
  bool printf_truncated = false;
  std::vector<std::string> warnings; // races found when not fatal, etc.
  // Optional, simulator: the last writer of each element of each output, by buffer index.
  std::map<int, std::vector<Writer>> writers;
  double run_ms = 0;            // wall clock spent in run()
  std::vector<uint64_t> hashes; // per buffer: content_hash where the plan asked for one, else 0
  bool cancelled = false;       // the plan's cancel flag stopped it: the outputs mean nothing
};

// Thrown by work that honours a cancel flag (the check pipeline): it stopped, with no verdict.
struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled") {}
};
inline bool cancel_requested(const std::atomic<bool>* flag) {
  return flag && flag->load(std::memory_order_relaxed);
}

struct TimingOptions {
  int warmup = 3;
  // Stop once both hold: at least min_reps launches and min_total_ms of kernel time.
  int min_reps = 10;
  double min_total_ms = 25;
  // Warm-up time, so the clocks ramp up before the first timed launch. A caller that has just
  // run the same kernel at this size (the checker's perf case) can ask for less.
  double min_warmup_ms = 20;
  bool flush_l2 = true;
};

struct Timing {
  bool ok = false;
  std::string method; // "events" or "graph"
  std::vector<double> samples_us;
  double median_us = 0, min_us = 0, max_us = 0, p10_us = 0, p90_us = 0;
  Fault fault;
};

struct DeviceInfo {
  std::string backend; // "cuda" or "sim"
  std::string name;    // "NVIDIA H200", or "simulator (modelling H200)"
  std::string uuid;
  std::string driver; // "13.0"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int clock_khz = 0, memory_clock_khz = 0, bus_width_bits = 0;
  int max_shared_per_block_optin = 0;
  std::string arch() const; // "sm_90", or "compute_80" when there is no device
};

// Launch limits of the GPUs Warpbook targets (compute capability 7.0 on), which the simulator
// enforces as the driver does, in the same words on both backends.
// Local memory (a thread's stack frame: arrays the compiler could not keep in registers).
constexpr int64_t kMaxLocalBytesPerThread = 512 * 1024;
// The most threads a block can have when each uses `registers`: 64 Ki registers per SM, allocated
// per warp in units of 256.
inline int max_threads_for_registers(int registers) {
  if (registers <= 0) return 1024;
  const int per_warp = (registers * 32 + 255) / 256 * 256;
  return std::min(1024, 65536 / per_warp * 32);
}
std::string local_memory_refusal(int64_t local_bytes); // why a launch is refused, or ""
std::string register_refusal(uint64_t threads, int most, int registers);
// Why the driver refuses a launch of `kernel` with blocks of `threads` by what ptxas said of it
// (registers per block, local memory per thread), or "".
std::string resource_refusal(const std::vector<KernelResources>& resources,
                             const std::string& kernel, uint64_t threads);

class Backend {
public:
  virtual ~Backend() = default;
  virtual const DeviceInfo& info() const = 0;
  // Compile options suited to this backend (arch).
  virtual CompileOptions compile_options() const = 0;
  // Makes each buffer's device copy as its Transfer says (by default, uploads the image), runs the
  // launches in order, and brings back what the transfers ask for (by default, every image).
  virtual RunResult run(const RunPlan& plan) = 0;
  // Times the plan's launches (the images stay on the device between reps; buffers the last run
  // kept are taken as they are where the plan says `kept`); GPU only.
  virtual Timing time(const RunPlan& plan, const TimingOptions& opt) {
    Timing t;
    t.fault = {FaultKind::no_device, "this backend does not time kernels"};
    return t;
  }
  // Registers, shared memory, stack and the most threads per block, from the driver where there
  // is one; otherwise what the compile's ptxas report says.
  virtual std::vector<KernelResources> kernel_resources(const Program& p) { return p.resources; }
  // After a sticky fault the backend must be thrown away: on a GPU the whole process's CUDA state
  // is poisoned, so the runner process must end and a fresh one start.
  virtual bool usable() const { return true; }
};

// Factories. Each returns nullptr and sets `why` when the backend cannot run here.
std::unique_ptr<Backend> make_cuda_backend(std::string& why);
// `workers`: threads a launch's blocks run on (0: one per core).
std::unique_ptr<Backend> make_sim_backend(std::string& why, unsigned workers = 0);
// "cuda", "sim", or "auto" (the GPU when there is one, else the simulator).
std::unique_ptr<Backend> make_backend(const std::string& kind, std::string& why);

} // namespace wb
