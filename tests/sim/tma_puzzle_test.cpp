// A puzzle with a [[tensor_map]], end to end on the simulator: puzzle.toml's rules for tensor
// maps, a learner kernel that loads its tiles with TMA passing every case, a wrong one failing,
// and the performance model predicting it.
#include "common/puzzle_suite.hpp"
#include "common/temp_dir.hpp"
#include "core/backend.hpp"
#include "core/check.hpp"
#include "core/puzzle.hpp"

#include <doctest/doctest.h>

#include <string>

namespace {

using wb::test::TempDir;

// y = 2 x + 1 over an M x N matrix. The kernel takes x itself (for the reference) and a tensor map
// over it (for a TMA kernel); tiles of BM x BN, 128B-swizzled, overhang the ragged cases' edges.
const char* kToml = R"toml(title = "TMA tiles"
level = 1
tags = ["tma"]
lesson = "0001-programs-not-threads"

[kernel]
name = "scale"
args = ["x", "tx", "y", "M", "N"]

[[buffer]]
name = "x"
type = "f32"
shape = ["M", "N"]
init = "uniform(-1, 1)"

[[buffer]]
name = "y"
type = "f32"
shape = ["M", "N"]
output = true

[[tensor_map]]
name = "tx"
buffer = "x"
dims = ["N", "M"]
box = ["BN", "BM"]
swizzle = "128B"
%EXTRA%
[scalar.M]
type = "i32"
[scalar.N]
type = "i32"

[launch]
grid = ["cdiv(N, BN)", "cdiv(M, BM)"]
block = "BN * BM"
tunables = { BN = 32, BM = 8 }

[[case]]
M = 16
N = 64
[[case]]
label = "ragged: tiles overhang both edges"
M = 7
N = 100

[perf]
M = 4096
N = 4096
[sim_perf]
M = 64
N = 256

[cost]
bytes = "8 * M * N"
flops = "2 * M * N"
)toml";

const char* kReference = R"(struct __align__(64) Map { unsigned long long v[16]; };
extern "C" __global__ void scale(const float* x, const __grid_constant__ Map tx, float* y, int M,
                                 int N) {
  const int c = blockIdx.x * 32 + threadIdx.x % 32, r = blockIdx.y * 8 + threadIdx.x / 32;
  if (r < M && c < N) y[r * N + c] = 2.0f * x[r * N + c] + 1.0f;
}
)";

// WRONG 1: reads the box as if it were not swizzled.
const char* kLearner = R"(#include <cuda.h>
#ifndef WRONG
#define WRONG 0
#endif
__device__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
extern "C" __global__ void scale(const float* x, const __grid_constant__ CUtensorMap tx, float* y,
                                 int M, int N) {
  __shared__ __align__(1024) float tile[8 * 32];
  __shared__ __align__(8) unsigned long long bar;
  const int t = threadIdx.x, c0 = blockIdx.x * 32, r0 = blockIdx.y * 8;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 1024;" ::"r"(smem(&bar)));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem(tile)), "l"((unsigned long long)&tx),
                 "r"(c0), "r"(r0), "r"(smem(&bar)) : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; "
                 "selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(smem(&bar)) : "memory");
  const int r = t / 32, k = t % 32;
  const int slot = WRONG ? t : r * 32 + ((k / 4) ^ (r % 8)) * 4 + k % 4;
  if (r0 + r < M && c0 + k < N) y[(r0 + r) * N + c0 + k] = 2.0f * tile[slot] + 1.0f;
}
)";

struct Fixture {
  TempDir d;
  std::vector<wb::LoadError> errors;
  std::optional<wb::Puzzle> load(const std::string& extra = "") {
    std::string toml = kToml;
    toml.replace(toml.find("%EXTRA%"), 7, extra);
    d.write("90-tma-tiles/puzzle.toml", toml);
    d.write("90-tma-tiles/reference.cu", kReference);
    d.write("90-tma-tiles/starter.cu", kLearner);
    d.write("90-tma-tiles/README.md", "# TMA tiles\n");
    d.write("90-tma-tiles/hints.md", "## 1\nTMA.\n");
    errors.clear();
    return wb::load_puzzle(d.path / "90-tma-tiles", d.path / "solutions", errors);
  }
  std::string all_errors() const {
    std::string s;
    for (auto& e : errors) s += e.str() + "\n";
    return s;
  }
};

} // namespace

TEST_CASE("tensor maps in puzzle.toml: a valid map loads") {
  Fixture f;
  auto p = f.load();
  INFO(f.all_errors());
  REQUIRE(p);
  REQUIRE(p->tensor_maps.size() == 1);
  CHECK(p->tensor_maps[0].buffer == "x");
  CHECK(p->tensor_maps[0].swizzle == wb::TmSwizzle::b128);
  const auto s = wb::eval_tensor_map(*p, p->tensor_maps[0], p->env(p->cases[1]));
  CHECK(s.rank == 2);
  CHECK(s.dims[0] == 100);
  CHECK(s.dims[1] == 7);
  CHECK(s.strides[0] == 400); // from x's shape
  CHECK(s.box[0] == 32);
  CHECK(wb::tensor_map_problem(s).empty());
}

