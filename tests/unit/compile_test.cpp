#include "core/check.hpp"
#include "core/compile.hpp"

#include <fmt/format.h>

#include <cmath>
#include <doctest/doctest.h>

using namespace wb;

namespace {
Program compile(const std::string& src) {
  return compile_source(src, "learner.cu", CompileOptions{});
}
const Diagnostic* first_error(const Program& p) {
  for (auto& d : p.diagnostics)
    if (d.severity == Diagnostic::Severity::error) return &d;
  return nullptr;
}
} // namespace

TEST_CASE("NVRTC errors become diagnostics with the learner's line and column") {
  // The prelude Warpbook adds must not shift line numbers.
  Program p = compile("extern \"C\" __global__ void k(float* a, int n) {\n"
                      "  int i = blockIdx.x;\n"
                      "  a[i] = b + 1.0f;\n"
                      "}\n");
  CHECK_FALSE(p.ok);
  const Diagnostic* d = first_error(p);
  REQUIRE(d);
  CHECK(d->file == "learner.cu");
  CHECK(d->line == 3);
  CHECK(d->column == 10);
  CHECK(d->message.find("identifier \"b\" is undefined") != std::string::npos);
  CHECK(d->str() == "learner.cu:3:10: error: identifier \"b\" is undefined");
}

TEST_CASE("several kinds of compile error") {
  SUBCASE("missing semicolon") {
    Program p =
        compile("extern \"C\" __global__ void k(float* a) {\n  a[0] = 1.0f\n  a[1] = 2.0f;\n}\n");
    REQUIRE(first_error(p));
    CHECK(first_error(p)->line == 3);
    CHECK(first_error(p)->message.find("expected a \";\"") != std::string::npos);
  }
  SUBCASE("type error") {
    Program p = compile("extern \"C\" __global__ void k(float* a) {\n  int* q = a;\n}\n");
    REQUIRE(first_error(p));
    CHECK(first_error(p)->line == 2);
  }
  SUBCASE("unknown include") {
    Program p = compile("#include <vector>\nextern \"C\" __global__ void k(float* a) {}\n");
    REQUIRE(first_error(p));
    CHECK(first_error(p)->line == 1);
    CHECK(first_error(p)->message.find("vector") != std::string::npos);
  }
  SUBCASE("warnings are kept, and do not fail the compile") {
    Program p =
        compile("extern \"C\" __global__ void k(float* a) {\n  int unused;\n  a[0] = 1;\n}\n");
    CHECK(p.ok);
    REQUIRE(!p.diagnostics.empty());
    CHECK(p.diagnostics[0].severity == Diagnostic::Severity::warning);
    CHECK(p.diagnostics[0].line == 2);
  }
}

TEST_CASE("headers learners reach for compile, and so do INFINITY and assert") {
  Program p =
      compile("#include <cfloat>\n#include <climits>\n#include <cstdio>\n#include <cassert>\n"
              "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
              "#include <cuda_fp8.h>\n#include <mma.h>\n"
              "extern \"C\" __global__ void k(float* a, int n) {\n"
              "  assert(n > 0);\n  printf(\"%d\\n\", n);\n"
              "  a[0] = fminf(FLT_MAX, INFINITY) + INT_MAX;\n}\n");
  for (auto& d : p.diagnostics) MESSAGE(d.str());
  CHECK(p.ok);
  CHECK(p.ptx.find(".entry k(") != std::string::npos);
}

TEST_CASE(
    "a kernel that is not extern \"C\", misnamed, or not __global__ gets a message saying so") {
  SUBCASE("not extern C") {
    Program p = compile("__global__ void vector_add(float* a) { a[0] = 1; }\n");
    CHECK_FALSE(require_kernels(p, {"vector_add"}));
    CHECK_FALSE(p.ok);
    REQUIRE(first_error(p));
    CHECK(first_error(p)->message.find("not declared extern \"C\"") != std::string::npos);
    CHECK(first_error(p)->message.find("_Z10vector_addPf") != std::string::npos);
  }
  SUBCASE("misnamed") {
    Program p = compile("extern \"C\" __global__ void vectoradd(float* a) { a[0] = 1; }\n");
    CHECK_FALSE(require_kernels(p, {"vector_add"}));
    CHECK(first_error(p)->message.find(
              "no kernel named 'vector_add' (the file defines 'vectoradd')") != std::string::npos);
  }
  SUBCASE("a device function") {
    Program p =
        compile("extern \"C\" __device__ __noinline__ void vector_add(float* a) { a[0] = 1; }\n"
                "extern \"C\" __global__ void other(float* a) { vector_add(a); }\n");
    CHECK_FALSE(require_kernels(p, {"vector_add"}));
    CHECK(first_error(p)->message.find("device function, not a kernel") != std::string::npos);
  }
  SUBCASE("present") {
    Program p = compile("extern \"C\" __global__ void vector_add(float* a) { a[0] = 1; }\n");
    CHECK(require_kernels(p, {"vector_add"}));
    CHECK(p.ok);
  }
}

TEST_CASE("ptxas resources are reported without a GPU") {
  CompileOptions o;
  o.ptxas_report = true;
  Program p = compile_source(
      "extern \"C\" __global__ void k(float* a) { __shared__ float s[64]; s[threadIdx.x] = "
      "1; __syncthreads(); a[threadIdx.x] = s[63 - threadIdx.x]; }\n",
      "learner.cu", o);
  REQUIRE(p.ok);
  REQUIRE(p.resources.size() == 1);
  CHECK(p.resources[0].name == "k");
  CHECK(p.resources[0].registers > 0);
  CHECK(p.resources[0].shared_bytes == 256);
  CHECK(p.resources[0].spill_stores == 0);
}

