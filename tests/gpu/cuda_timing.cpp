// Timing on a real GPU: a large float4 copy (plain events), a small one (graph replay), and where
// the time goes for vector add at n = 2^26 (compile, runs, timing). Prints its figures; asserts
// only sanity, never tight numbers.
#include "gpu_util.hpp"

#include "core/backend/cuda_driver.hpp"

#include <cstdio>
#include <thread>

using namespace gpu;

namespace {

const char* kCopy = R"(
extern "C" __global__ void copy4(const float4* __restrict__ x, float4* __restrict__ y, long n4) {
  long stride = (long)gridDim.x * blockDim.x;
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) y[i] = x[i];
}
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

void print_timing(const char* what, const wb::Timing& t, double bytes, double wall_ms) {
  std::printf("%-28s %-6s %5zu samples  median %9.2f us  p10 %9.2f  p90 %9.2f  min %9.2f  "
              "max %9.2f  -> %7.0f GB/s  (time() took %.1f ms)\n",
              what, t.method.c_str(), t.samples_us.size(), t.median_us, t.p10_us, t.p90_us,
              t.min_us, t.max_us, bytes / (t.median_us * 1e3), wall_ms);
}

struct CopyPlan {
  std::vector<wb::HostBuffer> bufs;
  wb::RunPlan plan;
};

void copy_plan(CopyPlan& c, const wb::Program& p, const wb::DeviceInfo& d, size_t bytes) {
  const long n4 = long(bytes / 16);
  std::vector<float> x(bytes / 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 1000) * 0.5f;
  c.bufs.push_back(buffer("x", x));
  c.bufs.push_back(output("y", bytes));
  c.plan.program = &p;
  c.plan.buffers = &c.bufs;
  // A grid-stride loop over a few waves of blocks.
  const uint32_t grid = uint32_t(std::min<long>((n4 + 255) / 256, long(d.sm_count) * 8));
  c.plan.launches.push_back(
      launch("copy4", {grid}, {256}, {buf(0, "x"), buf(1, "y"), scalar<int64_t>(n4, "n4")}));
}

} // namespace

TEST_CASE("cuda timing: a float4 copy of 2^28 bytes reaches a plausible bandwidth") {
  auto b = backend();
  wb::Program p = compile(*b, kCopy);
  CopyPlan c;
  const size_t bytes = size_t(1) << 28;
  copy_plan(c, p, b->info(), bytes);
  wb::RunResult r = b->run(c.plan);
  REQUIRE_MESSAGE(!r.fault, r.fault.message);
  CHECK(contents<float>(c.bufs[1]) == contents<float>(c.bufs[0]));
  std::printf("copy 2^28 B: run() %.1f ms (upload + kernel + download of %.0f MiB)\n", r.run_ms,
              2.0 * double(bytes + 2 * kGuardBytes) / (1 << 20));

  for (int rep = 0; rep < 2; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    wb::Timing t = b->time(c.plan, wb::TimingOptions{});
    const double wall = ms_since(t0);
    REQUIRE_MESSAGE(t.ok, t.fault.message);
    print_timing("float4 copy 2^28 B", t, 2.0 * double(bytes), wall);
    CHECK(t.method == "events");
    CHECK(t.samples_us.size() >= 10);
    CHECK(t.min_us <= t.p10_us);
    CHECK(t.p10_us <= t.median_us);
    CHECK(t.median_us <= t.p90_us);
    CHECK(t.p90_us <= t.max_us);
    CHECK(2.0 * double(bytes) / (t.median_us * 1e3) > 1000.0); // GB/s
  }
  // Without the L2 flush, for comparison (not asserted).
  wb::TimingOptions nf;
  nf.flush_l2 = false;
  wb::Timing t = b->time(c.plan, nf);
  REQUIRE(t.ok);
  print_timing("float4 copy 2^28 B, no flush", t, 2.0 * double(bytes), 0);
}

TEST_CASE("cuda timing: a small kernel is timed by graph replay") {
  auto b = backend();
  wb::Program p = compile(*b, kCopy);
  for (size_t bytes : {size_t(1) << 16, size_t(1) << 20, size_t(1) << 24}) {
    CopyPlan c;
    copy_plan(c, p, b->info(), bytes);
    const auto t0 = std::chrono::steady_clock::now();
    wb::Timing t = b->time(c.plan, wb::TimingOptions{});
    const double wall = ms_since(t0);
    REQUIRE_MESSAGE(t.ok, t.fault.message);
    char what[64];
    std::snprintf(what, sizeof what, "float4 copy %zu KiB", bytes >> 10);
    print_timing(what, t, 2.0 * double(bytes), wall);
    if (bytes <= (size_t(1) << 20)) CHECK(t.method == "graph");
    CHECK(t.median_us > 0);
    CHECK(t.samples_us.size() >= 10);
  }
}

// The flush must evict: a copy whose 2 x 8 MiB sit in the L2 when nothing flushes takes longer
// when the runner's flush (a read of a scratch buffer twice the L2) runs before each sample.
TEST_CASE("cuda timing: the L2 flush evicts the kernel's data") {
  auto b = backend();
  wb::Program p = compile(*b, kCopy);
  CopyPlan c;
  copy_plan(c, p, b->info(), size_t(1) << 23);
  wb::TimingOptions nf;
  nf.flush_l2 = false;
  wb::Timing warm = b->time(c.plan, nf), cold = b->time(c.plan, wb::TimingOptions{});
  REQUIRE_MESSAGE(warm.ok, warm.fault.message);
  REQUIRE_MESSAGE(cold.ok, cold.fault.message);
  print_timing("float4 copy 8 MiB, no flush", warm, 2.0 * double(1 << 23), 0);
  print_timing("float4 copy 8 MiB, flushed", cold, 2.0 * double(1 << 23), 0);
  CHECK(cold.median_us > 1.1 * warm.median_us);
}

