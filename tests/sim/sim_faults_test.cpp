// Every fault kind the simulator reports, with the message a learner sees: the thread, the block,
// the source line, the buffer and element, and how far out of bounds.
#include "sim_test_util.hpp"

#include <doctest/doctest.h>

using namespace simtest;

namespace {

struct Ran {
  Plan p;
  wb::RunResult r;
};

bool has(const std::string& s, const std::string& w) {
  return s.find(w) != std::string::npos;
}

#define CHECK_HAS(msg, words)                                                                      \
  CHECK_MESSAGE(has(msg, words), "expected `" << (words) << "` in: " << (msg))

} // namespace

TEST_CASE("fault: a write just past the end names the thread, the element and the line") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void add(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n)
    c[i] = a[0] + 1.0f;
})");
  int n = 1027;
  int A = p.buffer("a", std::vector<float>(1, 1.0f)), C = p.buffer("c", std::vector<float>(n));
  p.launch("add", {9, 1, 1}, {128, 1, 1}, {Plan::buf(A), Plan::buf(C), Plan::val(n)});
  auto r = p.run();
  REQUIRE(r.fault.kind == wb::FaultKind::out_of_bounds);
  CHECK(r.fault.message == "thread (3,0,0) of block (8,0,0) wrote c[1027], 4 bytes past its end (c "
                           "has 1027 elements of 4 bytes) at line 4");
  CHECK(r.fault.source_line == 4);
  CHECK(r.fault.launch == 0);
  // The write landed in the guard band, as it would on a GPU, and came back with the image.
  CHECK_FALSE(p.guards_intact(C));
  float g;
  std::memcpy(&g, p.buffers[size_t(C)].image.data() + kGuard + 4 * n, 4);
  CHECK(g == 2.0f);
}

TEST_CASE("fault: reads before the start, far away, and through a null pointer") {
  {
    Plan p;
    p.program = program_from(R"(extern "C" __global__ void k(const int* a, int* c) {
  c[threadIdx.x] = a[(int)threadIdx.x - 1];
})");
    int A = p.buffer("a", std::vector<int32_t>(32, 1)), C = p.buffer("c", std::vector<int32_t>(32));
    p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(A), Plan::buf(C)});
    auto r = p.run();
    REQUIRE(r.fault.kind == wb::FaultKind::out_of_bounds);
    CHECK(r.fault.message == "thread (0,0,0) of block (0,0,0) read a[-1], 4 bytes before its start "
                             "(a has 32 elements of 4 bytes) at line 2");
  }
  {
    Plan p;
    p.program = program_from(R"(extern "C" __global__ void k(const int* a, int* c) {
  c[threadIdx.x] = a[threadIdx.x + (1 << 26)];
})");
    int A = p.buffer("a", std::vector<int32_t>(32, 1)), C = p.buffer("c", std::vector<int32_t>(32));
    p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(A), Plan::buf(C)});
    auto r = p.run();
    REQUIRE(r.fault.kind == wb::FaultKind::out_of_bounds);
    CHECK_HAS(r.fault.message, "thread (0,0,0) of block (0,0,0) read address 0x");
    CHECK_HAS(r.fault.message, "outside every buffer; the nearest buffer is");
    CHECK_HAS(r.fault.message, "at line 2");
  }
  {
    Plan p;
    p.program = program_from(R"(extern "C" __global__ void k(int* p, int v) {
  if (threadIdx.x == 5) p[threadIdx.x] = v;
})");
    p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::val<uint64_t>(0), Plan::val(1)});
    auto r = p.run();
    REQUIRE(r.fault.kind == wb::FaultKind::out_of_bounds);
    CHECK(r.fault.message ==
          "thread (5,0,0) of block (0,0,0) wrote through a null pointer (address 0x14) at line 2");
  }
}

TEST_CASE("fault: misaligned access") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(const char* a, int* c) {
  c[threadIdx.x] = *(const int*)(a + 2 + 4 * threadIdx.x);
})");
  int A = p.buffer("a", std::vector<uint8_t>(256, 1)), C = p.buffer("c", std::vector<int32_t>(32));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(A), Plan::buf(C)});
  auto r = p.run();
  REQUIRE(r.fault.kind == wb::FaultKind::misaligned);
  CHECK_HAS(r.fault.message, "thread (0,0,0) of block (0,0,0) read 4 bytes at address 0x");
  CHECK_HAS(r.fault.message,
            "(a[2] (a has 256 elements of 1 byte; this access reads or writes 4 bytes at once: a "
            "pointer cast to a wider type?)), which is not 4-byte aligned at line 2");
}

