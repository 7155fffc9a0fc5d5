// TMA on the simulator: the layout suite (tests/common/tma_suite.hpp), a map given by its
// parameter-space address, and the verdicts for TMA's misuses: a pointer that is not a map, a box
// badly aligned in shared memory, an mbarrier that expects more bytes than arrive, reading a slot
// before its copy landed. Also setmaxnreg's rules.
#include "common/tma_suite.hpp"

#include <doctest/doctest.h>

TEST_CASE("TMA load: a map given by its parameter-space address (mov of the parameter)") {
  check_load(Map{4, {40, 24}, {160}, {16, 8}}, {8, 5}, "#define MAP 1\n");
}

TEST_CASE("TMA load: a pointer that is not a tensor map is a fault naming the line") {
  Load L;
  auto r = L.run(Map{4, {40, 24}, {160}, {16, 8}}, {0, 0}, "#define MAP 2\n");
  REQUIRE(r.fault.kind == wb::FaultKind::trap);
  CHECK_HAS(r.fault.message, "is not a tensor map");
  CHECK_HAS(r.fault.message, "__grid_constant__ CUtensorMap");
  CHECK(r.fault.source_line > 0);
}

TEST_CASE("TMA load: a 128B-swizzled box must start on 1024 bytes, an unswizzled one on 128") {
  Load a;
  auto r =
      a.run(Map{2, {150, 40}, {320}, {64, 8}, wb::TmSwizzle::b128}, {0, 0}, "#define OFFSET 512\n");
  REQUIRE(r.fault.kind == wb::FaultKind::misaligned);
  CHECK_HAS(r.fault.message, "not a multiple of 1024");
  CHECK_HAS(r.fault.message, "128B swizzle");
  Load b;
  r = b.run(Map{4, {40, 24}, {160}, {16, 8}}, {0, 0}, "#define OFFSET 64\n");
  REQUIRE(r.fault.kind == wb::FaultKind::misaligned);
  CHECK_HAS(r.fault.message, "not a multiple of 128");
}

// The GPU traps on these (an H100: boxes at 30 and -5 floats, a store at 70 bf16, a 3-D box at 100
// bytes), so they run here only; the layout suite keeps its boxes on 16 bytes.
TEST_CASE("TMA: a box whose innermost coordinate is not on 16 bytes stops the kernel, naming it") {
  for (std::vector<int> c :
       {std::vector<int>{30, 15}, std::vector<int>{-5, -3}, std::vector<int>{1, 0}}) {
    Load L;
    auto r = L.run(Map{4, {37, 19}, {160}, {16, 8}}, c);
    CAPTURE(c[0]);
    REQUIRE(r.fault.kind == wb::FaultKind::misaligned);
    CHECK_HAS(r.fault.message, "innermost coordinate at element " + std::to_string(c[0]));
    CHECK_HAS(r.fault.message, "not a multiple of 16");
    CHECK_HAS(r.fault.message, "multiples of 4 elements");
    CHECK(r.fault.source_line > 0);
  }
  // 4 floats, 8 bf16 or 16 bytes are on 16 bytes; 96 bytes of u8 too.
  check_load(Map{4, {37, 19}, {160}, {16, 8}}, {4, 0});
  check_load(Map{1, {200, 9, 5}, {208, 208 * 9}, {128, 4, 2}, wb::TmSwizzle::b128}, {96, 7, 4});
  // A store too.
  Plan p;
  p.program =
      program_from("#define BOXBYTES 2048\n" + std::string(kStore), "tma_store.cu", "compute_90");
  int G = p.buffer("tensor", std::vector<uint8_t>(208 * 30, 0x77));
  p.buffers[size_t(G)].type = wb::DType::bf16;
  int I = p.buffer("in", std::vector<uint32_t>(512, 0x11111111u));
  p.launch("tma_store", {1, 1, 1}, {128, 1, 1},
           {p.tensor_map(G, {100, 30}, {64, 16}, wb::TmSwizzle::none, {208}), Plan::buf(I),
            Plan::val(70), Plan::val(20)});
  auto r = p.run();
  REQUIRE(r.fault.kind == wb::FaultKind::misaligned);
  CHECK_HAS(r.fault.message, "140 bytes from the row's start");
  CHECK_HAS(r.fault.message, "multiples of 8 elements");
}

