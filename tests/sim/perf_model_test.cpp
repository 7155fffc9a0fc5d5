// The performance model's orderings and shapes, on the simulator (no GPU): what a learner without
// one is told about speed must at least rank kernels the way the H200 does. The figures each test
// leans on were measured on the H200 (bench/perfmodel/data/h200-corpus, docs/perf-model.md).
#include "common/puzzle_suite.hpp"
#include "core/perf/explain.hpp"
#include "core/perf/predict.hpp"
#include "core/roofline.hpp"
#include "core/store.hpp"
#include "core/tune.hpp"

#include <cmath>
#include <regex>

using namespace wb;

namespace {

std::string read(const std::string& rel) {
  std::string s = test::read_file(fs::path(WARPBOOK_SOURCE_ROOT) / rel);
  REQUIRE_MESSAGE(!s.empty(), "cannot read " << rel);
  return s;
}

// The source with one tunable's @tune value replaced (or added).
std::string with_tune(const std::string& src, const std::string& name, int64_t value) {
  return source_with_tunables(src, {{name, value}});
}

perf::Prediction predict_source(const std::string& puzzle, const std::string& source,
                                const std::string& name = "kernel.cu",
                                const std::string& gpu = "h200") {
  const Puzzle* pz = test::builtin_catalog().find_puzzle(puzzle);
  REQUIRE_MESSAGE(pz, "no puzzle " << puzzle);
  std::vector<Diagnostic> diags;
  const auto tune = resolve_tunables(*pz, source, name, diags);
  for (auto& d : diags) FAIL_CHECK(d.str()); // every @tune line the tests write is allowed
  const perf::Machine m = perf::machine_for(*find_profile(gpu));
  perf::Prediction p = perf::predict(*pz, source, name, tune, m);
  REQUIRE_MESSAGE(p.ok, puzzle << ": " << p.error);
  // Every sentence of "why this speed" reads its figures as the window does: "2.67 M clocks",
  // never "2.67e+06 clocks" (core/format_figure.hpp).
  static const std::regex e_notation(R"(\d[eE][+-]\d)");
  std::vector<std::string> shown = {p.method};
  for (auto& f : p.factors) shown.push_back(f.text);
  for (auto& l : p.launches) shown.push_back(perf::launch_text(l));
  for (auto& n : p.lines) shown.push_back(n.text);
  for (auto& t : shown) CHECK_MESSAGE(!std::regex_search(t, e_notation), name << ": " << t);
  MESSAGE(fmt::format("{} {}: {:.1f} us, limiter {}", puzzle, name, p.us,
                      p.factors.empty() ? "-" : p.factors[0].key));
  return p;
}

perf::Prediction predict_file(const std::string& puzzle, const std::string& rel,
                              const std::string& gpu = "h200") {
  return predict_source(puzzle, read(rel), rel, gpu);
}

bool names(const perf::Prediction& p, std::initializer_list<const char*> keys, size_t top = 2) {
  for (size_t i = 0; i < std::min(top, p.factors.size()); ++i)
    for (const char* k : keys)
      if (p.factors[i].key == k) return true;
  return false;
}

} // namespace

TEST_CASE("perf model: demo 91's time rises with STRIDE up to 8 sectors per request") {
  // H200: 263, 378, 736, 1467, 2068, 3146 us for STRIDE 1..32. Past 8 every lane has its own
  // sector and the GPU slows less steeply (whole lines stop being shared, not sectors).
  const std::string src = read("puzzles/91-demo-strided-copy/starter.cu");
  std::vector<double> us;
  for (int s : {1, 2, 4, 8, 16, 32})
    us.push_back(predict_source("91", with_tune(src, "STRIDE", s)).us);
  for (size_t i = 1; i < 4; ++i) CHECK(us[i] > 1.2 * us[i - 1]); // the H200: 1.44x at the least
  CHECK(us[4] >= us[3]);
  CHECK(us[5] >= us[4]);
  CHECK(us[5] < 4 * us[3]); // sectors stop multiplying once each lane has its own
  // Lesson 0003's table prints these predictions (its figures.toml keeps it true).
}

TEST_CASE("perf model: one thread per row is predicted far slower than the softmax solution") {
  // H200: reference 11768 us, solution 132.9 us (89x).
  const auto ref = predict_file("03-softmax", "puzzles/03-softmax/reference.cu");
  const auto sol = predict_file("03-softmax", "solutions/03-softmax.cu");
  CHECK(ref.us > 20 * sol.us);
}

TEST_CASE("perf model: BLOCK=32 is predicted slower than BLOCK=256 for the vector add") {
  // H200: 1263.7 us with 32 threads a block (32 blocks a SM, one warp each), 236 us with 256.
  const std::string src = read("puzzles/01-vector-add/reference.cu");
  const auto b32 = predict_source("01", with_tune(src, "BLOCK", 32));
  const auto b256 = predict_source("01", with_tune(src, "BLOCK", 256));
  CHECK(b32.us > 2 * b256.us);
  CHECK(names(b32, {"occupancy", "latency", "dispatch"}));
}

TEST_CASE("perf model: shared float atomics queue on their word, one add per trip") {
  // A row sum adding every thread's partial into one __shared__ float: a CAS loop, one swap a
  // word per trip. With 512-thread blocks a row's word takes 512 adds and an SM holds 4 words;
  // with 256, 256 adds and 8 words (the probe's shape): a quarter of the time, where an SM-wide
  // rate a lane gives a half. H100: 371 us measured at BLOCK=512 (first_attempts/f13).
  const std::string src = read("bench/perfmodel/first_attempts/f13-rowsum-shared-atomic.cu");
  const auto b512 = predict_source("02-row-sum", with_tune(src, "BLOCK", 512), "f13", "h100-sxm");
  const auto b256 = predict_source("02-row-sum", with_tune(src, "BLOCK", 256), "f13", "h100-sxm");
  CHECK(b512.us > 2.5 * b256.us);
  CHECK(b512.us > 371 / 1.25);
  CHECK(b512.us < 371 * 1.25);
  CHECK(names(b512, {"atomics"}, 1));
}

