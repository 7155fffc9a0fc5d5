// The CUDA backend on a real GPU: device info, round trips, guard bands, launch checks, dynamic
// shared memory, several launches, kernel resources. Run on the device machine only (label gpu).
#include "gpu_util.hpp"

#include "core/backend/cuda_driver.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

using namespace gpu;

namespace {

const char* kKernels = R"(
extern "C" __global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
extern "C" __global__ void add_one(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}
extern "C" __global__ void twice(const float* y, float* z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = 2.0f * y[i];
}
extern "C" __global__ void __launch_bounds__(128) bounded(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
// Reverses each block's slice through dynamic shared memory (blockDim.x floats... times `rep`).
extern "C" __global__ void reverse_shared(const float* x, float* y, int n) {
  extern __shared__ float s[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  s[blockDim.x * 100 + threadIdx.x] = 1.0f; // touch far into the big allocation
  __syncthreads();
  int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
  if (j < n) y[j] = s[threadIdx.x] + s[blockDim.x * 100 + threadIdx.x] - 1.0f;
}
)";

std::vector<float> iota_f(size_t n, float start = 0.5f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + float(i % 100003) * 0.25f;
  return v;
}

} // namespace

TEST_CASE("cuda: device info and compile options") {
  const auto t0 = std::chrono::steady_clock::now();
  auto b = backend();
  std::printf("make_cuda_backend: %.1f ms (first in this process: driver load + context)\n",
              ms_since(t0));
  const wb::DeviceInfo& d = b->info();
  std::printf(
      "device: %s  uuid %s  driver %s  cc %d.%d  %d SMs  L2 %.1f MiB  memory %.1f GiB\n"
      "        clock %d MHz  memory clock %d MHz  bus %d bits  shared/block (opt-in) %d B\n",
      d.name.c_str(), d.uuid.c_str(), d.driver.c_str(), d.cc_major, d.cc_minor, d.sm_count,
      double(d.l2_bytes) / (1 << 20), double(d.memory_bytes) / (1 << 30), d.clock_khz / 1000,
      d.memory_clock_khz / 1000, d.bus_width_bits, d.max_shared_per_block_optin);
  CHECK(d.backend == "cuda");
  CHECK(!d.name.empty());
  CHECK(d.uuid.rfind("GPU-", 0) == 0);
  CHECK(d.uuid.size() == 40);
  CHECK(d.cc_major >= 7);
  CHECK(d.sm_count > 0);
  CHECK(d.l2_bytes > 0);
  CHECK(d.memory_bytes > (int64_t(1) << 30));
  CHECK(d.max_shared_per_block_optin >= 48 * 1024);
  const std::string arch = b->compile_options().arch;
  if (d.cc_major == 9 && d.cc_minor == 0)
    CHECK(arch == "sm_90a"); // arch-specific features (wgmma) on the device they target
  else
    CHECK(arch == "sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor));
  CHECK(b->usable());
}

TEST_CASE("cuda: a copy kernel round-trips data and leaves the guard bands intact") {
  auto b = backend();
  wb::Program p = compile(*b, kKernels);
  CHECK(!p.cubin.empty());
  for (int n : {1, 257, 1000003}) {
    CAPTURE(n);
    std::vector<wb::HostBuffer> bufs;
    auto x = iota_f(size_t(n), float(n));
    bufs.push_back(buffer("x", x));
    bufs.push_back(output("y", size_t(n) * 4));
    wb::RunPlan plan;
    plan.program = &p;
    plan.buffers = &bufs;
    plan.launches.push_back(launch("copy", {uint32_t((n + 255) / 256)}, {256},
                                   {buf(0, "x"), buf(1, "y"), scalar<int32_t>(n)}));
    // Twice: the second run reuses pooled allocations and must not see the first one's data.
    for (int rep = 0; rep < 2; ++rep) {
      bufs[1] = output("y", size_t(n) * 4);
      wb::RunResult r = b->run(plan);
      REQUIRE_MESSAGE(!r.fault, r.fault.message);
      CHECK(contents<float>(bufs[1]) == x);
      CHECK(contents<float>(bufs[0]) == x);
      CHECK(guards_intact(bufs[0]));
      CHECK(guards_intact(bufs[1]));
      std::printf("copy n=%d run %d: %.3f ms\n", n, rep, r.run_ms);
    }
  }
  CHECK(b->usable());
}

TEST_CASE("cuda: kernel resources come from the driver") {
  auto b = backend();
  wb::Program p = compile(*b, kKernels);
  auto res = b->kernel_resources(p);
  REQUIRE(res.size() == p.entries.size());
  for (auto& k : res) {
    std::printf("kernel %-16s regs %3d  shared %6d  local %4d  max threads %4d\n", k.name.c_str(),
                k.registers, k.shared_bytes, k.local_bytes, k.max_threads);
    CHECK(k.registers > 0);
    CHECK(k.shared_bytes >= 0);
    CHECK(k.local_bytes >= 0);
    CHECK(k.max_threads > 0);
    if (k.name == "bounded") CHECK(k.max_threads <= 128);
  }
}

TEST_CASE("cuda: bad launch configurations are launch_config faults that name the limit") {
  auto b = backend();
  wb::Program p = compile(*b, kKernels);
  const int n = 4096;
  std::vector<wb::HostBuffer> bufs;
  bufs.push_back(buffer("x", iota_f(n)));
  bufs.push_back(output("y", n * 4));
  auto try_launch = [&](wb::Launch l) {
    wb::RunPlan plan;
    plan.program = &p;
    plan.buffers = &bufs;
    plan.launches.push_back(std::move(l));
    wb::RunResult r = b->run(plan);
    if (r.fault) std::printf("  -> %s\n", r.fault.message.c_str());
    return r.fault;
  };
  auto args = std::vector<wb::KernelArg>{buf(0, "x"), buf(1, "y"), scalar<int32_t>(n)};

  wb::Fault f = try_launch(launch("copy", {2}, {2048}, args));
  CHECK(f.kind == wb::FaultKind::launch_config);
  CHECK(f.launch == 0);
  CHECK(f.message.find("1024") != std::string::npos);
  CHECK(f.message.find("copy") != std::string::npos);

  f = try_launch(launch("bounded", {8}, {512}, args));
  CHECK(f.kind == wb::FaultKind::launch_config);
  CHECK(f.message.find("128") != std::string::npos);

  f = try_launch(launch("copy", {1, 70000}, {32}, args));
  CHECK(f.kind == wb::FaultKind::launch_config);
  CHECK(f.message.find("65535") != std::string::npos);

  f = try_launch(launch("copy", {0}, {32}, args));
  CHECK(f.kind == wb::FaultKind::launch_config);

  f = try_launch(launch("copy", {1}, {32}, args, 1u << 20));
  CHECK(f.kind == wb::FaultKind::launch_config);
  CHECK(f.message.find("shared memory") != std::string::npos);

  f = try_launch(launch("copy", {1}, {32}, {buf(0, "x"), buf(1, "y")}));
  CHECK(f.kind == wb::FaultKind::launch_config);
  CHECK(f.message.find("3 parameters") != std::string::npos);

  f = try_launch(launch("copy", {1}, {32}, {buf(0, "x"), buf(1, "y"), scalar<int64_t>(n)}));
  CHECK(f.kind == wb::FaultKind::launch_config);

  f = try_launch(launch("no_such_kernel", {1}, {32}, args));
  CHECK(f.kind == wb::FaultKind::launch_config);
  CHECK(f.message.find("no_such_kernel") != std::string::npos);

  // None of these poisons the context: a good launch still works.
  CHECK(b->usable());
  CHECK(!try_launch(launch("copy", {n / 256}, {256}, args)));
  CHECK(contents<float>(bufs[1]) == iota_f(n));
}

TEST_CASE("cuda: dynamic shared memory over 48 KiB is opted in") {
  auto b = backend();
  wb::Program p = compile(*b, kKernels);
  const int n = 1000;
  const uint32_t block = 128;
  const uint32_t shared = block * 101 * 4; // 51.7 KB
  if (int64_t(shared) > b->info().max_shared_per_block_optin) return;
  std::vector<wb::HostBuffer> bufs;
  auto x = iota_f(n);
  bufs.push_back(buffer("x", x));
  bufs.push_back(output("y", n * 4));
  wb::RunPlan plan;
  plan.program = &p;
  plan.buffers = &bufs;
  plan.launches.push_back(launch("reverse_shared", {(n + block - 1) / block}, {block},
                                 {buf(0, "x"), buf(1, "y"), scalar<int32_t>(n)}, shared));
  wb::RunResult r = b->run(plan);
  REQUIRE_MESSAGE(!r.fault, r.fault.message);
  auto y = contents<float>(bufs[1]);
  // Block k reverses its slice; the last block is partial, so only check full blocks.
  for (int blk = 0; blk < n / int(block); ++blk)
    for (int t = 0; t < int(block); ++t)
      REQUIRE(y[size_t(blk * block + (block - 1 - t))] == x[size_t(blk * block + t)]);
}

TEST_CASE("cuda: several launches run in order") {
  auto b = backend();
  wb::Program p = compile(*b, kKernels);
  const int n = 100001;
  auto x = iota_f(n);
  std::vector<wb::HostBuffer> bufs;
  bufs.push_back(buffer("x", x));
  bufs.push_back(output("y", n * 4));
  bufs.push_back(output("z", n * 4));
  wb::RunPlan plan;
  plan.program = &p;
  plan.buffers = &bufs;
  const uint32_t grid = (n + 255) / 256;
  plan.launches.push_back(launch("add_one", {grid}, {256}, {buf(0), buf(1), scalar<int32_t>(n)}));
  plan.launches.push_back(launch("twice", {grid}, {256}, {buf(1), buf(2), scalar<int32_t>(n)}));
  wb::RunResult r = b->run(plan);
  REQUIRE_MESSAGE(!r.fault, r.fault.message);
  auto z = contents<float>(bufs[2]);
  for (int i = 0; i < n; ++i) REQUIRE(z[size_t(i)] == 2.0f * (x[size_t(i)] + 1.0f));
}

TEST_CASE("cuda: a plan with no launches round-trips its buffers") {
  auto b = backend();
  wb::Program p = compile(*b, kKernels);
  // One small buffer, and one large and odd-sized one that goes through the pinned staging slots.
  std::vector<uint8_t> big((size_t(37) << 20) + 123);
  uint32_t v = 12345;
  for (auto& x : big) x = uint8_t((v = v * 1664525u + 1013904223u) >> 24);
  std::vector<wb::HostBuffer> bufs;
  bufs.push_back(output("y", 4096));
  bufs.push_back(buffer("big", big));
  const auto small_image = bufs[0].image;
  const auto big_image = bufs[1].image;
  wb::RunPlan plan;
  plan.program = &p;
  plan.buffers = &bufs;
  for (int rep = 0; rep < 2; ++rep) {
    wb::RunResult r = b->run(plan);
    CHECK(!r.fault);
    CHECK(bufs[0].image == small_image);
    CHECK(bufs[1].image == big_image);
  }
}

TEST_CASE("cuda: transfers: outputs filled on the device, inputs kept between runs, hashes match "
          "the host's") {
  auto b = backend();
  wb::Program p = compile(*b, kKernels + std::string(R"(
extern "C" __global__ void clobber(float* x, float* y, int n) {
  if (blockIdx.x == 0 && threadIdx.x == 0) x[n / 2] = 7.0f;
}
)"));
  const int n = (9 << 20) + 5; // staged in pinned slots, with a partial last word
  auto x = iota_f(n);
  std::vector<uint8_t> odd((size_t(5) << 20) + 3);
  for (size_t i = 0; i < odd.size(); ++i) odd[i] = uint8_t(i * 2654435761u >> 13);
  std::vector<wb::HostBuffer> bufs;
  bufs.push_back(buffer("x", x));
  bufs.push_back(output("y", size_t(n) * 4));
  bufs.push_back(buffer("odd", odd));
  const uint64_t x_hash = wb::content_hash(bufs[0].data(), bufs[0].data_bytes);
  const uint64_t odd_hash = wb::content_hash(bufs[2].data(), bufs[2].data_bytes);
  std::fill(bufs[1].image.begin(), bufs[1].image.end(),
            std::byte{0x11}); // must be replaced by the fill

  wb::RunPlan plan;
  plan.program = &p;
  plan.buffers = &bufs;
  const uint32_t grid = (n + 255) / 256;
  plan.launches.push_back(launch("add_one", {grid}, {256}, {buf(0), buf(1), scalar<int32_t>(n)}));
  plan.transfers.resize(3);
  plan.transfers[0] = {wb::Transfer::In::image, wb::Transfer::Out::guards, true};
  plan.transfers[1].in = wb::Transfer::In::fill;
  plan.transfers[1].guard_fill = kGuard;
  plan.transfers[1].data_fill = std::byte{0xff};
  plan.transfers[2] = {wb::Transfer::In::image, wb::Transfer::Out::guards, true};
  plan.keep = true;
  wb::RunResult r = b->run(plan);
  REQUIRE_MESSAGE(!r.fault, r.fault.message);
  REQUIRE(r.hashes.size() == 3);
  CHECK(r.hashes[0] == x_hash);
  CHECK(r.hashes[1] == 0);
  CHECK(r.hashes[2] == odd_hash);
  CHECK(guards_intact(bufs[1])); // the guard bands came from the fill, not from the 0x11 image
  auto y = contents<float>(bufs[1]);
  for (int i = 0; i < n; ++i) REQUIRE(y[size_t(i)] == x[size_t(i)] + 1.0f);

  // The host's copy of x is wiped: a run that takes x as kept must still see the original.
  std::memset(bufs[0].data(), 0, bufs[0].data_bytes);
  plan.transfers[0].in = wb::Transfer::In::kept;
  plan.transfers[2].in = wb::Transfer::In::kept;
  r = b->run(plan);
  REQUIRE_MESSAGE(!r.fault, r.fault.message);
  CHECK(r.hashes[0] == x_hash);
  CHECK(r.hashes[2] == odd_hash);
  y = contents<float>(bufs[1]);
  for (int i = 0; i < n; ++i) REQUIRE(y[size_t(i)] == x[size_t(i)] + 1.0f);
  CHECK(contents<float>(bufs[0]) ==
        std::vector<float>(size_t(n), 0.0f)); // only the guards came back
  CHECK(guards_intact(bufs[0]));

  // A kernel that writes one element of its input: the hash moves, and a plan with no launches
  // that takes x as kept fetches the changed copy.
  plan.launches[0] = launch("clobber", {1}, {32}, {buf(0), buf(1), scalar<int32_t>(n)});
  r = b->run(plan);
  REQUIRE_MESSAGE(!r.fault, r.fault.message);
  CHECK(r.hashes[0] != x_hash);
  CHECK(r.hashes[2] == odd_hash);
  wb::RunPlan fetch = plan;
  fetch.launches.clear();
  fetch.keep = false;
  for (auto& t : fetch.transfers) t = {wb::Transfer::In::kept, wb::Transfer::Out::image, false};
  r = b->run(fetch);
  REQUIRE_MESSAGE(!r.fault, r.fault.message);
  auto got = contents<float>(bufs[0]);
  CHECK(got[size_t(n / 2)] == 7.0f);
  CHECK(got[size_t(n / 2) + 1] == x[size_t(n / 2) + 1]);

  // Nothing is kept now: `kept` falls back to the host image.
  std::memset(bufs[0].data(), 0, bufs[0].data_bytes);
  r = b->run(fetch);
  REQUIRE_MESSAGE(!r.fault, r.fault.message);
  CHECK(contents<float>(bufs[0]) == std::vector<float>(size_t(n), 0.0f));
}
