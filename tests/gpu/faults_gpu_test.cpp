#include "common/fault_suite.hpp"

TEST_CASE("each fault kind gets its verdict on the GPU") {
  wb::test::check_fault_cases(
      [] {
        std::string why;
        return wb::make_cuda_backend(why);
      },
      true);
}
