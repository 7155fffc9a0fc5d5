// Counters against values worked out by hand on small kernels, plus divergence/reconvergence and
// warp-collective mask semantics.
#include "sim_test_util.hpp"

#include <doctest/doctest.h>

#include <numeric>

using namespace simtest;

namespace {

// One warp copying with a stride: out[i] = in[i * stride].
wb::RunResult strided(int stride, int threads = 32) {
  Plan p;
  p.program = program_from(read_file(corpus_path("27_strided_copy.cu")), "27_strided_copy.cu");
  int I = p.buffer("in", std::vector<float>(size_t(threads) * stride + 64, 1.0f));
  int O = p.buffer("out", std::vector<float>(threads));
  p.launch("strided_copy", {1, 1, 1}, {uint32_t(threads), 1, 1},
           {Plan::buf(I), Plan::buf(O), Plan::val(threads), Plan::val(stride)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  return r;
}

wb::RunResult bank(int stride) {
  Plan p;
  p.program = program_from(read_file(corpus_path("28_bank_conflict.cu")), "28_bank_conflict.cu");
  int O = p.buffer("out", std::vector<float>(32));
  p.launch("bank_conflict", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O), Plan::val(stride)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto out = p.get<float>(O);
  if (stride != 0)
    for (int t = 0; t < 32; ++t) CHECK(out[t] == float(t) + 1.0f);
  return r;
}

} // namespace

TEST_CASE("counters: coalescing in 32-byte sectors") {
  // A coalesced float load by 32 lanes touches 128 bytes: 4 sectors, 4 ideal. So does the store.
  auto r1 = strided(1);
  CHECK(counter(r1, "global_load_requests") == 1);
  CHECK(counter(r1, "global_load_sectors") == 4);
  CHECK(counter(r1, "global_load_ideal_sectors") == 4);
  CHECK(counter(r1, "global_store_requests") == 1);
  CHECK(counter(r1, "global_store_sectors") == 4);
  CHECK(counter(r1, "bytes_loaded") == 128);
  CHECK(counter(r1, "bytes_stored") == 128);
  // Stride 2 needs twice the sectors for the same useful bytes.
  auto r2 = strided(2);
  CHECK(counter(r2, "global_load_sectors") == 8);
  CHECK(counter(r2, "global_load_ideal_sectors") == 4);
  // Stride 8 floats = 32 bytes: every lane its own sector.
  auto r8 = strided(8);
  CHECK(counter(r8, "global_load_sectors") == 32);
  // 20 lanes: ceil(80 / 32) = 3 ideal sectors, and 3 touched.
  auto r20 = strided(1, 20);
  CHECK(counter(r20, "global_load_sectors") == 3);
  CHECK(counter(r20, "global_load_ideal_sectors") == 3);
  // Per source line: the load is on line 5.
  REQUIRE(r2.counters.by_line.count(5));
  CHECK(r2.counters.by_line.at(5).at("global_load_sectors") == 8);
  CHECK(counter(r1, "max_global_loads_per_thread") == 1);
  CHECK(counter(r1, "max_global_stores_per_thread") == 1);
}

TEST_CASE("counters: shared-memory wavefronts and bank conflicts") {
  // Stride 1 and 33 hit 32 different banks: one wavefront for the store, one for the load.
  for (int s : {1, 33}) {
    CAPTURE(s);
    auto r = bank(s);
    CHECK(counter(r, "shared_wavefronts") == 2);
    CHECK(counter(r, "shared_bank_conflicts") == 0);
  }
  // Stride 32: every lane in bank 0, 32 different words: 32 wavefronts each, 31 of them extra.
  auto r = bank(32);
  CHECK(counter(r, "shared_wavefronts") == 64);
  CHECK(counter(r, "shared_bank_conflicts") == 62);
  // Stride 2: two lanes per bank: 2 wavefronts each.
  auto r2 = bank(2);
  CHECK(counter(r2, "shared_wavefronts") == 4);
  CHECK(counter(r2, "shared_bank_conflicts") == 2);
  // Stride 0: all lanes the same word: a broadcast, one wavefront (the store: one word too).
  auto r0 = bank(0);
  CHECK(counter(r0, "shared_wavefronts") == 2);
}

TEST_CASE("counters: 8- and 16-byte shared accesses are served per half and quarter warp") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(double* out, float4* out4) {
  __shared__ double d[64];
  __shared__ float4 v[64];
  int t = threadIdx.x;
  d[t] = t;
  v[t] = make_float4(t, t, t, t);
  __syncwarp();
  out[t] = d[t];
  out4[t] = v[t];
})");
  int O = p.buffer("out", std::vector<double>(32)), O4 = p.buffer("out4", std::vector<float>(128));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O), Plan::buf(O4)});
  auto r = p.run();
  REQUIRE(!r.fault);
  // doubles: 2 wavefronts per access (x2: store + load); float4: 4 per access.
  CHECK(counter(r, "shared_wavefronts") == 2 * 2 + 2 * 4);
  CHECK(counter(r, "shared_bank_conflicts") == 0);
  // float4 global stores: 32 lanes x 16 bytes = 512 bytes = 16 sectors.
  CHECK(counter(r, "global_store_sectors") == 8 + 16);
}