TEST_CASE("fault: shared and local memory out of bounds") {
  {
    Plan p;
    p.program = program_from(R"(extern "C" __global__ void k(int* c) {
  __shared__ int tile[32];
  tile[threadIdx.x] = threadIdx.x;
  __syncthreads();
  c[threadIdx.x] = tile[threadIdx.x % 32];
})");
    int C = p.buffer("c", std::vector<int32_t>(64));
    p.launch("k", {1, 1, 1}, {64, 1, 1}, {Plan::buf(C)});
    auto r = p.run();
    REQUIRE(r.fault.kind == wb::FaultKind::out_of_bounds);
    CHECK(r.fault.message == "thread (32,0,0) of block (0,0,0) wrote shared memory at offset 128, "
                             "4 bytes past the end of the block's 128 "
                             "bytes of shared memory (the last array is tile) at line 3");
  }
  {
    Plan p;
    p.program = program_from(R"(extern "C" __global__ void k(const int* idx, int* c) {
  int a[8];
  for (int k = 0; k < 8; ++k) a[k] = k * idx[k];
  c[threadIdx.x] = a[idx[threadIdx.x]];
})");
    std::vector<int32_t> idx(32, 1);
    idx[7] = 1000;
    int I = p.buffer("idx", idx), C = p.buffer("c", std::vector<int32_t>(32));
    p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(I), Plan::buf(C)});
    auto r = p.run();
    REQUIRE(r.fault.kind == wb::FaultKind::out_of_bounds);
    CHECK_HAS(r.fault.message,
              "thread (7,0,0) of block (0,0,0) read local memory (its stack) at offset 4000");
    CHECK_HAS(r.fault.message, "at line 4");
  }
  {
    // Dynamic shared memory smaller than the kernel indexes: the message points at the launch.
    Plan p;
    p.program = program_from(R"(extern "C" __global__ void k(int* c) {
  extern __shared__ int buf[];
  buf[threadIdx.x] = 1;
  c[threadIdx.x] = buf[threadIdx.x];
})");
    int C = p.buffer("c", std::vector<int32_t>(64));
    p.launch("k", {1, 1, 1}, {64, 1, 1}, {Plan::buf(C)}, 128);
    auto r = p.run();
    REQUIRE(r.fault.kind == wb::FaultKind::out_of_bounds);
    CHECK_HAS(r.fault.message,
              "the dynamic array buf has 128 bytes: is the launch's shared-memory size right?");
  }
}

TEST_CASE("fault: a barrier not every thread reaches is a deadlock naming both lines") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(const int* x, int* out) {
  int t = threadIdx.x;
  if (t < 32) {
    out[t] = 1;
    __syncthreads();
    out[t] += x[t];
  } else {
    __syncthreads();
    out[t] = 2;
  }
})");
  int X = p.buffer("x", std::vector<int32_t>(64, 1)), O = p.buffer("out", std::vector<int32_t>(64));
  p.launch("k", {1, 1, 1}, {64, 1, 1}, {Plan::buf(X), Plan::buf(O)});
  auto r = p.run();
  REQUIRE(r.fault.kind == wb::FaultKind::deadlock);
  CHECK_HAS(r.fault.message, "deadlock in block (0,0,0): its threads wait at different barriers");
  CHECK_HAS(r.fault.message, "at line 5");
  CHECK_HAS(r.fault.message, "at line 8");
}

TEST_CASE("barriers: threads that exited count as arrived (an early return before __syncthreads)") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out, int n) {
  __shared__ int s[128];
  int t = threadIdx.x;
  if (t >= n) return;
  s[t] = t;
  __syncthreads();
  out[t] = s[n - 1 - t];
})");
  int n = 100;
  int O = p.buffer("out", std::vector<int32_t>(128, -1));
  p.launch("k", {1, 1, 1}, {128, 1, 1}, {Plan::buf(O), Plan::val(n)});
  auto r = p.run();
  REQUIRE(!r.fault);
  auto out = p.get<int32_t>(O);
  for (int t = 0; t < n; ++t) CHECK(out[t] == n - 1 - t);
  CHECK(out[120] == -1);
}

