// The unusual-kernel corpus (tests/unusual) on the GPU: every kernel must get the verdict (and the
// words) the simulator gives it, so a learner hears the same thing from both backends.
#include "common/fault_suite.hpp"

TEST_CASE("unusual kernels get the simulator's verdicts on the GPU") {
  wb::test::check_fault_cases(
      [] {
        std::string why;
        return wb::make_cuda_backend(why);
      },
      true, wb::test::load_fault_cases(wb::test::unusual_dir()), 60);
}
