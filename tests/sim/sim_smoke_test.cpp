// First light: the simplest kernels run and produce the right answer.
#include "sim_test_util.hpp"

#include <doctest/doctest.h>

using namespace simtest;

TEST_CASE("sim: vector add from the corpus") {
  Plan p;
  p.program = program_from(read_file(corpus_path("01_vector_add.cu")), "01_vector_add.cu");
  int n = 1000;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) a[i] = float(i), b[i] = 0.5f * float(i);
  int A = p.buffer("a", a), B = p.buffer("b", b), C = p.buffer("c", std::vector<float>(n, -1.0f));
  p.launch("vector_add", {4, 1, 1}, {128, 1, 1},
           {Plan::buf(A), Plan::buf(B), Plan::buf(C), Plan::val<int32_t>(n)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto c = p.get<float>(C);
  for (int i = 0; i < n; ++i) REQUIRE(c[i] == a[i] + b[i]);
  CHECK(p.guards_intact(C));
}
