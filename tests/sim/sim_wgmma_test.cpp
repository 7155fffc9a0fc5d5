// Hopper's warpgroup MMA on the simulator: the GEMM kernels of tests/kernels/wgmma_gemm.cu (e4m3,
// e5m2, f16, bf16; N 64 to 256; 128-byte swizzle and none; A from registers; imm-scale-a -1; M-
// and N-major operands)
// against the host reference of tests/common/wgmma_cases.hpp, random inputs, NaN-poisoned outputs;
// the tensor FLOP counter; and the faults a learner gets for a descriptor that is misaligned or out
// of range.
#include "common/wgmma_cases.hpp"
#include "sim_test_util.hpp"

#include <doctest/doctest.h>

#include <limits>

using namespace simtest;

namespace {

const std::string& wgmma_source() {
  static const std::string s =
      read_file(std::string(WARPBOOK_SOURCE_ROOT) + "/tests/kernels/wgmma_gemm.cu");
  return s;
}

struct Run {
  wb::RunResult r;
  std::vector<float> d;
};

Run run_case(const wgmma_cases::Case& c, int skew, uint64_t seed) {
  Plan p;
  p.program = program_from(wgmma_source(), "wgmma_gemm.cu");
  auto A = wgmma_cases::random_matrix(c.ty, 64, c.k, seed);
  auto B = wgmma_cases::random_matrix(c.ty, c.n, c.k, seed + 1);
  int a = p.buffer("A", A), b = p.buffer("B", B),
      d = p.buffer("D",
                   std::vector<float>(size_t(64) * c.n, std::numeric_limits<float>::quiet_NaN()));
  p.launch(c.kernel, {1, 1, 1}, {128, 1, 1},
           {Plan::buf(a), Plan::buf(b), Plan::buf(d), Plan::val<int32_t>(skew)});
  Run out;
  out.r = p.run();
  out.d = p.get<float>(d);
  if (!out.r.fault) {
    auto R = wgmma_cases::reference(c, A, B);
    std::string bad = wgmma_cases::compare(c, R, out.d, false);
    CHECK_MESSAGE(bad.empty(), bad);
    CHECK(p.guards_intact(d));
  }
  return out;
}

} // namespace

TEST_CASE("wgmma.mma_async GEMMs on the simulator match the host reference") {
  for (const auto& c : wgmma_cases::cases()) {
    CAPTURE(c.kernel);
    for (uint64_t seed : {1, 2}) {
      Run r = run_case(c, 0, seed * 100 + uint64_t(c.n));
      INFO(r.r.fault.message);
      REQUIRE(!r.r.fault);
    }
  }
}

TEST_CASE("wgmma.mma_async counts tensor FLOPs") {
  const auto& c = wgmma_cases::cases()[1]; // e4m3 m64n256k32, 4 slices
  Run r = run_case(c, 0, 7);
  REQUIRE(!r.r.fault);
  // 4 wgmma of 2 * 64 * 256 * 32 FLOPs.
  CHECK(counter(r.r, "flops_tensor") == doctest::Approx(4.0 * 2 * 64 * 256 * 32));
}

TEST_CASE("wgmma.mma_async: a misaligned or out-of-range descriptor is a clear fault") {
  const auto& c = wgmma_cases::cases()[0]; // e4m3 N 64, 128-byte swizzle
  {
    // A's start 128 bytes in: row 1 of a swizzle atom.
    Run r = run_case(c, 128, 3);
    REQUIRE(r.r.fault);
    CHECK(r.r.fault.kind == wb::FaultKind::misaligned);
    CHECK(r.r.fault.message.find("wgmma.mma_async's A descriptor") != std::string::npos);
    CHECK(r.r.fault.message.find("1024-byte boundary") != std::string::npos);
  }
  {
    // 16 bytes in: aligned for the descriptor, but the 32-byte K slice crosses the row.
    Run r = run_case(c, 112, 3);
    REQUIRE(r.r.fault);
    CHECK(r.r.fault.kind == wb::FaultKind::misaligned);
  }
  {
    // Whole atoms past the tiles: out of shared memory.
    Run r = run_case(c, 64 * 1024, 3);
    REQUIRE(r.r.fault);
    CHECK(r.r.fault.kind == wb::FaultKind::out_of_bounds);
    CHECK(r.r.fault.message.find("past the block's") != std::string::npos);
  }
}

TEST_CASE("wgmma forms the simulator does not run are named") {
  // imm-trans-b 2, and an f16 wgmma at k32.
  const char* forms[][2] = {
      {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 2;",
       "imm-trans-a and imm-trans-b must be 0 or 1"},
      {"wgmma.mma_async.sync.aligned.m64n8k32.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;",
       "f16 x f16 or bf16 x bf16 at k16"}};
  for (auto& f : forms) {
    CAPTURE(f[0]);
    Plan p;
    p.program = program_from(std::string(R"(
extern "C" __global__ void k(float* D, unsigned long long da, unsigned long long db) {
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile(")") + f[0] + R"("
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(da), "l"(db));
  D[threadIdx.x] = d0 + d1 + d2 + d3;
})");
    int d = p.buffer("D", std::vector<float>(128));
    p.launch("k", {1, 1, 1}, {128, 1, 1},
             {Plan::buf(d), Plan::val<uint64_t>(0), Plan::val<uint64_t>(0)});
    auto r = p.run();
    REQUIRE(r.fault);
    INFO(r.fault.message);
    CHECK(r.fault.kind == wb::FaultKind::unsupported);
    CHECK(r.fault.message.find(f[1]) != std::string::npos);
  }
}