TEST_CASE("TMA load: an mbarrier that expects more bytes than the box brings is a deadlock") {
  Load L;
  auto r = L.run(Map{4, {40, 24}, {160}, {16, 8}}, {0, 0}, "#define EXTRA 64\n");
  REQUIRE(r.fault.kind == wb::FaultKind::deadlock);
  CHECK_HAS(r.fault.message, "every live warp waits on an mbarrier");
  CHECK_HAS(r.fault.message, "64 transaction bytes outstanding");
  CHECK_HAS(r.fault.message, "expects 576 bytes this phase and 512 arrived");
}

TEST_CASE("TMA load: an mbarrier that expects fewer bytes than the box brings is a deadlock") {
  // The count goes past zero without stopping there: the phase never completes, and the report
  // says the copies bring more than expect_tx announced.
  Load L;
  auto r = L.run(Map{4, {40, 24}, {160}, {16, 8}}, {0, 0}, "#define EXTRA (-64)\n");
  REQUIRE(r.fault.kind == wb::FaultKind::deadlock);
  CHECK_HAS(r.fault.message, "-64 transaction bytes outstanding");
  CHECK_HAS(r.fault.message, "bring more bytes than its expect_tx counts");
}

TEST_CASE("TMA load: reading the box before waiting on its mbarrier is a race that says so") {
  Load L;
  auto r = L.run(Map{4, {40, 24}, {160}, {16, 8}}, {0, 0}, "#define NOWAIT 1\n");
  REQUIRE(r.fault.kind == wb::FaultKind::race);
  CHECK_HAS(r.fault.message, "cp.async.bulk");
  CHECK_HAS(r.fault.message, "box");
}

TEST_CASE("TMA store: writing its box again before cp.async.bulk.wait_group.read is a race") {
  auto run = [](int reuse) {
    Plan p;
    p.program = program_from("#define REUSE " + std::to_string(reuse) +
                                 "\n#define BOXBYTES 2048\n" + kStore,
                             "tma_store.cu", "compute_90");
    int G = p.buffer("tensor", std::vector<uint8_t>(208 * 30, 0x77));
    p.buffers[size_t(G)].type = wb::DType::bf16;
    int I = p.buffer("in", std::vector<uint32_t>(512, 0x3f803f80u));
    p.launch("tma_store", {1, 1, 1}, {128, 1, 1},
             {p.tensor_map(G, {100, 30}, {64, 16}, wb::TmSwizzle::none, {208}), Plan::buf(I),
              Plan::val(0), Plan::val(0)});
    return p.run();
  };
  auto r = run(1);
  REQUIRE(r.fault.kind == wb::FaultKind::race);
  CHECK_HAS(r.fault.message, "while the TMA store that thread (0,0,0) started");
  CHECK_HAS(r.fault.message, "cp.async.bulk.wait_group.read");
  r = run(2);
  INFO(r.fault.message);
  CHECK(!r.fault);
}

namespace {

const char* kRegs = R"(
extern "C" __global__ void regs(float* out) {
#if MODE == 0
  if (threadIdx.x / 128 == 0) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
  else asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#elif MODE == 1
  asm volatile("setmaxnreg.inc.sync.aligned.u32 100;");
#else
  if (threadIdx.x % 2) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif
  out[threadIdx.x] = 1.0f;
}
)";

wb::RunResult run_regs(int mode) {
  Plan p;
  p.program =
      program_from("#define MODE " + std::to_string(mode) + "\n" + kRegs, "regs.cu", "compute_90a");
  int O = p.buffer("out", std::vector<float>(256, 0.0f));
  p.launch("regs", {1, 1, 1}, {256, 1, 1}, {Plan::buf(O)});
  return p.run();
}

} // namespace

TEST_CASE("setmaxnreg: per warpgroup it runs; a bad count or a divergent warp is a fault") {
  auto r = run_regs(0);
  INFO(r.fault.message);
  CHECK(!r.fault);
  r = run_regs(1);
  REQUIRE(r.fault.kind == wb::FaultKind::trap);
  CHECK_HAS(r.fault.message, "multiple of 8 from 24 to 256");
  CHECK(r.fault.source_line > 0);
  r = run_regs(2);
  REQUIRE(r.fault.kind == wb::FaultKind::trap);
  CHECK_HAS(r.fault.message, ".sync.aligned");
}
