// The wgmma GEMM kernels of tests/kernels/wgmma_gemm.cu on a Hopper GPU (compiled for sm_90a by
// the CUDA backend), against the same host reference the simulator's test uses
// (tests/common/wgmma_cases.hpp): this pins the simulator's fragment and shared-memory layouts to
// the hardware's. Tolerance: 2^-9 of the products' magnitudes for FP8 (the tensor cores keep about
// 14 bits between additions), 2^-18 for f16/bf16. Skipped on GPUs other than compute capability
// 9.0. Run on the device machine only (label gpu).
#include "common/wgmma_cases.hpp"
#include "gpu_util.hpp"

#include <fstream>
#include <sstream>

using namespace gpu;

TEST_CASE("cuda: wgmma GEMMs (e4m3, e5m2, f16, bf16; swizzled, interleaved, A in registers) match "
          "the host reference") {
  auto b = backend();
  const wb::DeviceInfo& d = b->info();
  if (!(d.cc_major == 9 && d.cc_minor == 0)) {
    MESSAGE("wgmma needs compute capability 9.0 (sm_90a); this GPU is " << d.cc_major << "."
                                                                        << d.cc_minor);
    return;
  }
  std::ifstream f(std::string(WARPBOOK_SOURCE_ROOT) + "/tests/kernels/wgmma_gemm.cu");
  REQUIRE(f);
  std::stringstream ss;
  ss << f.rdbuf();
  wb::Program p = compile(*b, ss.str());
  for (const auto& c : wgmma_cases::cases()) {
    CAPTURE(c.kernel);
    for (uint64_t seed : {1, 2}) {
      auto A = wgmma_cases::random_matrix(c.ty, 64, c.k, seed * 100 + uint64_t(c.n));
      auto B = wgmma_cases::random_matrix(c.ty, c.n, c.k, seed * 100 + uint64_t(c.n) + 1);
      std::vector<wb::HostBuffer> bufs;
      bufs.push_back(buffer("A", A));
      bufs.push_back(buffer("B", B));
      bufs.push_back(output("D", size_t(64) * c.n * 4)); // NaN-poisoned
      wb::RunPlan plan;
      plan.program = &p;
      plan.buffers = &bufs;
      plan.launches.push_back(launch(c.kernel, {1}, {128},
                                     {buf(0, "A"), buf(1, "B"), buf(2, "D"), scalar<int32_t>(0)}));
      wb::RunResult r = b->run(plan);
      REQUIRE_MESSAGE(!r.fault, r.fault.message);
      const auto R = wgmma_cases::reference(c, A, B);
      const std::string bad = wgmma_cases::compare(c, R, contents<float>(bufs[2]), true);
      CHECK_MESSAGE(bad.empty(), bad);
      CHECK(guards_intact(bufs[2]));
    }
  }
}