TEST_CASE("perf model: float adds of a block's warps into one word wait for each other") {
  // A row sum where every thread adds its partial into the row's word (first_attempts/f09):
  // 231 us on an H100, where the float rate with a word per warp (46.4 G lanes/s) would give
  // under 100. Its blocks' warps share the word, so its lanes go at the rate probed for that
  // pattern (atomic_row_f32, 7.61 G lanes/s).
  const auto p = predict_file(
      "02-row-sum", "bench/perfmodel/first_attempts/f09-rowsum-atomic-per-thread.cu", "h100-sxm");
  CHECK(p.us > 231 / 1.25);
  CHECK(p.us < 231 * 1.25);
  CHECK(names(p, {"atomics"}, 1));
}

TEST_CASE("perf model: a grid one block longer than a wave shows a tail") {
  // H200: 251.9 us with 264 blocks (2 a SM), 266.8 us with 265.
  const auto full = predict_file("08-dot-product", "bench/perfmodel/corpus/v08-dot-grid264.cu");
  const auto over = predict_file("08-dot-product", "bench/perfmodel/corpus/v08-dot-grid265.cu");
  CHECK(over.us > full.us);
  bool tail = false;
  for (auto& f : over.factors) tail |= f.key == "tail" && f.share > 0.02;
  CHECK_MESSAGE(tail, "the 265-block grid names its tail");
  for (auto& f : full.factors) CHECK_MESSAGE((f.key != "tail" || f.share < 0.02), f.text);
}

TEST_CASE("perf model: the bank-conflicted and the padded transpose differ") {
  // H200: 375.3 us without padding, 206.5 us with it.
  const auto nopad =
      predict_file("07-transpose", "bench/perfmodel/corpus/v07-transpose-smem-nopad.cu");
  const auto pad =
      predict_file("07-transpose", "bench/perfmodel/corpus/v07-transpose-smem-padded.cu");
  CHECK(nopad.us > 1.2 * pad.us);
  bool conflict_line = false;
  for (auto& f : nopad.factors) conflict_line |= f.key == "bank_conflicts" && f.line > 0;
  CHECK_MESSAGE(conflict_line, "the unpadded transpose names its bank conflicts on a line");
  for (auto& f : pad.factors) CHECK(f.key != "bank_conflicts");
}

TEST_CASE("perf model: a GEMM's steady L2 stream on a GPU with a slower L2") {
  // Puzzle 20's solution measured 308.6 us on an H100 and 309.2 on the H200
  // (bench/perfmodel/data/h100-curriculum2, h200-curriculum2): the H100's L2 reads 13%
  // slower on `warpbook probe`, and the GEMM does not notice. Served strictly at its average
  // share of the L2, each SM's k-step bursts queued behind one another: 381 us for the H100. The
  // share an SM left unused within the last L2 latency serves its next burst: 348 us.
  const auto h100 = predict_file(
      "20-mma-bf16-gemm", "bench/perfmodel/curriculum2/20-mma-one-barrier-a-kstep.cu", "h100-sxm");
  CHECK(h100.us < 1.15 * 308.6);
  CHECK(h100.us > 308.6 / 1.15);
  const auto h200 =
      predict_file("20-mma-bf16-gemm", "bench/perfmodel/curriculum2/20-mma-one-barrier-a-kstep.cu");
  CHECK(h200.us < 1.1 * 309.2);
  CHECK(h200.us > 309.2 / 1.1);
}

TEST_CASE("perf model: wmma fragment loads from padded rows are not bank conflicts") {
  // Puzzle 19's kernel loads its fragments with wmma.load from rows padded by 8 halves: one
  // wavefront per 128 bytes of fragment. Traced with 2-byte lanes, they read as "8-way bank
  // conflicts (8 wavefronts where 1 would do)", named at 71% of the time on three lines.
  const auto p = predict_file("19-wmma-gemm", "bench/perfmodel/curriculum2/19-wmma-ring-rolled.cu");
  for (auto& f : p.factors) CHECK_MESSAGE(f.key != "bank_conflicts", f.text);
  for (auto& n : p.lines) CHECK_MESSAGE(n.conflict_ways <= 1.05, n.line << ": " << n.text);
}

TEST_CASE("perf model: a conflicted store after the loop is charged its own wavefronts") {
  // Puzzle 24's split kernel stores each warp's state to shared memory once, after its loop, with
  // 2-way conflicts (16 lanes, float4 stores 32 bytes apart). Charging each such line the
  // load/store unit's whole time scaled by its conflict ratio put it at 14% of the time each;
  // its extra wavefronts take well under 1%.
  const auto p =
      predict_file("24-decode-attention", "bench/perfmodel/curriculum2/24-split-k-registers.cu");
  for (auto& f : p.factors)
    if (f.key == "bank_conflicts") CHECK_MESSAGE(f.share < 0.01, f.text);
  bool gutter = false; // the gutter still marks the conflicted lines
  for (auto& n : p.lines) gutter |= n.conflict_ways > 1.5;
  CHECK(gutter);
}