TEST_CASE("counters: instructions, FLOPs and efficiency") {
  Plan p;
  p.program = program_from(read_file(corpus_path("02_saxpy.cu")), "02_saxpy.cu");
  int n = 1000;
  int X = p.buffer("x", std::vector<float>(n, 1.0f)),
      Y = p.buffer("y", std::vector<float>(n, 2.0f));
  p.launch("saxpy", {4, 1, 1}, {256, 1, 1},
           {Plan::val<int32_t>(n), Plan::val(3.0f), Plan::buf(X), Plan::buf(Y)});
  auto r = p.run();
  REQUIRE(!r.fault);
  CHECK(counter(r, "flops_f32") == 2.0 * n); // one FMA per element
  CHECK(counter(r, "warp_instructions") > 0);
  CHECK(counter(r, "thread_instructions") <= 32 * counter(r, "warp_instructions"));
  double eff = counter(r, "active_lane_efficiency");
  CHECK(eff > 0.8);
  CHECK(eff < 1.0); // the last warp of the last block is partly idle past n
  CHECK(counter(r, "global_load_requests") ==
        2 * 32); // x and y: 32 warps have work (1000 / 32 = 31.25)
  CHECK(counter(r, "max_global_loads_per_thread") == 2);

  Plan q;
  q.program = program_from(read_file(corpus_path("20_math.cu")), "20_math.cu");
  int m = 64;
  int Xm = q.buffer("x", std::vector<float>(m, 0.5f)),
      Om = q.buffer("out", std::vector<float>(5 * m)), Dm = q.buffer("d", std::vector<double>(m));
  q.launch("math_funcs", {1, 1, 1}, {64, 1, 1},
           {Plan::buf(Xm), Plan::buf(Om), Plan::buf(Dm), Plan::val(m)});
  auto rq = q.run();
  REQUIRE(!rq.fault);
  CHECK(counter(rq, "special_ops") >= 2.0 * m); // at least __expf's ex2 and rsqrtf's rsqrt
  CHECK(counter(rq, "flops_f64") > 0);
}

TEST_CASE("counters: tensor FLOPs and atomics") {
  Plan p;
  p.program = program_from(read_file(corpus_path("19_wmma.cu")), "19_wmma.cu");
  int K = 32;
  int A = p.buffer("A", std::vector<uint16_t>(16 * K)),
      B = p.buffer("B", std::vector<uint16_t>(16 * K)), C = p.buffer("C", std::vector<float>(256));
  p.launch("wmma_gemm", {1, 1, 1}, {32, 1, 1},
           {Plan::buf(A), Plan::buf(B), Plan::buf(C), Plan::val(K)});
  auto r = p.run();
  REQUIRE(!r.fault);
  CHECK(counter(r, "flops_tensor") == 2.0 * 16 * 16 * K);
}

TEST_CASE("divergence: if/else and loops of different lengths reconverge") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(unsigned* masks, int* out) {
  int t = threadIdx.x;
  int v = 0;
  if (t & 1) {
    for (int i = 0; i < t; ++i) v += i;
  } else {
    v = -t;
    if (t < 8) v *= 3;
  }
  masks[t] = __activemask(); // reconverged: every lane
  out[t] = v;
})");
  int M = p.buffer("masks", std::vector<uint32_t>(32)),
      O = p.buffer("out", std::vector<int32_t>(32));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(M), Plan::buf(O)});
  auto r = p.run();
  REQUIRE(!r.fault);
  auto masks = p.get<uint32_t>(M);
  auto out = p.get<int32_t>(O);
  for (int t = 0; t < 32; ++t) {
    CHECK(masks[t] == 0xffffffffu);
    int v = (t & 1) ? t * (t - 1) / 2 : (t < 8 ? -3 * t : -t);
    CHECK(out[t] == v);
  }
  CHECK(counter(r, "divergent_branches") >= 2);
}

