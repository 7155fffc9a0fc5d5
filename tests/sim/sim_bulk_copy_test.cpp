// cp.async.bulk (global to shared, completing on an mbarrier: the one-dimensional form of Hopper's
// TMA) on the simulator: a two-slot ring gives the right values, and each way of misusing it gets
// a verdict that names it: reading before the wait, a byte count the copies never reach, a size
// that is not a multiple of 16, a copy that runs off its buffer.
#include "sim_test_util.hpp"

#include <doctest/doctest.h>

using namespace simtest;

namespace {

bool has(const std::string& s, const std::string& w) {
  return s.find(w) != std::string::npos;
}

#define CHECK_HAS(msg, words)                                                                      \
  CHECK_MESSAGE(has(msg, words), "expected `" << (words) << "` in: " << (msg))

// A block of 256 threads streams x through a ring of two 1 KB slots, one bulk copy per step issued
// by thread 0, and writes 2 x to out. MODE 0: as it should be. 1: no wait before reading.
// 2: the barrier expects one byte count more than the copy brings. 3: a 1000-byte copy.
// 4: the last step reads 1 KB past the end of x.
const char* kRing = R"(#ifndef MODE
#define MODE 0
#endif
__device__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ void issue(float* dst, const float* src, unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)),
               "r"(bytes + (MODE == 2 ? 16u : 0u)) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(smem(dst)), "l"(src), "r"(MODE == 3 ? 1000u : bytes), "r"(smem(bar)) : "memory");
}
__device__ void wait(unsigned long long* bar, unsigned parity) {
  unsigned ok = 0;
  while (!ok)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                 "selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(smem(bar)), "r"(parity) : "memory");
}
extern "C" __global__ void k(const float* x, float* out, int steps) {
  __shared__ __align__(16) float buf[2][256];
  __shared__ __align__(8) unsigned long long bar[2];
  const int t = threadIdx.x;
  if (t == 0) {
    for (int i = 0; i < 2; ++i)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar[i])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (t == 0)
    for (int i = 0; i < 2 && i < steps; ++i) issue(buf[i], x + 256 * i, &bar[i], 1024);
  for (int st = 0; st < steps; ++st) {
    if (MODE != 1) wait(&bar[st % 2], (st / 2) & 1);
    out[256 * st + t] = 2.0f * buf[st % 2][t];
    __syncthreads(); // every thread is done with the slot before it is filled again
    if (t == 0 && st + 2 < steps)
      issue(buf[st % 2], x + 256 * (st + 2) + (MODE == 4 && st + 2 == steps - 1 ? 256 : 0),
            &bar[st % 2], 1024);
  }
})";

struct Ring {
  Plan p;
  int O = -1;
  std::vector<float> x;
  wb::RunResult run(int mode, int steps = 5) {
    p.program = program_from("#define MODE " + std::to_string(mode) + "\n" + kRing, "ring.cu",
                             "compute_90");
    x.resize(size_t(256 * steps));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 977) * 0.5f - 100.0f;
    int X = p.buffer("x", x);
    O = p.buffer("out", std::vector<float>(x.size(), -1.0f));
    p.launch("k", {1, 1, 1}, {256, 1, 1}, {Plan::buf(X), Plan::buf(O), Plan::val(steps)});
    return p.run();
  }
};

} // namespace

TEST_CASE("cp.async.bulk: a two-slot ring over five steps gives every value") {
  Ring g;
  auto r = g.run(0);
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto out = g.p.get<float>(g.O);
  for (size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == 2.0f * g.x[i]);
}

TEST_CASE("cp.async.bulk: reading the slot before waiting on its mbarrier is a race that says so") {
  Ring g;
  auto r = g.run(1);
  REQUIRE(r.fault.kind == wb::FaultKind::race);
  CHECK_HAS(r.fault.message, "shared-memory race");
  CHECK_HAS(r.fault.message, "buf");
  CHECK_HAS(r.fault.message, "cp.async.bulk");
  CHECK_HAS(r.fault.message, "mbarrier");
}

TEST_CASE(
    "cp.async.bulk: an mbarrier that expects more bytes than arrive is a deadlock naming them") {
  Ring g;
  auto r = g.run(2);
  REQUIRE(r.fault.kind == wb::FaultKind::deadlock);
  CHECK_HAS(r.fault.message, "every live warp waits on an mbarrier");
  CHECK_HAS(r.fault.message, "bar[0]");
  CHECK_HAS(r.fault.message, "16 transaction bytes outstanding");
}

TEST_CASE("cp.async.bulk: a size that is not a multiple of 16 is a misaligned fault") {
  Ring g;
  auto r = g.run(3);
  REQUIRE(r.fault.kind == wb::FaultKind::misaligned);
  CHECK_HAS(r.fault.message, "cp.async.bulk of 1000 bytes");
  CHECK_HAS(r.fault.message, "multiples of 16");
}

TEST_CASE("cp.async.bulk: a copy that runs past its buffer names the buffer") {
  Ring g;
  auto r = g.run(4);
  REQUIRE(r.fault.kind == wb::FaultKind::out_of_bounds);
  CHECK_HAS(r.fault.message, "x[");
}