TEST_CASE("perf model: each designed limiter is named for a kernel built to have it") {
  // One kernel of the corpus per limiter (bench/perfmodel/corpus.toml says how each was built).
  struct Case {
    const char* puzzle;
    const char* file;
    std::initializer_list<const char*> keys;
  };
  const Case cases[] = {
      {"01-vector-add", "solutions/01-vector-add.cu", {"dram"}},
      {"01-vector-add",
       "bench/perfmodel/corpus/v01-vadd-block32.cu",
       {"latency", "occupancy", "dispatch"}},
      {"01-vector-add", "bench/perfmodel/corpus/v01-vadd-localmem.cu", {"local_memory", "l2"}},
      {"91-demo-strided-copy",
       "bench/perfmodel/corpus/v91-strided-copy-s8.cu",
       {"sectors", "dram"}},
      {"02-row-sum", "bench/perfmodel/corpus/v02-rowsum-atomic.cu", {"atomics"}},
      {"06-gelu-half2", "bench/perfmodel/corpus/v06-gelu-fp64.cu", {"fp64", "issue"}},
      {"06-gelu-half2", "bench/perfmodel/corpus/v06-gelu-quad-sfu.cu", {"sfu"}},
      {"06-gelu-half2", "bench/perfmodel/corpus/v06-gelu-series-fp32.cu", {"fp32", "issue"}},
      {"07-transpose",
       "bench/perfmodel/corpus/v07-transpose-smem-nopad.cu",
       {"bank_conflicts", "lsu", "shared"}},
      {"08-dot-product", "bench/perfmodel/corpus/v08-dot-grid265.cu", {"tail", "dram"}},
      {"17-tiled-sgemm", "bench/perfmodel/corpus/v17-sgemm-smem16.cu", {"lsu", "shared"}},
      // The cause right after the unit it fills: 8x the sectors make the LSU and L2 busy.
      {"04-matrix-add-2d", "bench/perfmodel/corpus/v04-matadd-colwalk.cu", {"sectors"}},
      {"06-gelu-half2", "bench/perfmodel/corpus/v06-gelu-divergent.cu", {"divergence"}},
      {"02-row-sum", "bench/perfmodel/corpus/v02-rowsum-tree1024.cu", {"barrier"}},
      // DRAM 69% busy on the H200 with 12% occupancy: latency goes first, not DRAM.
      {"02-row-sum", "bench/perfmodel/corpus/v02-rowsum-bigsmem.cu", {"latency", "occupancy"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    const auto p = predict_file(c.puzzle, c.file);
    std::string got;
    for (size_t i = 0; i < std::min<size_t>(2, p.factors.size()); ++i)
      got += p.factors[i].key + " ";
    CHECK_MESSAGE(names(p, c.keys), c.file << " names " << got);
  }
}

TEST_CASE(
    "perf model: a histogram's hot bin is charged the integer one-word rate, a lane at a time") {
  // f11 sends about half of its 1.07 G byte counts to bin 0 with per-lane addresses, so nothing is
  // aggregated per warp. On an H100 it measures 493 ms (bench/perfmodel/data/h100-first-attempts),
  // 0.92 ns a hot lane. At the float one-address rate (1.76 ns a lane) the model said 948 ms; at
  // the u32 one (32 / 43.6 G/s, 0.73 ns an operation) it says about 396.
  const auto p = predict_file(
      "10-histogram", "bench/perfmodel/first_attempts/f11-hist-global-atomic-chunk.cu", "h100-sxm");
  CHECK(p.us > 350e3);
  CHECK(p.us < 493e3);
  CHECK(names(p, {"atomics"}, 1));
}

TEST_CASE("perf model: warps that exit free their slots, warps at a barrier do not") {
  // H200 (bench/perfmodel/results/h200-exited-warps.md): puzzle 09's reference, whose
  // idle threads return, 2679 us at 256 threads per block; the same kernel with them waiting at
  // a __syncthreads() 8215 us (3.1x), and 2267 us for both at 32 threads per block.
  const std::string exit_src = read("puzzles/09-argmax-rows/reference.cu");
  const std::string stay_src = read("bench/perfmodel/experiments/one-thread-per-row/r09-stay.cu");
  const auto exit256 = predict_source("09-argmax-rows", with_tune(exit_src, "BLOCK", 256));
  const auto stay256 = predict_source("09-argmax-rows", with_tune(stay_src, "BLOCK", 256));
  const auto stay32 = predict_source("09-argmax-rows", with_tune(stay_src, "BLOCK", 32));
  CHECK(stay256.us > 2 * exit256.us);
  CHECK(stay256.us > 2 * stay32.us);
  REQUIRE(!exit256.launches.empty());
  CHECK(exit256.launches[0].resident == 8);
  CHECK(exit256.launches[0].resident_running > 8);
  CHECK(stay256.launches[0].resident_running == 8);
}

TEST_CASE("perf model: cp.async reads global memory: a copy staged through it moves what a plain "
          "copy moves") {
  // cp.async writes no register, like a store, but it is a load from global memory. Counted as a
  // store, each 4-byte copy was a partial-sector write read back first: twice the DRAM bytes of
  // the plain copy (a 64x64-tile SGEMM staged with cp.async was predicted 1.9x slow with 17 GB of
  // DRAM traffic where ncu on the H200 counts 0.92 GB).
  const std::string plain = read("puzzles/90-demo-coalesced-copy/starter.cu");
  const std::string staged = R"(
extern "C" __global__ void coalesced_copy(const float* src, float* dst, int n) {
  __shared__ float tile[256];
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned d = (unsigned)__cvta_generic_to_shared(&tile[threadIdx.x]);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src + (i < n ? i : 0)),
               "r"(i < n ? 4 : 0) : "memory");
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  if (i < n) dst[i] = tile[threadIdx.x];
}
)";
  const auto a = predict_source("90-demo-coalesced-copy", plain, "plain.cu");
  const auto b = predict_source("90-demo-coalesced-copy", staged, "staged.cu");
  CHECK(b.dram_bytes > 0.9 * a.dram_bytes);
  CHECK(b.dram_bytes < 1.1 * a.dram_bytes);
  CHECK(b.us < 1.3 * a.us);
}