TEST_CASE("warp collectives: partial masks and shuffles inside divergent code") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out, unsigned* b) {
  int t = threadIdx.x;
  int v = t * 10;
  if (t < 16) {
    v = __shfl_xor_sync(0x0000ffffu, v, 1);       // within the lower half only
    b[t] = __ballot_sync(0x0000ffffu, t & 1);
  } else {
    v = __shfl_down_sync(0xffff0000u, v, 2, 16); // a 16-lane segment
    b[t] = __ballot_sync(0xffff0000u, t > 20);
  }
  out[t] = v;
})");
  int O = p.buffer("out", std::vector<int32_t>(32)), B = p.buffer("b", std::vector<uint32_t>(32));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O), Plan::buf(B)});
  auto r = p.run();
  REQUIRE(!r.fault);
  CHECK(r.warnings.empty());
  auto out = p.get<int32_t>(O);
  auto b = p.get<uint32_t>(B);
  for (int t = 0; t < 16; ++t) {
    CHECK(out[t] == (t ^ 1) * 10);
    CHECK(b[t] == 0xaaaau);
  }
  for (int t = 16; t < 32; ++t) {
    CHECK(out[t] == (t + 2 < 32 ? (t + 2) * 10 : t * 10));
    CHECK(b[t] == 0xffe00000u);
  }
}

TEST_CASE("warp collectives: a full-mask shuffle waits for lanes still on their way") {
  // The odd lanes take a longer path to the same __shfl_sync: it waits for them and exchanges
  // values between all 32 lanes.
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(const int* x, int* out) {
  int t = threadIdx.x;
  int v = t;
  if (t & 1)
    for (int i = 0; i < x[t]; ++i) v += 100;
  v = __shfl_sync(0xffffffffu, v, (t + 1) & 31);
  out[t] = v;
})");
  int X = p.buffer("x", std::vector<int32_t>(32, 2)), O = p.buffer("out", std::vector<int32_t>(32));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(X), Plan::buf(O)});
  auto r = p.run();
  REQUIRE(!r.fault);
  CHECK(r.warnings.empty());
  auto out = p.get<int32_t>(O);
  for (int t = 0; t < 32; ++t) {
    int s = (t + 1) & 31;
    CHECK(out[t] == s + ((s & 1) ? 200 : 0));
  }
}

TEST_CASE(
    "warp collectives: shuffles at two different call sites are undefined and get a warning") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out) {
  int t = threadIdx.x;
  int v;
  if (t & 1) v = __shfl_sync(0xffffffffu, t * 2, (t + 1) & 31);
  else v = __shfl_sync(0xffffffffu, t * 2 + 1000, (t + 1) & 31);
  out[t] = v;
})");
  int O = p.buffer("out", std::vector<int32_t>(32));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O)});
  auto r = p.run();
  REQUIRE(!r.fault);
  REQUIRE(!r.warnings.empty());
  CHECK(r.warnings[0].find("their values are undefined") != std::string::npos);
}

TEST_CASE("atomics: global atomics stay atomic with blocks on several threads") {
  Plan p;
  p.program =
      program_from(R"(extern "C" __global__ void k(unsigned* c, float* f, unsigned long long* u) {
  for (int i = 0; i < 20; ++i) {
    atomicAdd(c, 1u);
    atomicAdd(f, 1.0f);
    atomicAdd(u, 3ull);
  }
})");
  int C = p.buffer("c", std::vector<uint32_t>(1)), F = p.buffer("f", std::vector<float>(1)),
      U = p.buffer("u", std::vector<uint64_t>(1));
  p.launch("k", {64, 1, 1}, {128, 1, 1}, {Plan::buf(C), Plan::buf(F), Plan::buf(U)});
  auto r = p.run(4);
  REQUIRE(!r.fault);
  CHECK(p.get<uint32_t>(C)[0] == 64u * 128 * 20);
  CHECK(p.get<float>(F)[0] == float(64 * 128 * 20));
  CHECK(p.get<uint64_t>(U)[0] == 3ull * 64 * 128 * 20);
}

TEST_CASE("printf output is bounded and marked truncated") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k() {
  printf("thread %d of block %d says a fairly long line of text to fill the buffer\n", threadIdx.x, blockIdx.x);
})");
  p.launch("k", {16, 1, 1}, {256, 1, 1}, {});
  auto r = p.run();
  REQUIRE(!r.fault);
  CHECK(r.printf_truncated);
  CHECK(r.printf_output.size() <= 64 * 1024 + 64); // the bound, then "… N more bytes not shown"
  CHECK(r.printf_output.find(" more bytes not shown\n") != std::string::npos);
  CHECK(r.printf_output.rfind("thread 0 of block 0 says", 0) == 0);
}