TEST_CASE("@tune lines") {
  std::vector<Diagnostic> d;
  auto t = parse_tune_lines(
      "// @tune BLOCK=512\nint x;\n  //@tune  TILE = 32 \n// @tune BLOCK=\n// @tune 9=1\n", "f.cu",
      d);
  REQUIRE(t.size() == 2);
  CHECK(t[0].name == "BLOCK");
  CHECK(t[0].value == 512);
  CHECK(t[0].line == 1);
  CHECK(t[1].name == "TILE");
  CHECK(t[1].value == 32);
  CHECK(t[1].line == 3);
  REQUIRE(d.size() == 2);
  CHECK(d[0].line == 4);
  CHECK(d[1].line == 5);
  CHECK(d[0].message.find("NAME=VALUE") != std::string::npos);
  Tunable block{"BLOCK", 256, {32, 64, 128, 256, 512, 1024}};
  CHECK(block.reject_reason(512).empty());
  CHECK(block.reject_reason(100).find("choose one of 32, 64") != std::string::npos);
  Tunable pow{"B", 256, {}, 32, 1024, true};
  CHECK(pow.reject_reason(96).find("power of two") != std::string::npos);
  CHECK(pow.reject_reason(2048).find("outside 32..1024") != std::string::npos);
}

TEST_CASE("tolerance: atol + rtol * |expected|; NaN never passes unless expected") {
  CHECK(within_tolerance(1.0, 1.0, 0, 0));
  CHECK(within_tolerance(100.0, 100.5, 1e-2, 0));
  CHECK_FALSE(within_tolerance(100.0, 102.0, 1e-2, 0));
  CHECK(within_tolerance(0.0, 1e-7, 0, 1e-6));
  CHECK_FALSE(within_tolerance(0.0, 1e-5, 1e-3, 1e-6)); // rtol of a zero reference is no help
  CHECK_FALSE(within_tolerance(1.0, NAN, 1, 1));
  CHECK_FALSE(within_tolerance(NAN, 1.0, 1, 1));
  CHECK(within_tolerance(NAN, NAN, 0, 0));
  CHECK_FALSE(within_tolerance(1.0, INFINITY, 1e30, 1e30));
  CHECK(within_tolerance(-INFINITY, -INFINITY, 0, 0));
  CHECK_FALSE(within_tolerance(INFINITY, -INFINITY, 0, 0));
}

TEST_CASE("owners by layout") {
  CHECK(owner_by_layout(1027, {}, {5, 1, 1}, {256, 1, 1}, 1200) ==
        "thread (3,0,0) of block (4,0,0) by layout");
  CHECK(owner_by_layout(7, {}, {64, 1, 1}, {256, 1, 1}, 64) == "block (7,0,0) by layout");
  CHECK(owner_by_layout(2 * 100 + 5, {3, 100}, {3, 1, 1}, {128, 1, 1}, 300) ==
        "block (2,0,0) by layout");
  CHECK(owner_by_layout(17 * 40 + 33, {20, 40}, {2, 2, 1}, {32, 16, 1}, 800) ==
        "thread (1,1,0) of block (1,1,0) by layout");
}

TEST_CASE("ptxas's notice that it serialized a kernel's wgmma reaches the resources") {
  // Two accumulators in turn: adding one while the wgmma into the other is in flight makes ptxas
  // put a wait after every wgmma (C7514). Waiting for each before the add does not.
  auto src = [](int keep) {
    return fmt::format(R"(
__device__ __forceinline__ void mma(float (&d)[4], unsigned long long a, unsigned long long b) {{
  asm volatile("{{\n.reg .pred p;\nsetp.ne.b32 p, 0, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {{%0,%1,%2,%3}}, %4, %5, p, 1, 1;\n}}"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(a), "l"(b));
}}
extern "C" __global__ void k(float* out, unsigned long long a, int n) {{
  float acc[4] = {{0, 0, 0, 0}}, t0[4], t1[4];
  for (int i = 0; i < n; i += 2) {{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    mma(t0, a + i, a + 2 * i);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned {0};\n" ::: "memory");
    if (i) for (int q = 0; q < 4; ++q) acc[q] += t1[q];
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    mma(t1, a + i + 1, a + 2 * i + 1);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned {0};\n" ::: "memory");
    for (int q = 0; q < 4; ++q) acc[q] += t0[q];
  }}
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int q = 0; q < 4; ++q) out[threadIdx.x * 4 + q] = acc[q] + t1[q];
}}
)",
                       keep);
  };
  CompileOptions o;
  o.arch = "sm_90a";
  o.ptxas_report = true;
  const Program serial = compile_source(src(1), "serial.cu", o);
  REQUIRE_MESSAGE(serial.ok, serial.log);
  REQUIRE(serial.resources.size() == 1);
  CHECK(serial.resources[0].wgmma_serialized.find("accumulator registers") != std::string::npos);
  const Program waits = compile_source(src(0), "waits.cu", o);
  REQUIRE_MESSAGE(waits.ok, waits.log);
  REQUIRE(waits.resources.size() == 1);
  CHECK(waits.resources[0].wgmma_serialized.empty());
}