TEST_CASE("perf model: cp.async.wait_group N leaves the newest N groups in flight") {
  // Solution 24 keeps round r + 1 of its cp.async ring in flight while it waits for round r
  // (cp_wait<STAGES - 1>, STAGES = 2). A model that waits for every copy the warp has issued
  // gives the ring nothing: it comes out as slow as the register form, where the H200 measured
  // 519.6 and 510.7 us (the register form 536-543). Waiting for both rounds really must cost time:
  // that form has half the bytes in flight, as the register form has, which measured 3-4.5% slower
  // than the ring (the model says 2.6%: moves that only rename bits are free).
  const std::string src = read("solutions/24-decode-attention.cu");
  const std::string line = "cp_wait<STAGES - 1>();";
  const auto at = src.find(line);
  REQUIRE(at != std::string::npos);
  std::string all = src;
  all.replace(at, line.size(), "cp_wait<0>();");
  const perf::Prediction ring = predict_source("24-decode-attention", src, "ring.cu");
  const perf::Prediction drained = predict_source("24-decode-attention", all, "drained.cu");
  CHECK(ring.us < 1.12 * 519.58);
  CHECK(drained.us > 1.02 * ring.us);
}

TEST_CASE("perf model: a causal grid run longest tiles first is not extrapolated from its longest "
          "blocks") {
  // Solution 23 gives block x the query tile cdiv(S, BQ) - 1 - x: the first blocks the busiest SM
  // runs are the longest, and the last ones a sixteenth of that. The H200 measured 4139 us
  // (bench/perfmodel/data/h200-curriculum2); extrapolating every block from the first ones
  // predicts 11.8 ms.
  const perf::Prediction causal =
      predict_file("23-causal-flash-attention", "solutions/23-causal-flash-attention.cu");
  CHECK(causal.us < 1.5 * 4139);
  CHECK(causal.us > 4139 / 1.5);
}

TEST_CASE("perf model: blocks that exit at once are counted by a census, not replayed as work") {
  // Solution 24 with each working block taking F chunks and the other F - 1 blocks of every F
  // exiting at once: the same bytes and arithmetic whatever F is, and the H200 measured 510.9,
  // 510.8 and 510.6 us at F = 1, 2 and 4 (bench/perfmodel/data/h200-curriculum2). The busiest
  // SM's blocks, every 132nd of a grid whose rows are 16 blocks long, all fall on working blocks:
  // extrapolated from them alone, F = 2 and 4 come out at 1100 and 2074 us.
  const std::string src = read("bench/perfmodel/curriculum2/24-split-k-ring.cu");
  auto with_f = [&](int f) {
    std::string s = src;
    const std::string line = "#define FMAX 1";
    const auto at = s.find(line);
    REQUIRE(at != std::string::npos);
    return s.replace(at, line.size(), "#define FMAX " + std::to_string(f));
  };
  const perf::Prediction f1 = predict_source("24-decode-attention", with_f(1), "f1.cu");
  const perf::Prediction f4 = predict_source("24-decode-attention", with_f(4), "f4.cu");
  CHECK(f1.method.find("census") == std::string::npos); // no block exits: no census
  CHECK_MESSAGE(f4.method.find("192 of 256 blocks asked") != std::string::npos, f4.method);
  CHECK(f4.us < 1.3 * f1.us);
  CHECK(f4.us < 1.5 * 510.6);
}

// The simulator runs PTX, before ptxas allocates registers, so spills never reach the replay. The
// prediction must at least say where ptxas spilled: solution 24 squeezed to 6 blocks of 128
// threads per SM (80 registers) measured 1140 us on the H200 against 537 us, and the model says
// 480 us for it (bench/perfmodel/data/h200-curriculum2).
TEST_CASE("perf model: a kernel squeezed into fewer registers says that ptxas spilled") {
  const std::string src = read("solutions/24-decode-attention.cu");
  const std::string squeezed =
      std::regex_replace(src, std::regex(R"(__launch_bounds__\(BLOCK, 512 / BLOCK\))"),
                         "__launch_bounds__(BLOCK, 768 / BLOCK)");
  REQUIRE(squeezed != src);
  const auto base = predict_source("24-decode-attention", src, "base.cu");
  const auto tight = predict_source("24-decode-attention", squeezed, "squeezed.cu");
  REQUIRE(!base.launches.empty());
  REQUIRE(!tight.launches.empty());
  const auto& b = base.launches[0];
  const auto& t = tight.launches[0];
  CHECK(t.registers < b.registers);
  CHECK(t.spill_stores > b.spill_stores);
  CHECK(t.spill_loads > b.spill_loads);
  const std::string text = perf::launch_text(t);
  CHECK(text.find("ptxas spilled registers") != std::string::npos);
  CHECK(text.find(perf::bytes_text(t.spill_stores) + " of stores") != std::string::npos);
  // A kernel ptxas did not spill says nothing of the kind.
  const auto clean = predict_file("01-vector-add", "solutions/01-vector-add.cu");
  REQUIRE(!clean.launches.empty());
  CHECK(clean.launches[0].spill_stores == 0);
  CHECK(perf::launch_text(clean.launches[0]).find("spilled") == std::string::npos);
}