TEST_CASE("cuda timing: where the time goes for vector add at n = 2^26") {
  auto b = backend();
  const auto c0 = std::chrono::steady_clock::now();
  wb::Program p = compile(*b, kCopy);
  const double compile_ms = ms_since(c0);
  const int n = 1 << 26;
  std::vector<float> a(static_cast<size_t>(n)), bb(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    a[size_t(i)] = float(i % 977) * 0.25f;
    bb[size_t(i)] = float(i % 131) - 3.0f;
  }
  std::vector<wb::HostBuffer> bufs;
  bufs.push_back(buffer("a", a));
  bufs.push_back(buffer("b", bb));
  bufs.push_back(output("c", size_t(n) * 4));
  wb::RunPlan plan;
  plan.program = &p;
  plan.buffers = &bufs;
  plan.launches.push_back(launch("vector_add", {uint32_t((n + 255) / 256)}, {256},
                                 {buf(0, "a"), buf(1, "b"), buf(2, "c"), scalar<int32_t>(n)}));
  double run_ms[2] = {};
  for (int rep = 0; rep < 2; ++rep) {
    bufs[2] = output("c", size_t(n) * 4);
    wb::RunResult r = b->run(plan);
    REQUIRE_MESSAGE(!r.fault, r.fault.message);
    run_ms[rep] = r.run_ms;
  }
  auto c = contents<float>(bufs[2]);
  size_t wrong = 0;
  for (int i = 0; i < n; ++i) wrong += c[size_t(i)] != a[size_t(i)] + bb[size_t(i)];
  CHECK(wrong == 0);
  const auto t0 = std::chrono::steady_clock::now();
  wb::Timing t = b->time(plan, wb::TimingOptions{});
  const double time_ms = ms_since(t0);
  REQUIRE_MESSAGE(t.ok, t.fault.message);
  print_timing("vector_add n=2^26", t, 12.0 * n, time_ms);
  wb::TimingOptions quick;
  quick.min_total_ms = 20;
  const auto q0 = std::chrono::steady_clock::now();
  wb::Timing tq = b->time(plan, quick);
  const double quick_ms = ms_since(q0);
  REQUIRE(tq.ok);
  print_timing("vector_add, min_total 20 ms", tq, 12.0 * n, quick_ms);
  std::printf("vector_add n=2^26: compile %.1f ms, run() %.1f ms then %.1f ms (768 MiB up, "
              "768 MiB down), time() %.1f ms (default options) / %.1f ms (min_total_ms=20)\n",
              compile_ms, run_ms[0], run_ms[1], time_ms, quick_ms);
  CHECK(12.0 * n / (t.median_us * 1e3) > 1000.0);
}

TEST_CASE("cuda timing: host <-> device transfer rates (for tuning run())") {
  auto b = backend(); // makes the context current on this thread
  std::string why;
  const wb::cuda::Driver* d = wb::cuda::driver(why);
  REQUIRE(d);
  const size_t bytes = size_t(256) << 20;
  std::vector<std::byte> host(bytes, std::byte{1});
  CUdeviceptr dev = 0;
  REQUIRE(d->cuMemAlloc(&dev, bytes) == CUDA_SUCCESS);
  CUstream s = nullptr;
  REQUIRE(d->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  auto rate = [&](auto&& fn) {
    fn(); // first touch
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    return double(bytes) / (ms_since(t0) * 1e6); // GB/s
  };
  auto sync = [&] {
    while (d->cuStreamQuery(s) == CUDA_ERROR_NOT_READY) std::this_thread::yield();
  };
  const double h2d = rate([&] {
    d->cuMemcpyHtoDAsync(dev, host.data(), bytes, s);
    sync();
  });
  const double d2h = rate([&] {
    d->cuMemcpyDtoHAsync(host.data(), dev, bytes, s);
    sync();
  });
  double h2d_pinned = 0, d2h_pinned = 0;
  void* pinned = nullptr;
  if (d->cuMemAllocHost && d->cuMemAllocHost(&pinned, bytes) == CUDA_SUCCESS) {
    h2d_pinned = rate([&] {
      d->cuMemcpyHtoDAsync(dev, pinned, bytes, s);
      sync();
    });
    d2h_pinned = rate([&] {
      d->cuMemcpyDtoHAsync(pinned, dev, bytes, s);
      sync();
    });
    d->cuMemFreeHost(pinned);
  }
  std::vector<std::byte> other(bytes);
  const double memcpy1 = rate([&] { std::memcpy(other.data(), host.data(), bytes); });
  const double memcpy8 = rate([&] {
    std::vector<std::thread> th;
    for (size_t k = 0; k < 8; ++k)
      th.emplace_back([&, k] {
        std::memcpy(other.data() + k * bytes / 8, host.data() + k * bytes / 8, bytes / 8);
      });
    for (auto& t : th) t.join();
  });
  std::printf("transfers of 256 MiB: H2D pageable %.1f GB/s, D2H pageable %.1f GB/s, H2D pinned "
              "%.1f GB/s, D2H pinned %.1f GB/s; host memcpy 1 thread %.1f GB/s, 8 threads %.1f "
              "GB/s; %u hardware threads\n",
              h2d, d2h, h2d_pinned, d2h_pinned, memcpy1, memcpy8,
              std::thread::hardware_concurrency());
  d->cuStreamDestroy(s);
  d->cuMemFree(dev);
  CHECK(h2d > 0.5);
}