TEST_CASE("counters: the Nsight Compute comparison set (figures for docs/simulator.md)") {
  // The five kernels the GPU run compares with ncu's l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  // and l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum, at the sizes given here.
  auto run = [](const char* file, const char* kernel, wb::Dim3 grid, wb::Dim3 block, auto setup) {
    Plan p;
    p.program = program_from(read_file(corpus_path(file)), file);
    setup(p);
    auto args = p.launches.back().args;
    p.launches.clear();
    p.launch(kernel, grid, block, args);
    auto r = p.run();
    INFO(r.fault.message);
    REQUIRE(!r.fault);
    return r;
  };
  const int n = 1 << 18;
  auto copy = [&](int stride) {
    return run("27_strided_copy.cu", "strided_copy", {n / 256, 1, 1}, {256, 1, 1}, [&](Plan& p) {
      int I = p.buffer("in", std::vector<float>(size_t(n) * stride, 1.0f)),
          O = p.buffer("out", std::vector<float>(n));
      p.launch("strided_copy", {}, {},
               {Plan::buf(I), Plan::buf(O), Plan::val(n), Plan::val(stride)});
    });
  };
  auto r1 = copy(1), r2 = copy(2), r4 = copy(4);
  CHECK(counter(r1, "global_load_sectors") == n / 8);
  CHECK(counter(r2, "global_load_sectors") == n / 4);
  CHECK(counter(r4, "global_load_sectors") == n / 2);
  const int R = 1024, C = 1024;
  auto tn = run("11_transpose_naive.cu", "transpose_naive", {C / 16, R / 16, 1}, {16, 16, 1},
                [&](Plan& p) {
                  int I = p.buffer("in", std::vector<float>(size_t(R) * C)),
                      O = p.buffer("out", std::vector<float>(size_t(R) * C));
                  p.launch("transpose_naive", {}, {},
                           {Plan::buf(I), Plan::buf(O), Plan::val(R), Plan::val(C)});
                });
  // Reads: each half-warp reads 16 consecutive floats (2 sectors); writes: the two half-warps
  // write rows r and r + 1, neighbours in memory: 16 sectors per warp.
  CHECK(counter(tn, "global_load_sectors") == double(R) * C / 8);
  CHECK(counter(tn, "global_store_sectors") == double(R) * C / 2); // rows r, r+1 share sectors
  auto tp = run("10_transpose_padded.cu", "transpose_padded", {C / 32, R / 32, 1}, {32, 8, 1},
                [&](Plan& p) {
                  int I = p.buffer("in", std::vector<float>(size_t(R) * C)),
                      O = p.buffer("out", std::vector<float>(size_t(R) * C));
                  p.launch("transpose_padded", {}, {},
                           {Plan::buf(I), Plan::buf(O), Plan::val(R), Plan::val(C)});
                });
  CHECK(counter(tp, "global_load_sectors") == double(R) * C / 8);
  CHECK(counter(tp, "global_store_sectors") == double(R) * C / 8);
  CHECK(counter(tp, "shared_bank_conflicts") == 0);
  auto bc = run("28_bank_conflict.cu", "bank_conflict", {256, 1, 1}, {256, 1, 1}, [&](Plan& p) {
    int O = p.buffer("out", std::vector<float>(256 * 256));
    p.launch("bank_conflict", {}, {}, {Plan::buf(O), Plan::val(32)});
  });
  // 256 blocks x 8 warps, one store and one load each, 31 extra wavefronts per access.
  CHECK(counter(bc, "shared_bank_conflicts") == 256.0 * 8 * 2 * 31);
  MESSAGE("coalesced copy n=2^18: " << counter(r1, "global_load_sectors")
                                    << " load sectors; stride 2: "
                                    << counter(r2, "global_load_sectors")
                                    << "; stride 4: " << counter(r4, "global_load_sectors"));
  MESSAGE("naive transpose 1024^2 (16x16): "
          << counter(tn, "global_load_sectors") << " load sectors, "
          << counter(tn, "global_store_sectors") << " store sectors");
  MESSAGE("padded transpose 1024^2 (32x8): "
          << counter(tp, "global_load_sectors") << " load sectors, "
          << counter(tp, "shared_bank_conflicts") << " bank conflicts");
  MESSAGE("bank conflict stride 32, 256 blocks of 256: "
          << counter(bc, "shared_bank_conflicts") << " bank conflicts ("
          << counter(bc, "shared_wavefronts") << " wavefronts)");
}

TEST_CASE("divergence: a spin lock contended by the lanes of one warp makes progress") {
  // Volta's independent thread scheduling runs this; pure min-pc scheduling would spin forever in
  // the lanes that lost the lock while the holder waits further on.
  Plan p;
  p.program = program_from(R"(__device__ int lock;
extern "C" __global__ void k(int* counter) {
  while (atomicCAS(&lock, 0, 1) != 0) {
  }
  *counter += 1; // the holder runs this at a higher pc than the spinning lanes
  __threadfence();
  atomicExch(&lock, 0);
})");
  int C = p.buffer("counter", std::vector<int32_t>(1, 0));
  p.launch("k", {2, 1, 1}, {64, 1, 1}, {Plan::buf(C)});
  p.rp.instruction_budget = 50'000'000;
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  CHECK(p.get<int32_t>(C)[0] == 128);
}