TEST_CASE(
    "perf model: fp8 mma.sync costs Hopper its emulation, f16 mma on unpacked codes does not") {
  // sm_90 has no FP8 mma.sync: ptxas emits F2FP, two HMMA and 4 FADD per m16n8k32. On the H200
  // (bench/perfmodel/data/h200-curriculum2) the same loop took 486 us that way and 284 us with
  // each fragment unpacked once into f16 mma.
  const std::string fp8 = with_tune(
      with_tune(with_tune(read("bench/perfmodel/curriculum2/33-fp8-mma-k32-unrolled.cu"), "BK", 64),
                "STAGES", 3),
      "SMEM", 49152);
  const auto emulated = predict_source("33-fp8-gemm", fp8, "fp8-mma.cu");
  const auto unpacked =
      predict_file("33-fp8-gemm", "bench/perfmodel/curriculum2/33-fp8-unpacked-f16-mma.cu");
  CHECK(emulated.us > 1.2 * unpacked.us);
  REQUIRE(!emulated.factors.empty());
  CHECK(emulated.factors[0].key == "tensor");
}

// wgmma.mma_async is charged at the probe's wgmma rate (895 TFLOP/s f16 on our H200, FP8 twice
// that), not mma.sync's, and wgmma.wait_group waits for its groups' completion. A synthetic FP8
// GEMM main loop on puzzle 33's launch: one warpgroup per 64 x 256 tile, tiles staged once (so
// only the tensor cores count), K / 32 m64n256k32 in groups of four, one group left in flight.
// The H200 ran it in 143.5 and 144.3 us (`warpbook run --time-wrong`: its answer is wrong by
// design), 1.87x its tensor-bound 76.8 us. The model says 125 us; if a wgmma's issue waited for
// the tensor pipe to be free, it would say 101.
TEST_CASE("perf model: wgmma runs at the wgmma rate, and its wait_group waits") {
  const perf::Machine m = perf::machine_for(*find_profile("h200"));
  CHECK(m.wgmma_flops_clk_sm == doctest::Approx(895281.0 / (132 * 1.98)).epsilon(1e-6));
  const std::string src = R"(// @tune BM=64
// @tune BN=256
// @tune WM=64
// @tune WN=64
#include <cuda_fp8.h>
#include <cuda_bf16.h>
typedef unsigned long long u64;
__device__ __forceinline__ u64 desc(unsigned a) {
  return (u64)((a & 0x3ffffu) >> 4) | (1ull << 16) | ((u64)(1024 >> 4) << 32) | (1ull << 62);
}
#define R8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), \
    "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
extern "C" __global__ void __launch_bounds__(128) fp8_gemm(const __nv_fp8_e4m3* A,
    const __nv_fp8_e4m3* B, const float* a_scale, const float* b_scale, __nv_bfloat16* C, int M,
    int N, int K) {
  __shared__ __align__(1024) unsigned char sA[64 * 128], sB[256 * 128];
  const int t = threadIdx.x, m0 = blockIdx.y * 64, n0 = blockIdx.x * 256;
  for (int i = t; i < 64 * 8; i += 128)
    *(uint4*)(sA + i * 16) = *(const uint4*)((const unsigned char*)A + (size_t)(m0 + i / 8) * K + (i % 8) * 16);
  for (int i = t; i < 256 * 8; i += 128)
    *(uint4*)(sB + i * 16) = *(const uint4*)((const unsigned char*)B + (size_t)(n0 + i / 8) * K + (i % 8) * 16);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const unsigned a0 = (unsigned)__cvta_generic_to_shared(sA), b0 = (unsigned)__cvta_generic_to_shared(sB);
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.f;
  for (int k = 0; k < K / 32; k += 4) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int s = 0; s < 4; ++s)
      asm volatile("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1;"
                   : R8(0), R8(8), R8(16), R8(24), R8(32), R8(40), R8(48), R8(56), R8(64), R8(72),
                     R8(80), R8(88), R8(96), R8(104), R8(112), R8(120)
                   : "l"(desc(a0 + 32 * s)), "l"(desc(b0 + 32 * s)));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  const int row = m0 + 16 * (t / 32) + (t % 32) / 4;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int col = n0 + 8 * j + 2 * (t % 4);
    C[(size_t)row * N + col] = __float2bfloat16(d[4 * j] * a_scale[row] * b_scale[col]);
    C[(size_t)row * N + col + 1] = __float2bfloat16(d[4 * j + 1]);
    C[(size_t)(row + 8) * N + col] = __float2bfloat16(d[4 * j + 2]);
    C[(size_t)(row + 8) * N + col + 1] = __float2bfloat16(d[4 * j + 3]);
  }
}
)";
  const auto p = predict_source("33-fp8-gemm", src, "wgmma-loop.cu");
  // 2 * 4096^3 FLOPs at twice the f16 wgmma rate: 70 us.
  const double ideal_us = 2.0 * 4096 * 4096 * 4096 / (2 * 895281e9) * 1e6;
  CHECK(p.us > 0.95 * ideal_us);
  CHECK(p.us > 143.9 / 1.25);
  CHECK(p.us < 143.9 * 1.25);
  REQUIRE(!p.factors.empty());
  CHECK(p.factors[0].key == "tensor");
}