TEST_CASE("fault: an endless loop stops at the instruction budget and says where it was") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(volatile int* flag, int* out) {
  int i = 0;
  while (flag[0] == 0) ++i;
  out[threadIdx.x] = i;
})");
  int F = p.buffer("flag", std::vector<int32_t>(1, 0)),
      O = p.buffer("out", std::vector<int32_t>(32));
  p.launch("k", {2, 1, 1}, {32, 1, 1}, {Plan::buf(F), Plan::buf(O)});
  p.rp.instruction_budget = 200000;
  auto r = p.run();
  REQUIRE(r.fault.kind == wb::FaultKind::timeout);
  CHECK_HAS(r.fault.message, "endless loop");
  CHECK_HAS(r.fault.message, "at line 3");
}

TEST_CASE("fault: the wall-clock limit stops a long run") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(volatile int* flag) {
  while (flag[0] == 0) {}
})");
  int F = p.buffer("flag", std::vector<int32_t>(1, 0));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(F)});
  p.rp.timeout_s = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  auto r = p.run();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(r.fault.kind == wb::FaultKind::timeout);
  CHECK(s < 3.0);
}

TEST_CASE("fault: a shared-memory race between warps names both lines") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t;
  out[t] = s[63 - t];
})");
  int O = p.buffer("out", std::vector<int32_t>(64));
  p.launch("k", {1, 1, 1}, {64, 1, 1}, {Plan::buf(O)});
  auto r = p.run();
  REQUIRE(r.fault.kind == wb::FaultKind::race);
  CHECK_HAS(r.fault.message, "shared-memory race in block (0,0,0) on s[");
  CHECK_HAS(r.fault.message, "at line 4");
  CHECK_HAS(r.fault.message, "at line 5");
  CHECK_HAS(r.fault.message, "with no __syncthreads() between them");
}

TEST_CASE("races: a barrier separates, and writing the same value is harmless") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out) {
  __shared__ int s[64];
  __shared__ int flag;
  int t = threadIdx.x;
  s[t] = t;
  flag = 1;
  __syncthreads();
  out[t] = s[63 - t] + flag;
})");
  int O = p.buffer("out", std::vector<int32_t>(64));
  p.launch("k", {1, 1, 1}, {64, 1, 1}, {Plan::buf(O)});
  SUBCASE("in order") {}
  SUBCASE("shuffled warps") {
    p.rp.shuffle_warps = true;
  }
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto out = p.get<int32_t>(O);
  for (int t = 0; t < 64; ++t) CHECK(out[t] == 64 - t);
}

TEST_CASE("races: shuffling warps finds a race that in-order execution hides") {
  // Warp 1 reads what warp 0 wrote without a barrier: in order (warp 0 first, to its end) the
  // read-after-write is seen on warp 1's read; shuffled, it is found either way round.
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t < 32) s[t] = t;
  else out[t] = s[t - 32];
})");
  int O = p.buffer("out", std::vector<int32_t>(64));
  p.launch("k", {1, 1, 1}, {64, 1, 1}, {Plan::buf(O)});
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    p.rp.shuffle_warps = true;
    p.rp.seed = seed;
    auto r = p.run();
    CHECK(r.fault.kind == wb::FaultKind::race);
  }
}

