// The unusual-kernel corpus (tests/unusual) on the simulator: each kernel gets its one verdict and
// the words its message must hold. tests/gpu/unusual_gpu_test.cpp holds the GPU to the same
// verdicts, so the two backends agree on every one.
#include "common/fault_suite.hpp"

TEST_CASE("unusual kernels: each says which one verdict both backends give") {
  for (const auto& fc : wb::test::load_fault_cases(wb::test::unusual_dir())) {
    CAPTURE(fc.name);
    CHECK_MESSAGE(fc.gpu_same, fc.name << ": the GPU's line must be `// gpu: same`");
    CHECK_MESSAGE(fc.sim.verdicts.size() == 1, fc.name << ": one verdict, not a choice");
  }
}

TEST_CASE("unusual kernels get their verdicts on the simulator") {
  wb::test::check_fault_cases(
      [] {
        std::string why;
        return wb::make_sim_backend(why);
      },
      false, wb::test::load_fault_cases(wb::test::unusual_dir()), 60);
}