TEST_CASE("perf model: a wgmma kernel that ptxas serialized says so, and is timed that way") {
  // ptxas (C7514) made every wgmma of wgmma-k32.cu wait for the one before: the adds into f32
  // read the other accumulator while a wgmma is in flight. The H200 measured 235.8 us for it and
  // 300.0 us for the version that waits by itself (bench/perfmodel/data/h200-curriculum2).
  const auto serial =
      predict_file("33-fp8-gemm", "bench/perfmodel/experiments/fp8-wgmma/wgmma-k32.cu");
  REQUIRE(!serial.launches.empty());
  const auto& l = serial.launches[0];
  CHECK(l.wgmma_serialized.find("accumulator registers") != std::string::npos);
  CHECK(perf::launch_text(l).find("ptxas serialized its wgmma") != std::string::npos);
  // Within 1.5x of the H200 (without ptxas's notice the model would say 226 us).
  CHECK(serial.us > 235.8 / 1.5);
  CHECK(serial.us < 235.8 * 1.5);
  const auto own =
      predict_file("33-fp8-gemm", "bench/perfmodel/experiments/fp8-wgmma/wgmma-k32-pingpong.cu");
  REQUIRE(!own.launches.empty());
  CHECK(own.launches[0].wgmma_serialized.empty());
  CHECK(perf::launch_text(own.launches[0]).find("serialized") == std::string::npos);
}

TEST_CASE("perf model: a GEMM's blocks find their panels in the L2 whichever round they start") {
  // Puzzle 20 at BK 32 x 4 (the version Nsight Compute read on the H200): 225 MB of DRAM traffic
  // (640 GB/s over 352.5 us, bench/perfmodel/data/h200-curriculum2). The replayed SM takes
  // every 132nd block, so blocks 264, 528 and 792 start rounds of 264 slots; with "the same
  // round" aligned at multiples of 264, each would read its whole B panel from DRAM and the
  // launch would come to 738 MB.
  const auto p =
      predict_file("20-mma-bf16-gemm", "bench/perfmodel/curriculum2/20-mma-ring-rolled.cu");
  REQUIRE(!p.launches.empty());
  CHECK(p.dram_bytes > 134e6); // A, B and C once: the least any schedule can move
  CHECK(p.dram_bytes < 2 * 225e6);
}

// The first block to read a panel misses in the L2 where the blocks beside it, later in dispatch
// order, hit; but the DRAM fetches the panel once for all of them, at the GPU's bandwidth, not at
// the first block's SM's share of it. Charged at that share, solution 21's first block (wgmma, one
// block per SM, 4 on the busiest SM) takes twice as long as the three after it, and the model
// says 271 us where the H200 measured 202-208 us (bench/perfmodel/data/h200-capture11).
TEST_CASE("perf model: a grid's first blocks share the DRAM fetch of their panels") {
  const auto p = predict_file("21-gemm-bias-gelu", "solutions/21-gemm-bias-gelu.cu");
  CHECK(p.us < 1.2 * 207.76);
  CHECK(p.us > 207.76 / 1.2);
  // The bytes are still the launch's: A and B at least once (33.6 MB each) and Y (33.6 MB).
  CHECK(p.dram_bytes > 100e6);
}

// A persistent GEMM's 128 blocks each walk tiles t = blockIdx.x + i * gridDim.x, rastered in groups
// of 8 rows of tiles: the block beside the anchor in x is not where the anchor's next tile is, and
// the other sampled blocks say so. Counted by address, a round's blocks read each A panel 16 at a
// time and each B panel 8 at a time: about 200 MB from DRAM at 4096^3 (A, B and C once are 100 MB,
// and each round of 128 tiles fetches its 8 A and 16 B panels). Taken from the anchor and its
// neighbour alone, every block read its A panel by itself: 579 MB, DRAM half of the time.
TEST_CASE("perf model: a persistent grid's blocks share their panels by address, not by their "
          "coordinates") {
  const auto p = predict_file("43-tma-warp-specialized-gemm",
                              "solutions/43-tma-warp-specialized-gemm.cu", "h100-sxm");
  CHECK_MESSAGE(p.method.find("counted by address") != std::string::npos, p.method);
  double dram_us = 0;
  for (auto& f : p.factors)
    if (f.key == "dram") dram_us = f.us;
  // 300 MB at the H100's 3.09 TB/s: 97 us.
  CHECK(dram_us > 100e6 / 3.09e6);
  CHECK(dram_us < 300e6 / 3.09e6);
  // A grid-stride loop's blocks are where their coordinates say: no census.
  const auto dot = predict_file("08-dot-product", "solutions/08-dot-product.cu", "h100-sxm");
  CHECK_MESSAGE(dot.method.find("counted by address") == std::string::npos, dot.method);
}

// A TMA ring and its consumers, in puzzle 43's launch (128 blocks of three warpgroups): one lane
// of warpgroup 0 streams STEPS boxes of A (64 x 128 bf16, 16 KB) through STAGES slots, each slot
// handed back by the consumer warps' arrivals on its `empty` barrier; each of the 8 consumer warps
// waits for its slot's box, then runs WORK dependent FMAs. COPY 0: the producer arrives on `full`
// with no copy. The copies alone and the FMAs alone take about as long as each other.
const char* kTmaRing = R"(#include <cuda.h>
#include <cuda_bf16.h>
#define STEPS 128
__device__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ void wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
                 "selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  while (!done);
}
extern "C" __global__ void __launch_bounds__(384, 1)
    ws_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
            const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned base = (sa(smem_raw) + 1023) & ~1023u, box = BK * BM * 2;
  const unsigned full = base + STAGES * box, empty = full + 8 * STAGES;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(full + 8 * s) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 8;" ::"r"(empty + 8 * s) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    if (threadIdx.x == 0)
      for (int it = 0; it < STEPS; ++it) {
        const int s = it % STAGES;
        if (it >= STAGES) wait(empty + 8 * s, (it / STAGES - 1) & 1);
        if (COPY) {
          asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                       ::"r"(full + 8 * s), "r"(box) : "memory");
          asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::"
                       "complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                       ::"r"(base + s * box), "l"(&tmA), "r"(it * BK % K),
                       "r"(int(blockIdx.x) * BM % M), "r"(full + 8 * s) : "memory");
        } else {
          asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(full + 8 * s) : "memory");
        }
      }
    return;
  }
  float acc = threadIdx.x;
  for (int it = 0; it < STEPS; ++it) {
    const int s = it % STAGES;
    wait(full + 8 * s, (it / STAGES) & 1);
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(base + s * box + 4 * (threadIdx.x % 32)));
    for (int j = 0; j < WORK; ++j) acc = fmaf(acc, 1.0001f, v);
    __syncwarp();
    if (threadIdx.x % 32 == 0)
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(empty + 8 * s) : "memory");
  }
  C[blockIdx.x * 256 + threadIdx.x - 128] = __float2bfloat16(acc);
})";

