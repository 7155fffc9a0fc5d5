// Sticky faults and endless kernels on a real GPU. Each runs in a child process: a sticky fault
// poisons the context and an endless kernel keeps running until its process ends.
#include "gpu_util.hpp"

#include <cstdio>

using namespace gpu;

namespace {

const char* kFaulty = R"(
#include <cassert>
extern "C" __global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
extern "C" __global__ void far_write(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) y[(size_t)1 << 40] = x[0]; // 4 TiB past the buffer
}
extern "C" __global__ void trap(const float* x, float* y, int n) {
  if (threadIdx.x == 0 && x[0] >= 0.0f) __trap();
}
extern "C" __global__ void misaligned(const float* x, float* y, int n) {
  const float4* p = reinterpret_cast<const float4*>(x + 1); // 4 bytes past a 16-byte boundary
  float4 v = p[threadIdx.x];
  y[threadIdx.x] = v.x + v.y + v.z + v.w;
}
extern "C" __global__ void asserts(const float* x, float* y, int n) {
  assert(threadIdx.x != 0 || x[0] < 0.0f); // one thread fails: one line of output
  y[threadIdx.x] = x[threadIdx.x];
}
extern "C" __global__ void spin(const float* x, float* y, int n) {
  volatile const float* v = x;
  while (v[0] >= 0.0f) { }
  y[0] = 1.0f;
}
)";

struct Setup {
  std::unique_ptr<wb::Backend> b;
  wb::Program p;
  std::vector<wb::HostBuffer> bufs;
  wb::RunPlan plan;
};

void setup(Setup& s, const std::vector<std::string>& kernels, double timeout_s = 10) {
  s.b = backend();
  s.p = compile(*s.b, kFaulty);
  const int n = 1024;
  std::vector<float> x(n, 1.0f);
  s.bufs.push_back(buffer("x", x));
  s.bufs.push_back(output("y", n * 4));
  s.plan.program = &s.p;
  s.plan.buffers = &s.bufs;
  s.plan.timeout_s = timeout_s;
  for (auto& k : kernels)
    s.plan.launches.push_back(
        launch(k, {n / 256}, {256}, {buf(0, "x"), buf(1, "y"), scalar<int32_t>(n)}));
}

void expect_sticky(const std::string& kernel, wb::FaultKind kind, int launch_index,
                   const std::vector<std::string>& kernels) {
  Setup s;
  setup(s, kernels);
  wb::RunResult r = s.b->run(s.plan);
  std::printf("%s -> %s\n", kernel.c_str(), r.fault.message.c_str());
  CHECK(r.fault.kind == kind);
  CHECK(r.fault.sticky);
  CHECK(r.fault.launch == launch_index);
  CHECK(r.fault.message.find(kernel) != std::string::npos);
  CHECK(!s.b->usable());
  wb::RunResult again = s.b->run(s.plan);
  CHECK(again.fault);
  // CUDA stays poisoned for the whole process (the driver's rule), so a new backend here is
  // refused with a message that says to start a new process: the runner's job.
  s.b.reset();
  std::string why;
  auto fresh = wb::make_cuda_backend(why);
  std::printf("  a new backend in this process: %s\n", fresh ? "works" : why.c_str());
  if (!fresh) CHECK(why.find("new process") != std::string::npos);
}

} // namespace

TEST_CASE("cuda fault: an out-of-bounds write far away is illegal_address") {
  if (!is_child()) {
    CHECK(in_child("cuda fault: an out-of-bounds write far away is illegal_address") == 0);
    return;
  }
  // The second launch faults: the fault must name it.
  expect_sticky("far_write", wb::FaultKind::illegal_address, 1, {"copy", "far_write"});
}

TEST_CASE("cuda fault: __trap() is trap") {
  if (!is_child()) {
    CHECK(in_child("cuda fault: __trap() is trap") == 0);
    return;
  }
  expect_sticky("trap", wb::FaultKind::trap, 0, {"trap"});
}

TEST_CASE("cuda fault: a misaligned float4 load is misaligned") {
  if (!is_child()) {
    CHECK(in_child("cuda fault: a misaligned float4 load is misaligned") == 0);
    return;
  }
  expect_sticky("misaligned", wb::FaultKind::misaligned, 0, {"misaligned"});
}

TEST_CASE("cuda fault: a failed assert is assertion") {
  if (!is_child()) {
    CHECK(in_child("cuda fault: a failed assert is assertion") == 0);
    return;
  }
  expect_sticky("asserts", wb::FaultKind::assertion, 0, {"asserts"});
}

TEST_CASE("cuda fault: an endless kernel is a timeout") {
  if (!is_child()) {
    CHECK(in_child("cuda fault: an endless kernel is a timeout", 90) == 0);
    return;
  }
  Setup s;
  setup(s, {"spin"}, 1.0);
  const auto t0 = std::chrono::steady_clock::now();
  wb::RunResult r = s.b->run(s.plan);
  const double ms = ms_since(t0);
  std::printf("spin -> %s (after %.0f ms)\n", r.fault.message.c_str(), ms);
  const bool ok = r.fault.kind == wb::FaultKind::timeout && r.fault.sticky && !s.b->usable() &&
                  r.fault.launch == 0 && ms >= 1000 && ms < 5000;
  CHECK(ok);
  // The kernel still runs: skip every destructor (the driver's included) and let the exit end it.
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(ok ? 0 : 1);
}
