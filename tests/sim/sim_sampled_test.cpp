// The performance model's sampled run when a block is too long to run to its end: the block stops
// once a warp has run `stop_after` instructions, and the simulator counts what each warp has left
// from the loops it is inside. The count must agree with the block run whole.
#include "common/sim_plan.hpp"

#include <doctest/doctest.h>
#include <random>

using namespace wb;

namespace {

// Each warp walks rows warp, warp + warps, ...; in each row its lanes stride over the columns, a
// second loop counts down, and the lanes' sums meet by shuffles. Every loop is counted (a counter
// stepped by a constant against a bound), with bounds known only at run time.
const char* kRows = R"(
extern "C" __global__ void rows(const float* x, float* y, int nrows, int n, int tail) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int r = warp; r < nrows; r += warps) {
    float s = 0.f;
    for (int j = lane; j < n; j += 32) s += x[(long long)r * n + j] * 0.5f;
#pragma unroll 1
    for (int k = tail; k != 0; --k) s = s * 0.999f + 1.f;
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == 0) y[r] = s;
  }
}
)";

struct Rows {
  simtest::Plan plan;
  Rows(int nrows, int n, int tail, int threads) {
    plan.program = simtest::program_from(kRows, "rows.cu");
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> x(size_t(nrows) * n);
    for (auto& v : x) v = u(rng);
    const int bx = plan.buffer("x", x);
    const int by = plan.buffer("y", std::vector<float>(size_t(nrows), NAN));
    plan.launch("rows", Dim3{3, 1, 1}, Dim3{uint32_t(threads), 1, 1},
                {simtest::Plan::buf(bx), simtest::Plan::buf(by), simtest::Plan::val<int32_t>(nrows),
                 simtest::Plan::val<int32_t>(n), simtest::Plan::val<int32_t>(tail)});
    plan.rp.program = &plan.program;
    plan.rp.buffers = &plan.buffers;
    plan.rp.launches = plan.launches;
    plan.rp.timeout_s = 60;
  }
};

} // namespace

TEST_CASE("sampled run: a stopped block's warps say how much they had left, from their loops") {
  // Odd sizes: rows not a multiple of the warps, columns not of the lanes.
  struct Shape {
    int nrows, n, tail, threads;
  };
  for (Shape sh : {Shape{37, 30011, 5, 128}, Shape{9, 100003, 0, 96}, Shape{61, 2333, 400, 64}}) {
    CAPTURE(sh.nrows);
    CAPTURE(sh.n);
    Rows k(sh.nrows, sh.n, sh.tail, sh.threads);
    sim::SimOptions o;
    o.track_writers = false;
    sim::Simulator s(o);
    const sim::SampledRun whole = s.run_sampled(k.plan.rp, {{1}}, size_t(1) << 26);
    REQUIRE_FALSE(whole.fault);
    REQUIRE(whole.launches.size() == 1);
    REQUIRE(whole.launches[0].blocks.size() == 1);
    const sim::BlockTrace& all = whole.launches[0].blocks[0];
    CHECK_FALSE(all.stopped);
    uint64_t most = 0;
    for (auto& w : all.warps) most = std::max<uint64_t>(most, w.ev.size());
    REQUIRE(most > 20000);
    // Warps take turns of 4096 instructions, so each has run some when the first reaches the stop.
    for (size_t stop : {size_t(8192), size_t(12289), most / 2}) {
      CAPTURE(stop);
      const sim::SampledRun part = s.run_sampled(k.plan.rp, {{1}}, stop, stop);
      REQUIRE_FALSE(part.fault);
      const sim::BlockTrace& b = part.launches[0].blocks[0];
      CHECK(b.stopped);
      REQUIRE(b.warps.size() == all.warps.size());
      for (size_t wi = 0; wi < b.warps.size(); ++wi) {
        CAPTURE(wi);
        const sim::WarpTrace& w = b.warps[wi];
        CHECK(w.loops_uncounted == 0);
        CHECK(w.ev.size() < all.warps[wi].ev.size());
        const double est = double(w.ev.size() + w.extrapolated);
        const double truth = double(all.warps[wi].ev.size());
        CHECK(est > 0.95 * truth);
        CHECK(est < 1.05 * truth);
      }
    }
  }
}

namespace {

// A double-buffered tile loop, as tiled GEMMs write it: the next tile's load and store are
// skipped on the last trip, and NVRTC tests `s + 1 < steps` once at the top, keeping whether it
// held in a predicate it sets to a constant on each path (`mov.pred %p, 0; @%q bra L; ...;
// mov.pred %p, -1; L: ... @%p bra top`). The loop's count comes from that first test.
const char* kTiles = R"(
extern "C" __global__ void tiles(const float* x, float* y, int steps) {
  __shared__ float buf[2][256];
  float acc = 0.f, next = x[threadIdx.x];
  buf[0][threadIdx.x] = next;
  __syncthreads();
#pragma unroll 1
  for (int s = 0; s < steps; ++s) {
    const int cur = s & 1;
    if (s + 1 < steps) next = x[(long long)(s + 1) * 256 + threadIdx.x];
#pragma unroll
    for (int k = 0; k < 8; ++k) acc = fmaf(buf[cur][(threadIdx.x + 32 * k) % 256], 0.5f, acc);
    if (s + 1 < steps) buf[cur ^ 1][threadIdx.x] = next;
    __syncthreads();
  }
  y[threadIdx.x] = acc;
}
)";

} // namespace

TEST_CASE("sampled run: a tile loop that skips its prefetch on the last trip is counted") {
  const int steps = 3001;
  simtest::Plan plan;
  plan.program = simtest::program_from(kTiles, "tiles.cu");
  std::vector<float> x(size_t(steps) * 256, 1.f);
  const int bx = plan.buffer("x", x);
  const int by = plan.buffer("y", std::vector<float>(256, NAN));
  plan.launch("tiles", Dim3{1, 1, 1}, Dim3{256, 1, 1},
              {simtest::Plan::buf(bx), simtest::Plan::buf(by), simtest::Plan::val<int32_t>(steps)});
  plan.rp.program = &plan.program;
  plan.rp.buffers = &plan.buffers;
  plan.rp.launches = plan.launches;
  plan.rp.timeout_s = 60;
  sim::SimOptions o;
  o.track_writers = false;
  sim::Simulator s(o);
  const sim::SampledRun whole = s.run_sampled(plan.rp, {{0}}, size_t(1) << 26);
  REQUIRE_FALSE(whole.fault);
  const sim::BlockTrace& all = whole.launches[0].blocks[0];
  const sim::SampledRun part = s.run_sampled(plan.rp, {{0}}, 20000, 20000);
  REQUIRE_FALSE(part.fault);
  const sim::BlockTrace& b = part.launches[0].blocks[0];
  REQUIRE(b.stopped);
  for (size_t wi = 0; wi < b.warps.size(); ++wi) {
    CAPTURE(wi);
    const sim::WarpTrace& w = b.warps[wi];
    CHECK(w.loops_uncounted == 0);
    const double est = double(w.ev.size() + w.extrapolated);
    const double truth = double(all.warps[wi].ev.size());
    CHECK(est > 0.95 * truth);
    CHECK(est < 1.05 * truth);
  }
}