// A phase's copies are the ones issued for it. The replay does not hold a producer back until its
// consumers hand a slot back, so it has started the ring's later phases long before the consumers
// wait on the first; counted per barrier rather than per phase, the consumers' first wait waited
// for every copy started on that barrier so far, and the copies and the FMAs that should overlap
// ran one after the other (puzzle 43's solution, the same on an H100: 364 us predicted, 329 with
// phases, 178 measured).
TEST_CASE("perf model: a ring's consumers wait for their own phase's copies, not for later ones") {
  auto ring = [](int copy, int work) {
    return predict_source("43-tma-warp-specialized-gemm",
                          fmt::format("#define COPY {}\n#define WORK {}\n{}", copy, work, kTmaRing),
                          fmt::format("ring-copy{}-work{}.cu", copy, work), "h100-sxm")
        .us;
  };
  const double copies = ring(1, 0), fmas = ring(0, 128), both = ring(1, 128);
  CHECK(copies > 0.5 * fmas);
  CHECK(copies < 2.0 * fmas);
  CHECK(both >= 0.95 * std::max(copies, fmas));
  CHECK(both < 0.8 * (copies + fmas));
}

// A long kernel's traces are cut at the event cap and the recorded part stands for the whole: its
// time and every count the explanation shows must be scaled alike. Unscaled, puzzle 34's grouped
// GEMM (cut about 1.6x) shows the tensor pipe busy 999 us while its mma alone need 2 T k H N FLOPs
// at the tensor rate, some 1540 us, and 7.0 GB through the L2 where its tiles read at least twice
// that.
TEST_CASE("perf model: a kernel whose traces are cut counts all of its work, not the traced part") {
  // Puzzle 34 with its mma.sync GEMM of 128 x 128 tiles, the form Nsight Compute measured (the
  // solution runs wgmma on 128 x 256 tiles).
  const auto p =
      predict_file("34-moe-grouped-gemm", "bench/perfmodel/curriculum2/34-grouped-mma.cu");
  const perf::Machine m = perf::machine_for(*find_profile("h200"));
  const double T = 8192, k = 8, H = 4096, N = 2048; // the puzzle's [perf] sizes
  const double least_us = 2 * T * k * H * N / (m.tensor_flops_clk_sm * m.sm_count * m.clock_ghz) *
                          1e-3; // every row of every expert, no padding
  double tensor_us = 0;
  for (auto& f : p.factors)
    if (f.key == "tensor") tensor_us = std::max(tensor_us, f.us);
  CHECK(tensor_us > 0.9 * least_us);
  CHECK(tensor_us < 1.3 * least_us);
  // Each 128 x 128 tile reads its 128 rows of X and of W[e] whole: 2 MB; T k / 128 tiles at
  // least, N / 128 column tiles each: 17.2 GB (Nsight Compute on the H200 counted 17.2 GB). The
  // model counts 7.0 GB if the traces' cut is not weighed, and 11.7 GB if the sampled run runs a
  // sample of the scatter's 256 blocks: the row list the GEMM gathers A through is then mostly
  // unwritten, so its sampled blocks zero-fill half their A rows (cp.async with a source size of
  // 0 reads nothing). So a cheap launch that later ones read runs whole. The tiles' partial
  // last rows add up to 6%.
  const double tiles_bytes = (T * k / 128) * (N / 128) * 2 * 128 * H * 2;
  CHECK(p.l2_bytes > 0.98 * tiles_bytes);
  CHECK(p.l2_bytes < 1.15 * tiles_bytes);
}

// A cp.async.bulk started by several lanes of one instruction is several copies. The trace kept
// only the last lane's, a tensor-core form of puzzle 32, whose 16 lanes each copy one row's slice
// of W, would come to 18 MB of DRAM reads for its 264 MB of weights (and 61 us, against 114
// measured).
TEST_CASE("perf model: bulk copies started by several lanes at once all count") {
  const auto p =
      predict_file("32-w4a16-gemv", "bench/perfmodel/experiments/w4a16-tma-mma/tma-mma.cu");
  CHECK(p.dram_bytes > 0.95 * 264.2e6); // W once, at least
  CHECK(p.dram_bytes < 1.2 * 264.2e6);
}

TEST_CASE("perf model: a replay cut by its budget counts its running blocks by what they ran") {
  // Puzzle 24 with two chunks a block (a frozen copy) at its perf size: half the blocks exit at
  // once, each of the others reads 1024 keys' K and V (512 KB). The replay stops at its instruction
  // budget with 21 of the busiest SM's 32 blocks retired and 3 part-run; counted as if only the
  // retired ones had run, the launch read 2.42 GB where it reads the 2.15 GB cache once.
  const auto p = predict_file("24-decode-attention",
                              "bench/perfmodel/curriculum2/24-split-k-ring-two-chunks-a-block.cu");
  const double cache = 2.0 * 64 * 8192 * 8 * 128 * 2; // K and V, bf16
  CHECK(p.dram_bytes > 0.98 * cache);
  CHECK(p.dram_bytes < 1.05 * cache);
}