TEST_CASE("tensor maps in puzzle.toml: each broken rule is an error naming the map and the rule") {
  // puzzle.toml with one piece of text replaced: the load's errors.
  auto error_for = [](const std::string& from, const std::string& to) {
    Fixture f;
    std::string text = kToml;
    text.replace(text.find(from), from.size(), to);
    text.replace(text.find("%EXTRA%"), 7, "");
    f.d.write("90-tma-tiles/puzzle.toml", text);
    f.d.write("90-tma-tiles/reference.cu", kReference);
    f.d.write("90-tma-tiles/starter.cu", kLearner);
    f.d.write("90-tma-tiles/README.md", "# TMA tiles\n");
    f.d.write("90-tma-tiles/hints.md", "## 1\nTMA.\n");
    auto q = wb::load_puzzle(f.d.path / "90-tma-tiles", f.d.path / "solutions", f.errors);
    CHECK_FALSE(q);
    return f.all_errors();
  };
  std::string e = error_for("box = [\"BN\", \"BM\"]", "box = [\"BN\", \"300\"]");
  CHECK_MESSAGE(e.find("tensor map 'tx': box[1] = 300") != std::string::npos, e);
  e = error_for("box = [\"BN\", \"BM\"]", "box = [\"64\", \"BM\"]");
  CHECK_MESSAGE(e.find("more than the 128-byte span of swizzle \"128B\"") != std::string::npos, e);
  e = error_for("box = [\"BN\", \"BM\"]", "box = [\"BN\"]");
  CHECK_MESSAGE(e.find("one box extent per dimension") != std::string::npos, e);
  e = error_for("swizzle = \"128B\"", "swizzle = \"96B\"");
  CHECK_MESSAGE(e.find("unknown swizzle '96B'") != std::string::npos, e);
  e = error_for("buffer = \"x\"", "buffer = \"z\"");
  CHECK_MESSAGE(e.find("'z' names no [[buffer]]") != std::string::npos, e);
  e = error_for("N = 64", "N = 66"); // rows of 264 bytes
  CHECK_MESSAGE(e.find("multiples of 16") != std::string::npos, e);
  e = error_for("dims = [\"N\", \"M\"]", "dims = [\"N\", \"M + 1\"]");
  CHECK_MESSAGE(e.find("describe more than the buffer holds") != std::string::npos, e);
}

TEST_CASE("a TMA kernel passes a puzzle's cases on the simulator, and the model predicts it") {
  Fixture f;
  auto p = f.load();
  INFO(f.all_errors());
  REQUIRE(p);
  std::string why;
  auto backend = wb::make_sim_backend(why);
  REQUIRE(backend);
  wb::CheckOptions opt;
  opt.seed = 7;
  opt.model_gpu = "h100-sxm";
  auto r = wb::check_puzzle(*p, kLearner, "learner.cu", *backend, opt);
  INFO(r.summary);
  CHECK(r.verdict == wb::Verdict::passed);
  REQUIRE(r.prediction);
  INFO(r.prediction->error);
  REQUIRE(r.prediction->ok);
  // 134 MB through DRAM at the H100's 3.35 TB/s is 40 us; a sane model is within a few times.
  CHECK(r.prediction->us > 30);
  CHECK(r.prediction->us < 400);
  MESSAGE("TMA tiles, predicted on the H100 SXM: " << r.prediction->us << " us");

  opt.predict = false;
  opt.perf_case = false;
  auto wrong =
      wb::check_puzzle(*p, std::string("#define WRONG 1\n") + kLearner, "wrong.cu", *backend, opt);
  CHECK(wrong.verdict == wb::Verdict::wrong_answer);
}

// Puzzle 43's starter announces only A's bytes on the ring's barrier and starts A's and B's copies
// on it. The GPU's copies land side by side, so the count never meets zero and the first tile
// hangs (an H100 stops it at the first case); counted copy by copy, the phase would complete on
// A alone and the kernel run on until a barrier came round again.
TEST_CASE("a barrier whose copies bring more than its expect_tx hangs at the first tile") {
  const wb::Puzzle* pz = wb::test::builtin_catalog().find_puzzle("43-tma-warp-specialized-gemm");
  REQUIRE(pz);
  std::string why;
  auto backend = wb::make_sim_backend(why);
  REQUIRE(backend);
  wb::CheckOptions opt;
  opt.seed = 7;
  opt.predict = false;
  opt.perf_case = false;
  auto r = wb::check_puzzle(*pz, wb::test::read_file(pz->starter), "starter.cu", *backend, opt);
  REQUIRE(!r.cases.empty());
  CHECK(r.verdict == wb::Verdict::runtime_fault);
  CHECK(r.cases[0].verdict == wb::Verdict::runtime_fault);
  const std::string& msg = r.cases[0].fault.message;
  CHECK_MESSAGE(msg.find("more bytes landed on it than expect_tx announced") != std::string::npos,
                msg);
}