TEST_CASE("fault: __trap() and assert()") {
  {
    Plan p;
    p.program = program_from(R"(extern "C" __global__ void k(int* out) {
  out[threadIdx.x] = 1;
  if (blockIdx.x == 1 && threadIdx.x == 3) { printf("about to trap\n"); __trap(); }
})");
    int O = p.buffer("out", std::vector<int32_t>(64));
    p.launch("k", {2, 1, 1}, {32, 1, 1}, {Plan::buf(O)});
    auto r = p.run();
    REQUIRE(r.fault.kind == wb::FaultKind::trap);
    CHECK(r.fault.message ==
          "thread (3,0,0) of block (1,0,0) executed a trap (__trap()) at line 3");
    CHECK(r.printf_output == "about to trap\n"); // output printed before a fault is kept
  }
  {
    Plan p;
    p.program = program_from(R"(extern "C" __global__ void k(const int* x, int* out) {
  int t = threadIdx.x;
  assert(x[t] < 5);
  out[t] = x[t];
})");
    std::vector<int32_t> x(32, 1);
    x[9] = 7;
    int X = p.buffer("x", x), O = p.buffer("out", std::vector<int32_t>(32));
    p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(X), Plan::buf(O)});
    auto r = p.run();
    REQUIRE(r.fault.kind == wb::FaultKind::assertion);
    CHECK_HAS(r.fault.message, "assertion `x[t] < 5` failed");
    CHECK_HAS(r.fault.message, "thread (9,0,0) of block (0,0,0) at line 3");
    CHECK(r.fault.source_line == 3);
  }
}

TEST_CASE("fault: an unsupported instruction names the PTX line and the source line, and does not "
          "crash") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out) {
  int v;
  asm("suq.width.b32 %0, [%1];" : "=r"(v) : "l"(0ull));
  out[threadIdx.x] = v;
})");
  int O = p.buffer("out", std::vector<int32_t>(32));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O)});
  auto r = p.run();
  REQUIRE(r.fault.kind == wb::FaultKind::unsupported);
  CHECK_HAS(r.fault.message, "the simulator cannot run `suq.width.b32` (PTX line ");
  CHECK_HAS(r.fault.message, "from source line 3");
  CHECK(r.fault.source_line == 3);
}

TEST_CASE("fault: bad launches") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out) { out[threadIdx.x] = 1; })");
  int O = p.buffer("out", std::vector<int32_t>(32));
  SUBCASE("too many threads") {
    p.launch("k", {1, 1, 1}, {2048, 1, 1}, {Plan::buf(O)});
    CHECK(p.run().fault.kind == wb::FaultKind::launch_config);
  }
  SUBCASE("missing kernel") {
    p.launch("nope", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O)});
    auto r = p.run();
    CHECK(r.fault.kind == wb::FaultKind::launch_config);
    CHECK_HAS(r.fault.message, "no kernel named `nope`");
  }
  SUBCASE("wrong argument count") {
    p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O), Plan::val(1)});
    CHECK(p.run().fault.kind == wb::FaultKind::launch_config);
  }
  SUBCASE("too much shared memory") {
    p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O)}, 300000);
    CHECK(p.run().fault.kind == wb::FaultKind::launch_config);
  }
}

TEST_CASE("fault: unbounded recursion overflows the stack") {
  Plan p;
  p.program = program_from(R"(__device__ __noinline__ int down(int k, volatile int* sink) {
  if (k == 0) return 0;
  sink[0] = k;
  return down(k + 1, sink) + down(k + 2, sink); // not a tail call: real recursion
}
extern "C" __global__ void k(int* out, volatile int* sink) { out[threadIdx.x] = down(1, sink); })");
  int O = p.buffer("out", std::vector<int32_t>(32)), S = p.buffer("sink", std::vector<int32_t>(1));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O), Plan::buf(S)});
  auto r = p.run();
  REQUIRE(r.fault.kind == wb::FaultKind::out_of_resources);
  CHECK_HAS(r.fault.message, "overflowed its stack");
}

TEST_CASE("writers: the simulator records which thread wrote each element") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i % 3 != 0) out[n - 1 - i] = i;
})");
  int n = 200;
  int O = p.buffer("out", std::vector<int32_t>(n, -1));
  p.launch("k", {4, 1, 1}, {64, 1, 1}, {Plan::buf(O), Plan::val(n)});
  auto r = p.run();
  REQUIRE(!r.fault);
  REQUIRE(r.writers.count(O));
  auto& w = r.writers[O];
  REQUIRE(w.size() == size_t(n));
  for (int e = 0; e < n; ++e) {
    int i = n - 1 - e;
    if (i % 3 == 0) {
      CHECK(w[e].block.count() == 0); // never written
    } else {
      CHECK(w[e].block.x == uint32_t(i / 64));
      CHECK(w[e].thread.x == uint32_t(i % 64));
    }
  }
}