TEST_CASE("perf model: a look-back scan is predicted the same every time") {
  // Puzzle 11's blocks take their tiles by an atomic ticket and spin until the tiles before
  // theirs have published. Sampled on two threads, how long a block spun depended on which
  // thread got there first: 284 to 8874 us from run to run. The H200 measured 324 us (s11).
  const auto first = predict_file("11-inclusive-scan", "solutions/11-inclusive-scan.cu");
  CHECK(first.us < 2 * 324.3);
  for (int i = 0; i < 4; ++i)
    CHECK(predict_file("11-inclusive-scan", "solutions/11-inclusive-scan.cu").us == first.us);
}

TEST_CASE("perf model: a move that only renames bits between an integer and a float register is "
          "free") {
  // __uint_as_float and __float_as_uint are a mov.b32 between a %r and a %f register in the PTX,
  // and no instruction at all in SASS (its registers have no type). Puzzle 32's solution has one a
  // weight; charged an ALU slot each, it was predicted 95.8 us where the H200 measured 74.4 and
  // Nsight Compute counted the ALU pipe 57% busy. Two kernels with the same arithmetic a step (a
  // shift, an xor and an add, which the compiler cannot fold across steps, and a float multiply),
  // one chain passing through both types (two moves a step), the other keeping them apart (none),
  // must take the same time.
  const std::string head =
      "// @tune BLOCK=256\n"
      "extern \"C\" __global__ void vector_add(const float* a, const float* b, float* c, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i >= n) return;\n"
      "  unsigned u = __float_as_uint(a[i]);\n"
      "  float w = b[i];\n"
      "#pragma unroll 16\n"
      "  for (int k = 0; k < 512; ++k) {\n";
  const std::string tail = "  }\n  c[i] = __uint_as_float(u) + w;\n}\n";
  const auto crossing = predict_source(
      "01-vector-add",
      head + "    u = __float_as_uint(__uint_as_float((u ^ (u >> 3)) + 1u) * 1.5f);\n" + tail);
  const auto apart = predict_source(
      "01-vector-add", head + "    u = (u ^ (u >> 3)) + 1u;\n    w = w * 1.5f;\n" + tail);
  CHECK(crossing.us < 1.05 * apart.us);
  CHECK(crossing.us > 0.95 * apart.us);
}

TEST_CASE("perf model: a launch's line agrees in number and gives its bytes with a prefix") {
  perf::LaunchPrediction l;
  l.kernel = "k";
  l.grid = {8, 576, 1};
  l.block = {256, 1, 1};
  l.registers = 1;
  l.shared_bytes = 198656;
  l.resident = l.resident_running = 1;
  l.limited_by = "registers";
  l.blocks_per_sm = 1;
  l.us = 1790;
  const std::string one = perf::launch_text(l);
  CHECK(one.find("1 register, 199 kB shared; 1 block per SM") != std::string::npos);
  CHECK(one.find("; 1 block on the busiest SM") != std::string::npos);
  l.registers = 254;
  l.resident = l.resident_running = 2;
  l.blocks_per_sm = 35;
  l.shared_bytes = 0;
  const std::string many = perf::launch_text(l);
  CHECK(many.find("254 registers, 0 B shared; 2 blocks per SM") != std::string::npos);
  CHECK(many.find("; 35 blocks on the busiest SM") != std::string::npos);
}

TEST_CASE("perf model: every launch of a plan pays a whole launch, the second as the first") {
  // `warpbook probe` on H100s and H200s: 200 empty kernels back to back take 0.80-1.29x a lone
  // one's time each, so a plan's later launches are charged the lone figure too.
  const auto p = predict_file("08-dot-product", "solutions/08-dot-product.cu");
  const perf::Machine m = perf::machine_for(*find_profile("h200"));
  REQUIRE(p.launches.size() == 2);
  double sum = 0;
  for (const auto& l : p.launches) {
    CHECK(l.us >= m.launch_us);
    sum += l.us;
  }
  CHECK(p.us == doctest::Approx(sum).epsilon(1e-9));
}

TEST_CASE("perf model: a file ptxas refuses gets no prediction, and the reason, not a time") {
  // The front end makes PTX of it (the sampled run starts on that PTX while ptxas works), but
  // 80 KB of __constant__ data is past the 64 KB a GPU has: ptxas refuses it, and the prediction
  // that waited for ptxas's figures must say so rather than replay without them.
  const std::string src = R"(
__constant__ float table[20480];
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + table[i % 20480];
}
)";
  const Puzzle* pz = test::builtin_catalog().find_puzzle("01-vector-add");
  REQUIRE(pz);
  const perf::Machine m = perf::machine_for(*find_profile("h100-sxm"));
  std::vector<Diagnostic> diags;
  const auto tune = resolve_tunables(*pz, src, "constant.cu", diags);
  const perf::Prediction p = perf::predict(*pz, src, "constant.cu", tune, m);
  CHECK_FALSE(p.ok);
  CHECK_MESSAGE(p.error.find("ptxas refused") != std::string::npos, p.error);
  // The same kernel with its table in bounds is predicted.
  std::string small = src;
  for (size_t at; (at = small.find("20480")) != std::string::npos;) small.replace(at, 5, "2048");
  const perf::Prediction q = perf::predict(*pz, small, "constant.cu", tune, m);
  CHECK_MESSAGE(q.ok, q.error);
  CHECK(q.us > 0);
}
