// The corpus (tests/corpus/*.cu) for compute_80 and compute_90, against results computed here on
// the host. Exactly rounded results must match bit for bit; reductions whose order differs and
// .approx functions get a tolerance. Included by tests/sim/sim_corpus_test.cpp (the simulator, CI)
// and tests/gpu/sim_parity_test.cpp, which defines CORPUS_SUITE_PREFIX and runs every plan on the
// simulator and the GPU (plan_runner); `p.approx` / `p.any_value` say where those two may differ.
#pragma once
#include "common/sim_plan.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>

#ifndef CORPUS_SUITE_PREFIX
#define CORPUS_SUITE_PREFIX ""
#endif

using namespace simtest;

namespace {

const char* kArchs[] = {"compute_80", "compute_90"};

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9e3779b97f4a7c15ull + 1) {}
  uint32_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return uint32_t(s >> 11);
  }
  float uniform(float lo, float hi) {
    return lo + (hi - lo) * float(next() % 1000003) / 1000003.0f;
  }
};

Plan corpus_plan(const std::string& file, const std::string& arch) {
  Plan p;
  p.program = program_from(read_file(corpus_path(file)), file, arch);
  return p;
}

void require_ok(const wb::RunResult& r) {
  INFO(r.fault.message);
  REQUIRE(!r.fault);
}

bool close(double got, double want, double rtol, double atol = 0) {
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

uint32_t fbits(float f) {
  return std::bit_cast<uint32_t>(f);
}

// ---- independent host references for narrow float formats ----

// Every finite value of a small format, by brute force (no shared code with the simulator).
struct SmallFormat {
  std::vector<std::pair<double, uint32_t>> finite; // value -> code, positive codes only
  uint32_t nan;
  double max;
};
SmallFormat make_format(int ebits, int mbits, bool ieee) {
  SmallFormat f;
  int bias = (1 << (ebits - 1)) - 1;
  uint32_t emax = (1u << ebits) - 1;
  for (uint32_t code = 0; code < (1u << (ebits + mbits)); ++code) {
    uint32_t e = code >> mbits, m = code & ((1u << mbits) - 1);
    if (ieee && e == emax) continue;                            // inf / NaN
    if (!ieee && e == emax && m == (1u << mbits) - 1) continue; // e4m3 NaN
    double v = e == 0 ? std::ldexp(double(m), 1 - bias - mbits)
                      : std::ldexp(double(m | (1u << mbits)), int(e) - bias - mbits);
    f.finite.push_back({v, code});
  }
  std::sort(f.finite.begin(), f.finite.end());
  f.max = f.finite.back().first;
  f.nan = 0x7f;
  return f;
}
// Round to nearest even with saturation to the largest finite value (satfinite).
uint32_t round_small_satfinite(const SmallFormat& f, int ebits, int mbits, double v) {
  if (std::isnan(v)) return f.nan;
  uint32_t sign = std::signbit(v) ? 1u << (ebits + mbits) : 0;
  double a = std::fabs(v);
  if (a >= f.max) return sign | f.finite.back().second;
  auto it = std::lower_bound(f.finite.begin(), f.finite.end(), std::make_pair(a, 0u));
  if (it->first == a) return sign | it->second;
  auto lo = it - 1;
  double dl = a - lo->first, dh = it->first - a;
  if (dl < dh) return sign | lo->second;
  if (dh < dl) return sign | it->second;
  return sign | ((lo->second & 1) ? it->second : lo->second);
}

// f16 by brute force over all finite halves: nearest even, or toward zero.
const SmallFormat& f16fmt() {
  static SmallFormat f = make_format(5, 10, true);
  return f;
}
uint16_t to_f16(double v, bool rz = false) {
  const SmallFormat& f = f16fmt();
  if (std::isnan(v)) return 0x7fff;
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (rz) {
    if (a >= f.max) return sign | 0x7bff;
    auto it = std::upper_bound(f.finite.begin(), f.finite.end(), std::make_pair(a, ~0u));
    return uint16_t(sign | (it - 1)->second);
  }
  // IEEE: round to nearest even, overflow to infinity past max + half an ulp (2^15 * (2 - 2^-11))
  if (a >= 65520.0) return sign | 0x7c00;
  return uint16_t(round_small_satfinite(f, 5, 10, v));
}
double from_f16(uint16_t h) {
  uint32_t e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0    ? std::ldexp(double(m), -24)
             : e == 31 ? (m ? NAN : INFINITY)
                       : std::ldexp(double(m | 1024), int(e) - 25);
  return (h & 0x8000) ? -v : v;
}
uint16_t to_bf16(double v) { // nearest even from the double (v here is always an exact float)
  float f = float(v);
  uint32_t b = fbits(f);
  if (std::isnan(f)) return 0x7fff;
  uint32_t lsb = (b >> 16) & 1;
  return uint16_t((b + 0x7fff + lsb) >> 16);
}
double from_bf16(uint16_t h) {
  return std::bit_cast<float>(uint32_t(h) << 16);
}

} // namespace

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 01 vector add (grid-stride)") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("01_vector_add.cu", arch);
    int n = 5003;
    Rng g(1);
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i) a[i] = g.uniform(-1, 1), b[i] = g.uniform(-1, 1);
    int A = p.buffer("a", a), B = p.buffer("b", b), C = p.buffer("c", std::vector<float>(n));
    p.launch("vector_add", {3, 1, 1}, {256, 1, 1},
             {Plan::buf(A), Plan::buf(B), Plan::buf(C), Plan::val<int32_t>(n)});
    require_ok(p.run());
    auto c = p.get<float>(C);
    for (int i = 0; i < n; ++i) REQUIRE(fbits(c[i]) == fbits(a[i] + b[i]));
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 02 saxpy") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("02_saxpy.cu", arch);
    int n = 1000;
    Rng g(2);
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) x[i] = g.uniform(-10, 10), y[i] = g.uniform(-10, 10);
    int X = p.buffer("x", x), Y = p.buffer("y", y);
    float a = 1.7f;
    p.launch("saxpy", {4, 1, 1}, {256, 1, 1},
             {Plan::val<int32_t>(n), Plan::val(a), Plan::buf(X), Plan::buf(Y)});
    require_ok(p.run());
    auto out = p.get<float>(Y);
    for (int i = 0; i < n; ++i) REQUIRE(fbits(out[i]) == fbits(std::fma(a, x[i], y[i])));
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 03 block reduction in shared memory") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("03_block_reduce.cu", arch);
    int n = 1000;
    Rng g(3);
    std::vector<float> in(n);
    for (auto& v : in) v = g.uniform(-1, 1);
    int I = p.buffer("in", in), O = p.buffer("out", std::vector<float>(4));
    p.launch("block_sum", {4, 1, 1}, {256, 1, 1},
             {Plan::buf(I), Plan::buf(O), Plan::val<int32_t>(n)});
    require_ok(p.run());
    auto out = p.get<float>(O);
    for (int b = 0; b < 4; ++b) {
      // The same tree, in the same order: bit-exact.
      std::vector<float> s(256);
      for (int t = 0; t < 256; ++t) s[t] = b * 256 + t < n ? in[b * 256 + t] : 0.0f;
      for (int st = 128; st > 0; st >>= 1)
        for (int t = 0; t < st; ++t) s[t] += s[t + st];
      CHECK(fbits(out[b]) == fbits(s[0]));
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 04 warp-shuffle reduction") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("04_warp_reduce.cu", arch);
    int n = 300; // a partial last warp
    Rng g(4);
    std::vector<float> in(n);
    for (auto& v : in) v = g.uniform(-1, 1);
    int I = p.buffer("in", in), O = p.buffer("out", std::vector<float>(1, 0.0f));
    int M = p.buffer("maxes", std::vector<float>(12, 0.0f));
    p.approx(O, 1e-6, 1e-6); // warp sums added with float atomics, in any order
    p.launch("warp_reduce", {3, 1, 1}, {128, 1, 1},
             {Plan::buf(I), Plan::buf(O), Plan::buf(M), Plan::val<int32_t>(n)});
    require_ok(p.run());
    double sum = 0;
    for (float v : in) sum += v;
    CHECK(close(p.get<float>(O)[0], sum, 1e-5, 1e-5));
    auto mx = p.get<float>(M);
    for (int w = 0; w < 10; ++w) {
      float m = -1e30f;
      for (int i = w * 32; i < w * 32 + 32 && i < n; ++i) m = std::max(m, in[i]);
      CHECK(mx[w] == m);
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 05 softmax") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("05_softmax.cu", arch);
    int rows = 5, cols = 300;
    Rng g(5);
    std::vector<float> x(rows * cols);
    for (auto& v : x) v = g.uniform(-5, 5);
    int X = p.buffer("x", x), Y = p.buffer("y", std::vector<float>(rows * cols));
    p.approx(Y, 1e-6, 1e-9); // expf uses ex2.approx
    p.launch("softmax", {uint32_t(rows), 1, 1}, {128, 1, 1},
             {Plan::buf(X), Plan::buf(Y), Plan::val(rows), Plan::val(cols)});
    require_ok(p.run());
    auto y = p.get<float>(Y);
    for (int r = 0; r < rows; ++r) {
      double m = -1e30, s = 0;
      for (int c = 0; c < cols; ++c) m = std::max<double>(m, x[r * cols + c]);
      for (int c = 0; c < cols; ++c) s += std::exp(double(x[r * cols + c]) - m);
      for (int c = 0; c < cols; ++c)
        REQUIRE(close(y[r * cols + c], std::exp(double(x[r * cols + c]) - m) / s, 1e-5, 1e-9));
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 06 layernorm and 07 rmsnorm") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    {
      Plan p = corpus_plan("06_layernorm.cu", arch);
      int rows = 3, cols = 100;
      Rng g(6);
      std::vector<float> x(rows * cols), ga(cols), be(cols);
      for (auto& v : x) v = g.uniform(-2, 2);
      for (auto& v : ga) v = g.uniform(0.5, 1.5);
      for (auto& v : be) v = g.uniform(-0.5, 0.5);
      int X = p.buffer("x", x), G = p.buffer("gamma", ga), B = p.buffer("beta", be),
          Y = p.buffer("y", std::vector<float>(rows * cols));
      float eps = 1e-5f;
      p.approx(Y, 1e-5, 1e-6); // rsqrtf is rsqrt.approx
      p.launch("layernorm", {uint32_t(rows), 1, 1}, {32, 1, 1},
               {Plan::buf(X), Plan::buf(G), Plan::buf(B), Plan::buf(Y), Plan::val(rows),
                Plan::val(cols), Plan::val(eps)});
      require_ok(p.run());
      auto y = p.get<float>(Y);
      for (int r = 0; r < rows; ++r) {
        double s = 0, ss = 0;
        for (int c = 0; c < cols; ++c)
          s += x[r * cols + c], ss += double(x[r * cols + c]) * x[r * cols + c];
        double mean = s / cols, var = ss / cols - mean * mean, rs = 1 / std::sqrt(var + eps);
        for (int c = 0; c < cols; ++c)
          REQUIRE(
              close(y[r * cols + c], (x[r * cols + c] - mean) * rs * ga[c] + be[c], 1e-4, 1e-5));
      }
    }
    {
      Plan p = corpus_plan("07_rmsnorm.cu", arch);
      int rows = 4, cols = 150;
      Rng g(7);
      std::vector<float> x(rows * cols), w(cols);
      for (auto& v : x) v = g.uniform(-2, 2);
      for (auto& v : w) v = g.uniform(0.5, 1.5);
      int X = p.buffer("x", x), W = p.buffer("w", w),
          Y = p.buffer("y", std::vector<float>(rows * cols));
      float eps = 1e-6f;
      p.approx(Y, 1e-5, 1e-6);
      p.launch("rmsnorm", {uint32_t(rows), 1, 1}, {64, 1, 1},
               {Plan::buf(X), Plan::buf(W), Plan::buf(Y), Plan::val(cols), Plan::val(eps)});
      require_ok(p.run());
      auto y = p.get<float>(Y);
      for (int r = 0; r < rows; ++r) {
        double ss = 0;
        for (int c = 0; c < cols; ++c) ss += double(x[r * cols + c]) * x[r * cols + c];
        double sc = 1 / std::sqrt(ss / cols + eps);
        for (int c = 0; c < cols; ++c)
          REQUIRE(close(y[r * cols + c], x[r * cols + c] * sc * w[c], 1e-5, 1e-6));
      }
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 08 naive and 09 tiled matmul are bit-exact") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    int M = 37, N = 21, K = 19;
    Rng g(8);
    std::vector<float> A(M * K), B(K * N);
    for (auto& v : A) v = g.uniform(-1, 1);
    for (auto& v : B) v = g.uniform(-1, 1);
    std::vector<float> want(M * N);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) {
        float acc = 0;
        for (int k = 0; k < K; ++k) acc = std::fma(A[r * K + k], B[k * N + c], acc);
        want[r * N + c] = acc;
      }
    for (const char* f : {"08_matmul_naive.cu", "09_matmul_tiled.cu"}) {
      CAPTURE(f);
      Plan p = corpus_plan(f, arch);
      int a = p.buffer("A", A), b = p.buffer("B", B), c = p.buffer("C", std::vector<float>(M * N));
      std::string k =
          std::string(f).find("naive") != std::string::npos ? "matmul_naive" : "matmul_tiled";
      p.launch(
          k, {uint32_t((N + 15) / 16), uint32_t((M + 15) / 16), 1}, {16, 16, 1},
          {Plan::buf(a), Plan::buf(b), Plan::buf(c), Plan::val(M), Plan::val(N), Plan::val(K)});
      require_ok(p.run());
      auto C = p.get<float>(c);
      for (int i = 0; i < M * N; ++i) REQUIRE(fbits(C[i]) == fbits(want[i]));
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 10 padded and 11 naive transpose") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    int rows = 70, cols = 45;
    std::vector<float> in(rows * cols);
    for (int i = 0; i < rows * cols; ++i) in[i] = float(i);
    {
      Plan p = corpus_plan("10_transpose_padded.cu", arch);
      int I = p.buffer("in", in), O = p.buffer("out", std::vector<float>(rows * cols, -1));
      p.launch("transpose_padded", {uint32_t((cols + 31) / 32), uint32_t((rows + 31) / 32), 1},
               {32, 8, 1}, {Plan::buf(I), Plan::buf(O), Plan::val(rows), Plan::val(cols)});
      require_ok(p.run());
      auto out = p.get<float>(O);
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) REQUIRE(out[c * rows + r] == in[r * cols + c]);
    }
    {
      Plan p = corpus_plan("11_transpose_naive.cu", arch);
      int I = p.buffer("in", in), O = p.buffer("out", std::vector<float>(rows * cols, -1));
      p.launch("transpose_naive", {uint32_t((cols + 15) / 16), uint32_t((rows + 15) / 16), 1},
               {16, 16, 1}, {Plan::buf(I), Plan::buf(O), Plan::val(rows), Plan::val(cols)});
      require_ok(p.run());
      auto out = p.get<float>(O);
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) REQUIRE(out[c * rows + r] == in[r * cols + c]);
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX
          "corpus 12 histogram with shared and global atomics, blocks in parallel") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("12_histogram.cu", arch);
    int n = 20000;
    Rng g(12);
    std::vector<uint8_t> data(n);
    for (auto& v : data) v = uint8_t(g.next() % 7 == 0 ? 42 : g.next());
    int D = p.buffer("data", data), H = p.buffer("hist", std::vector<uint32_t>(256, 0));
    p.launch("histogram", {16, 1, 1}, {128, 1, 1}, {Plan::buf(D), Plan::buf(H), Plan::val(n)});
    require_ok(p.run());
    std::vector<uint32_t> want(256, 0);
    for (auto v : data) ++want[v];
    CHECK(p.get<uint32_t>(H) == want);
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 13 block scan") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("13_scan.cu", arch);
    int n = 600;
    std::vector<int32_t> in(n);
    for (int i = 0; i < n; ++i) in[i] = (i * 37) % 11 - 5;
    int I = p.buffer("in", in), O = p.buffer("out", std::vector<int32_t>(n)),
        S = p.buffer("sums", std::vector<int32_t>(3));
    p.launch("block_scan", {3, 1, 1}, {256, 1, 1},
             {Plan::buf(I), Plan::buf(O), Plan::buf(S), Plan::val(n)});
    require_ok(p.run());
    auto out = p.get<int32_t>(O);
    auto sums = p.get<int32_t>(S);
    for (int b = 0; b < 3; ++b) {
      int acc = 0;
      for (int t = 0; t < 256; ++t) {
        int i = b * 256 + t;
        acc += i < n ? in[i] : 0;
        if (i < n) REQUIRE(out[i] == acc);
      }
      CHECK(sums[b] == acc);
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 14 half and half2") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("14_half.cu", arch);
    int n = 301; // odd: the scalar tail runs too
    Rng g(14);
    std::vector<uint16_t> a(n), b(n);
    for (int i = 0; i < n; ++i) a[i] = to_f16(g.uniform(-4, 4)), b[i] = to_f16(g.uniform(-4, 4));
    a[0] = to_f16(60000), b[0] = to_f16(2); // overflow to infinity
    int A = p.buffer("a", a), B = p.buffer("b", b), O = p.buffer("out", std::vector<uint16_t>(n)),
        F = p.buffer("f", std::vector<float>((n + 1) / 2));
    p.launch("half_ops", {2, 1, 1}, {128, 1, 1},
             {Plan::buf(A), Plan::buf(B), Plan::buf(O), Plan::buf(F), Plan::val(n)});
    require_ok(p.run());
    auto out = p.get<uint16_t>(O);
    auto f = p.get<float>(F);
    for (int i = 0; i + 1 < n; ++i) {
      double x = from_f16(a[i]), y = from_f16(b[i]);
      REQUIRE(out[i] == to_f16(x * y + x)); // one rounding (hfma2); exact in double here
    }
    double x = from_f16(a[n - 1]), y = from_f16(b[n - 1]);
    CHECK(out[n - 1] == to_f16(from_f16(to_f16(x * y)) + x)); // hmul then hadd: two roundings
    for (int pr = 0; pr < n / 2; ++pr)
      CHECK(f[pr] == float(from_f16(out[2 * pr]) + from_f16(out[2 * pr + 1])));
    CHECK(f[n / 2] == float(from_f16(out[n - 1])));
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 15 bf16") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("15_bf16.cu", arch);
    int n = 200;
    Rng g(15);
    std::vector<uint16_t> a(n), b(n);
    for (int i = 0; i < n; ++i) a[i] = to_bf16(g.uniform(-8, 8)), b[i] = to_bf16(g.uniform(-8, 8));
    int A = p.buffer("a", a), B = p.buffer("b", b), O = p.buffer("out", std::vector<uint16_t>(n)),
        P = p.buffer("prod", std::vector<uint16_t>(n)),
        X = p.buffer("mx", std::vector<uint16_t>(n));
    float s = 0.37f;
    p.launch("bf16_ops", {1, 1, 1}, {256, 1, 1},
             {Plan::buf(A), Plan::buf(B), Plan::buf(O), Plan::buf(P), Plan::buf(X), Plan::val(s),
              Plan::val(n)});
    require_ok(p.run());
    auto out = p.get<uint16_t>(O), prod = p.get<uint16_t>(P), mx = p.get<uint16_t>(X);
    for (int i = 0; i < n; ++i) {
      float x = float(from_bf16(a[i])), y = float(from_bf16(b[i]));
      REQUIRE(out[i] == to_bf16(std::fma(x, s, y)));
      REQUIRE(prod[i] == to_bf16(double(x) * y)); // the product of two bf16 is exact in float
      REQUIRE(from_bf16(mx[i]) == std::max(x, y));
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 16 dp4a / dp2a and 17 int4 unpacking") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    {
      Plan p = corpus_plan("16_dp4a.cu", arch);
      int rows = 40, k4 = 9;
      Rng g(16);
      std::vector<int32_t> a(rows * k4), b(k4);
      for (auto& v : a) v = int32_t(g.next());
      for (auto& v : b) v = int32_t(g.next());
      int A = p.buffer("a", a), B = p.buffer("b", b),
          O = p.buffer("out", std::vector<int32_t>(rows)),
          O2 = p.buffer("out2", std::vector<uint32_t>(rows));
      p.launch("int8_dot", {1, 1, 1}, {64, 1, 1},
               {Plan::buf(A), Plan::buf(B), Plan::buf(O), Plan::buf(O2), Plan::val(rows),
                Plan::val(k4)});
      require_ok(p.run());
      auto out = p.get<int32_t>(O);
      auto out2 = p.get<uint32_t>(O2);
      for (int r = 0; r < rows; ++r) {
        int32_t acc = 0;
        uint32_t acc2 = 0;
        for (int k = 0; k < k4; ++k) {
          uint32_t x = uint32_t(a[r * k4 + k]), y = uint32_t(b[k]);
          for (int j = 0; j < 4; ++j)
            acc += int32_t(int8_t(x >> (8 * j))) * int32_t(int8_t(y >> (8 * j)));
          for (int j = 0; j < 2; ++j)
            acc2 += uint32_t(uint16_t(x >> (16 * j))) * uint32_t(uint8_t(y >> (8 * j)));
        }
        REQUIRE(out[r] == acc);
        REQUIRE(out2[r] == acc2);
      }
    }
    {
      Plan p = corpus_plan("17_int4_unpack.cu", arch);
      int nw = 50;
      Rng g(17);
      std::vector<uint32_t> w(nw);
      for (auto& v : w) v = g.next();
      int W = p.buffer("packed", w), O = p.buffer("out", std::vector<float>(8 * nw));
      float sc = 0.25f;
      p.launch("int4_unpack", {1, 1, 1}, {64, 1, 1},
               {Plan::buf(W), Plan::buf(O), Plan::val(sc), Plan::val(nw)});
      require_ok(p.run());
      auto out = p.get<float>(O);
      for (int i = 0; i < nw; ++i)
        for (int j = 0; j < 8; ++j) {
          int v = int((w[i] >> (4 * j)) & 15);
          if (v >= 8) v -= 16;
          REQUIRE(out[8 * i + j] == float(v) * sc);
        }
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 18 fp8 e4m3 / e5m2 conversions with saturation") {
  static const SmallFormat e4 = make_format(4, 3, false), e5 = make_format(5, 2, true);
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("18_fp8.cu", arch);
    std::vector<float> x = {0.0f,       -0.0f,         1.0f,     -1.0f,    0.3f,
                            448.0f,     449.0f,        500.0f,   -1e6f,    1e-3f,
                            0.0019531f, 0.0009765625f, 57344.0f, 61440.0f, 1e9f,
                            3.14159f,   -2.71828f,     240.0f,   232.0f,   0.0078125f};
    Rng g(18);
    for (int i = 0; i < 200; ++i) x.push_back(g.uniform(-600, 600) * (i % 3 == 0 ? 0.01f : 1.0f));
    int n = int(x.size());
    int X = p.buffer("x", x), E4 = p.buffer("e4m3", std::vector<uint8_t>(n)),
        E5 = p.buffer("e5m2", std::vector<uint8_t>(n)),
        B4 = p.buffer("back", std::vector<float>(n)), B5 = p.buffer("back2", std::vector<float>(n));
    p.launch(
        "fp8_convert", {1, 1, 1}, {256, 1, 1},
        {Plan::buf(X), Plan::buf(E4), Plan::buf(E5), Plan::buf(B4), Plan::buf(B5), Plan::val(n)});
    require_ok(p.run());
    auto a = p.get<uint8_t>(E4), b = p.get<uint8_t>(E5);
    auto ba = p.get<float>(B4), bb = p.get<float>(B5);
    for (int i = 0; i < n; ++i) {
      CAPTURE(x[i]);
      uint32_t w4 = round_small_satfinite(e4, 4, 3, x[i]),
               w5 = round_small_satfinite(e5, 5, 2, x[i]);
      REQUIRE(a[i] == w4);
      REQUIRE(b[i] == w5);
      auto val = [](const SmallFormat& f, uint32_t code, int sbit) {
        for (auto& [v, c] : f.finite)
          if (c == (code & ~(1u << sbit))) return (code >> sbit) & 1 ? -v : v;
        return 0.0;
      };
      REQUIRE(double(ba[i]) == val(e4, w4, 7));
      REQUIRE(double(bb[i]) == val(e5, w5, 7));
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 19 wmma 16x16x16 and 37 mma.sync m16n8k16 with ldmatrix") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    {
      Plan p = corpus_plan("19_wmma.cu", arch);
      int K = 48;
      Rng g(19);
      std::vector<uint16_t> A(16 * K), B(16 * K); // B col-major: B[n * K + k]
      for (auto& v : A) v = to_f16(g.uniform(-1, 1));
      for (auto& v : B) v = to_f16(g.uniform(-1, 1));
      int a = p.buffer("A", A), b = p.buffer("B", B), c = p.buffer("C", std::vector<float>(256));
      p.launch("wmma_gemm", {1, 1, 1}, {32, 1, 1},
               {Plan::buf(a), Plan::buf(b), Plan::buf(c), Plan::val(K)});
      p.approx(c, 1e-5, 1e-6); // the tensor core sums in its own order
      require_ok(p.run());
      auto C = p.get<float>(c);
      for (int r = 0; r < 16; ++r)
        for (int n = 0; n < 16; ++n) {
          double acc = 0;
          for (int k = 0; k < K; ++k) acc += from_f16(A[r * K + k]) * from_f16(B[n * K + k]);
          REQUIRE(close(C[r * 16 + n], acc, 1e-5, 1e-6));
        }
    }
    {
      Plan p = corpus_plan("37_mma_sync.cu", arch);
      Rng g(37);
      std::vector<uint16_t> A(256), B(128); // B stored as 8 rows (n) of 16 (k)
      for (auto& v : A) v = to_f16(g.uniform(-1, 1));
      for (auto& v : B) v = to_f16(g.uniform(-1, 1));
      int a = p.buffer("A", A), b = p.buffer("B", B), d = p.buffer("D", std::vector<float>(128));
      p.launch("mma_m16n8k16", {1, 1, 1}, {32, 1, 1}, {Plan::buf(a), Plan::buf(b), Plan::buf(d)});
      p.approx(d, 1e-5, 1e-6);
      require_ok(p.run());
      auto D = p.get<float>(d);
      for (int r = 0; r < 16; ++r)
        for (int n = 0; n < 8; ++n) {
          double acc = 0;
          for (int k = 0; k < 16; ++k) acc += from_f16(A[r * 16 + k]) * from_f16(B[n * 16 + k]);
          REQUIRE(close(D[r * 8 + n], acc, 1e-5, 1e-6));
        }
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 20 math functions") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("20_math.cu", arch);
    std::vector<float> x;
    for (int i = 0; i < 300; ++i) x.push_back(-10.0f + 20.0f * float(i) / 299.0f);
    x.push_back(0.0f);
    x.push_back(1e-8f);
    x.push_back(80.0f);
    int n = int(x.size());
    int X = p.buffer("x", x), O = p.buffer("out", std::vector<float>(5 * n)),
        D = p.buffer("d", std::vector<double>(n));
    p.launch("math_funcs", {3, 1, 1}, {128, 1, 1},
             {Plan::buf(X), Plan::buf(O), Plan::buf(D), Plan::val(n)});
    p.approx(O, 1e-5, 1e-6); // .approx inside expf, __expf, tanhf, sinf
    p.approx(D, 1e-15);      // exp (f64): Newton steps from an rcp.approx.f64 seed
    require_ok(p.run());
    auto out = p.get<float>(O);
    auto d = p.get<double>(D);
    auto ulps = [](float got, double want) {
      float w = float(want);
      if (got == w) return 0.0;
      return std::fabs(double(got) - want) /
             std::max(std::fabs(double(std::nextafter(w, INFINITY)) - w), 1e-45);
    };
    for (int i = 0; i < n; ++i) {
      double v = x[i];
      CAPTURE(v);
      CHECK(ulps(out[5 * i + 0], std::exp(v)) <= 2); // expf: 2 ulp (CUDA guide)
      CHECK(close(out[5 * i + 1], std::exp(v), 1e-5 * (2 + std::fabs(v)))); // __expf: approximate
      CHECK(ulps(out[5 * i + 2], 1 / std::sqrt(std::fabs(v) + 1)) <= 2);
      CHECK(close(out[5 * i + 3], std::tanh(v), 2e-6, 1e-7)); // tanhf: 2 ulp
      CHECK(close(out[5 * i + 4], std::sin(v), 2e-6, 1e-7));  // sinf: 2 ulp
      CHECK(close(d[i], std::exp(v), 4.5e-16));               // 1 ulp
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 21 dynamic shared memory") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("21_dynamic_shared.cu", arch);
    int n = 400, bs = 96;
    std::vector<int32_t> in(n);
    std::iota(in.begin(), in.end(), 1000);
    int I = p.buffer("in", in), O = p.buffer("out", std::vector<int32_t>(n, -1));
    p.launch("reverse_chunks", {uint32_t((n + bs - 1) / bs), 1, 1}, {uint32_t(bs), 1, 1},
             {Plan::buf(I), Plan::buf(O), Plan::val(n)}, uint32_t(bs * 4));
    require_ok(p.run());
    auto out = p.get<int32_t>(O);
    for (int i = 0; i < n; ++i) {
      int b = i / bs, t = i % bs, src = bs - 1 - t, j = b * bs + src;
      REQUIRE(out[i] == (j < n ? in[j] : -1));
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 22 device-function calls, struct arguments and recursion") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("22_device_calls.cu", arch);
    int n = 100;
    Rng g(22);
    std::vector<float> v(3 * n);
    for (auto& x : v) x = g.uniform(-1, 1);
    int V = p.buffer("v", v), O = p.buffer("out", std::vector<float>(n));
    p.launch("device_calls", {2, 1, 1}, {64, 1, 1}, {Plan::buf(V), Plan::buf(O), Plan::val(n)});
    require_ok(p.run());
    auto out = p.get<float>(O);
    std::function<int(int)> fib = [&](int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); };
    for (int i = 0; i < n; ++i)
      REQUIRE(close(out[i],
                    fib(i % 12) + (v[3 * i] * 1.0 + v[3 * i + 1] * 2.0 + v[3 * i + 2] * 3.0), 1e-6,
                    1e-6));
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 23 printf is captured in block order") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("23_printf.cu", arch);
    p.launch("hello", {3, 1, 1}, {64, 1, 1}, {Plan::val<int32_t>(7)});
    auto r = p.run();
    require_ok(r);
    CHECK(r.printf_output == "block 0 of 3: tag=7 x=0.00 ok 1099511627776\n"
                             "block 1 of 3: tag=7 x=1.50 ok 1099511627776\n"
                             "block 2 of 3: tag=7 x=3.00 ok 1099511627776\n");
    CHECK(!r.printf_truncated);
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 24 loops with break") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("24_loop_break.cu", arch);
    int rows = 77, cols = 40;
    Rng g(24);
    std::vector<int32_t> m(rows * cols);
    for (auto& v : m) v = int32_t(g.next() % 50);
    int M = p.buffer("m", m), P = p.buffer("pos", std::vector<int32_t>(rows));
    p.launch("find_first", {3, 1, 1}, {32, 1, 1},
             {Plan::buf(M), Plan::buf(P), Plan::val(rows), Plan::val(cols), Plan::val(7)});
    auto r = p.run();
    require_ok(r);
    auto pos = p.get<int32_t>(P);
    for (int i = 0; i < rows; ++i) {
      int f = -1;
      for (int c = 0; c < cols; ++c)
        if (m[i * cols + c] == 7) {
          f = c;
          break;
        }
      REQUIRE(pos[i] == f);
    }
    CHECK(counter(r, "divergent_branches") > 0);
    CHECK(counter(r, "active_lane_efficiency") < 1.0);
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 25 ballot, activemask, all, any") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("25_ballot.cu", arch);
    int n = 150; // the last warp is partial (lanes past n read 0)
    Rng g(25);
    std::vector<int32_t> x(n);
    for (auto& v : x) v = int32_t(g.next() % 300) - 100;
    for (int i = 64; i < 96; ++i) x[i] = 5; // one warp all positive
    int X = p.buffer("x", x), Bl = p.buffer("ballot", std::vector<uint32_t>(5)),
        Ac = p.buffer("active", std::vector<uint32_t>(5)),
        Cn = p.buffer("counts", std::vector<int32_t>(5)),
        Al = p.buffer("all", std::vector<int32_t>(5)),
        An = p.buffer("any", std::vector<int32_t>(5));
    p.launch("votes", {1, 1, 1}, {160, 1, 1},
             {Plan::buf(X), Plan::buf(Bl), Plan::buf(Ac), Plan::buf(Cn), Plan::buf(Al),
              Plan::buf(An), Plan::val(n)});
    require_ok(p.run());
    auto bl = p.get<uint32_t>(Bl), ac = p.get<uint32_t>(Ac);
    auto cn = p.get<int32_t>(Cn), al = p.get<int32_t>(Al), an = p.get<int32_t>(An);
    for (int w = 0; w < 5; ++w) {
      uint32_t b = 0;
      bool all = true, any = false;
      for (int l = 0; l < 32; ++l) {
        int i = w * 32 + l;
        int v = i < n ? x[i] : 0;
        if (v > 0) b |= 1u << l;
        all = all && v > 0;
        any = any || v > 100;
      }
      CHECK(bl[w] == b);
      CHECK(cn[w] == std::popcount(b));
      CHECK(ac[w] == 0x55555555u);
      CHECK(al[w] == int(all));
      CHECK((an[w] != 0) == any);
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 26 atomicCAS loops") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("26_atomic_cas.cu", arch);
    int n = 3000;
    Rng g(26);
    std::vector<float> x(n);
    for (auto& v : x) v = g.uniform(-100, 100);
    int X = p.buffer("x", x), MX = p.buffer("mx", std::vector<float>(1, -1e30f)),
        S = p.buffer("sum", std::vector<double>(1, 0.0));
    p.launch("cas_loops", {12, 1, 1}, {256, 1, 1},
             {Plan::buf(X), Plan::buf(MX), Plan::buf(S), Plan::val(n)});
    p.approx(S, 1e-12, 1e-12); // double sum in atomicCAS order
    require_ok(p.run());
    double s = 0;
    for (float v : x) s += v;
    CHECK(p.get<float>(MX)[0] == *std::max_element(x.begin(), x.end()));
    CHECK(close(p.get<double>(S)[0], s, 1e-12, 1e-9));
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 29 f64 dot product with double atomicAdd") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("29_dot_f64.cu", arch);
    int n = 5000;
    Rng g(29);
    std::vector<double> a(n), b(n);
    for (auto& v : a) v = g.uniform(-1, 1);
    for (auto& v : b) v = g.uniform(-1, 1);
    int A = p.buffer("a", a), B = p.buffer("b", b),
        O = p.buffer("out", std::vector<double>(1, 0.0));
    p.launch("dot_f64", {8, 1, 1}, {128, 1, 1},
             {Plan::buf(A), Plan::buf(B), Plan::buf(O), Plan::val(n)});
    p.approx(O, 1e-12, 1e-12); // block sums added in atomic order
    auto r = p.run();
    require_ok(r);
    double s = 0;
    for (int i = 0; i < n; ++i) s += a[i] * b[i];
    CHECK(close(p.get<double>(O)[0], s, 1e-12, 1e-12));
    CHECK(counter(r, "flops_f64") >= 2.0 * n);
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 30 bit operations") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("30_bit_ops.cu", arch);
    int n = 100;
    Rng g(30);
    std::vector<uint32_t> x(n), y(n);
    for (int i = 0; i < n; ++i) x[i] = g.next() >> (i % 13), y[i] = g.next();
    x[0] = 0;
    x[1] = 0xffffffffu;
    int X = p.buffer("x", x), Y = p.buffer("y", y),
        O = p.buffer("out", std::vector<uint32_t>(8 * n)),
        W = p.buffer("wide", std::vector<uint64_t>(n));
    p.launch("bit_ops", {1, 1, 1}, {128, 1, 1},
             {Plan::buf(X), Plan::buf(Y), Plan::buf(O), Plan::buf(W), Plan::val(n)});
    require_ok(p.run());
    auto out = p.get<uint32_t>(O);
    auto wide = p.get<uint64_t>(W);
    for (int i = 0; i < n; ++i) {
      uint32_t a = x[i], b = y[i];
      CAPTURE(i);
      CHECK(out[8 * i + 0] == uint32_t(std::popcount(a)));
      CHECK(out[8 * i + 1] == uint32_t(std::countl_zero(a)));
      uint32_t rv = 0;
      for (int k = 0; k < 32; ++k) rv |= ((a >> k) & 1) << (31 - k);
      CHECK(out[8 * i + 2] == rv);
      CHECK(out[8 * i + 3] == (a ? uint32_t(std::countr_zero(a) + 1) : 0u));
      CHECK(out[8 * i + 4] == ((a >> 3) & 0xff));
      uint64_t t = (uint64_t(b) << 32) | a;
      uint32_t sel = 0x5140, pr = 0;
      for (int k = 0; k < 4; ++k)
        pr |= uint32_t((t >> (8 * ((sel >> (4 * k)) & 7))) & 0xff) << (8 * k);
      CHECK(out[8 * i + 5] == pr);
      CHECK(out[8 * i + 6] == uint32_t((uint64_t(a) * b) >> 32));
      uint32_t sh = b & 31;
      CHECK(out[8 * i + 7] == uint32_t(((uint64_t(b) << 32 | a) << sh) >> 32));
      uint64_t m = uint64_t(a) * b + 12345ull;
      uint64_t hi = uint64_t((unsigned __int128)m * 0x9e3779b97f4a7c15ull >> 64);
      CHECK(wide[i] == (hi ^ ((uint64_t(a) << 32) | b)));
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 31 conversions and rounding modes") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("31_convert.cu", arch);
    std::vector<float> f = {0.5f,   1.5f,   2.5f,     -0.5f,    -1.5f, -2.5f,         3.7f,
                            -3.7f,  1e10f,  -1e10f,   0.0f,     -0.0f, 2147483520.0f, 300.0f,
                            -20.0f, 254.6f, 65519.0f, 65520.0f, 1e-8f, 0.1f};
    f.push_back(std::bit_cast<float>(0x7fc00000u)); // NaN
    Rng g(31);
    for (int i = 0; i < 60; ++i) f.push_back(g.uniform(-70000, 70000));
    int n = int(f.size());
    int F = p.buffer("f", f), I = p.buffer("ints", std::vector<int32_t>(4 * n)),
        U = p.buffer("u8", std::vector<uint8_t>(n)), H = p.buffer("h", std::vector<uint16_t>(n)),
        D = p.buffer("dd", std::vector<double>(n)), FF = p.buffer("ff", std::vector<float>(n));
    p.launch("convert", {1, 1, 1}, {128, 1, 1},
             {Plan::buf(F), Plan::buf(I), Plan::buf(U), Plan::buf(H), Plan::buf(D), Plan::buf(FF),
              Plan::val(n)});
    require_ok(p.run());
    auto ints = p.get<int32_t>(I);
    auto u8 = p.get<uint8_t>(U);
    auto h = p.get<uint16_t>(H);
    auto dd = p.get<double>(D);
    auto ff = p.get<float>(FF);
    auto sat = [](double v) -> int32_t {
      if (std::isnan(v)) return 0;
      if (v >= 2147483647.0) return 2147483647;
      if (v <= -2147483648.0) return -2147483647 - 1;
      return int32_t(v);
    };
    for (int i = 0; i < n; ++i) {
      double v = f[i];
      CAPTURE(v);
      CHECK(ints[4 * i + 0] == sat(std::nearbyint(v)));
      CHECK(ints[4 * i + 1] == sat(std::trunc(v)));
      CHECK(ints[4 * i + 2] == sat(std::floor(v)));
      CHECK(ints[4 * i + 3] == sat(std::ceil(v)));
      if (!std::isnan(v)) {
        double c = std::min(std::max(v, 0.0), 255.0);
        CHECK(u8[i] == uint8_t(std::nearbyint(c)));
        CHECK(h[i] == to_f16(v, true));
        CHECK(dd[i] == double(sat(std::trunc(v))) * 0.1);
      } else {
        CHECK(h[i] == 0x7fff);
      }
      // 16777217 + i rounds to nearest even; 0xffffffff - i toward zero.
      float want = float(double(16777217 + i)) +
                   std::bit_cast<float>(fbits(float(double(0xffffffffu - uint32_t(i)))) -
                                        (double(float(double(0xffffffffu - uint32_t(i)))) >
                                                 double(0xffffffffu - uint32_t(i))
                                             ? 1u
                                             : 0u));
      CHECK(ff[i] == want);
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 32 a local array on the stack") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("32_local_array.cu", arch);
    int n = 70;
    std::vector<int32_t> idx(n);
    for (int i = 0; i < n; ++i) idx[i] = i * 5 + 3;
    int I = p.buffer("idx", idx), O = p.buffer("out", std::vector<int32_t>(n));
    p.launch("local_array", {1, 1, 1}, {96, 1, 1}, {Plan::buf(I), Plan::buf(O), Plan::val(n)});
    require_ok(p.run());
    auto out = p.get<int32_t>(O);
    for (int i = 0; i < n; ++i) {
      int a[16];
      for (int k = 0; k < 16; ++k) a[k] = k * k + i;
      int s = 0;
      for (int k = 0; k < 16; ++k) s += a[(k * 7 + idx[i]) & 15];
      REQUIRE(out[i] == a[idx[i] & 15] + s);
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 33 every integer atomic, from many blocks in parallel") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("33_atomics.cu", arch);
    int n = 10000;
    Rng g(33);
    std::vector<int32_t> x(n);
    for (auto& v : x) v = int32_t(g.next() % 2000001) - 1000000;
    std::vector<int32_t> r0 = {0, 1 << 30, -(1 << 30), 0, 0, 0, -1, 0, 12345};
    int X = p.buffer("x", x), R = p.buffer("r", r0),
        B = p.buffer("big", std::vector<uint64_t>(1, 0)),
        F = p.buffer("fl", std::vector<float>(1, 0.0f));
    p.launch("atomics", {40, 1, 1}, {256, 1, 1},
             {Plan::buf(X), Plan::buf(R), Plan::buf(B), Plan::buf(F), Plan::val(n)});
    p.any_value(R, 8); // atomicExch: whichever thread came last
    auto res = p.run();
    require_ok(res);
    auto r = p.get<int32_t>(R);
    CHECK(r[0] == n);
    CHECK(r[1] == *std::min_element(x.begin(), x.end()));
    CHECK(r[2] == *std::max_element(x.begin(), x.end()));
    CHECK(r[3] == n % 1000);
    CHECK(r[4] == (1000 - n % 1000) % 1000);
    CHECK(uint32_t(r[5]) == 0xffffffffu);
    CHECK(uint32_t(r[6]) == 0xffff0000u);
    int32_t xx = 0;
    for (int v : x) xx ^= v;
    CHECK(r[7] == xx);
    CHECK(std::find(x.begin(), x.end(), r[8]) != x.end());
    uint64_t big = 0;
    for (int v : x) big += uint64_t(v & 0xffff) << 20;
    CHECK(p.get<uint64_t>(B)[0] == big);
    CHECK(p.get<float>(F)[0] == -0.5f * n);
    CHECK(counter(res, "atomics") == 11.0 * n);
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 34 shfl up / idx and match.any with partial masks") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("34_shfl_match.cu", arch);
    int n = 96;
    Rng g(34);
    std::vector<int32_t> x(n);
    for (auto& v : x) v = int32_t(g.next() % 1000);
    int X = p.buffer("x", x), U = p.buffer("up", std::vector<int32_t>(n)),
        I = p.buffer("idx", std::vector<int32_t>(n)),
        P = p.buffer("peers", std::vector<uint32_t>(n));
    p.launch("shfl_match", {1, 1, 1}, {96, 1, 1},
             {Plan::buf(X), Plan::buf(U), Plan::buf(I), Plan::buf(P), Plan::val(n)});
    require_ok(p.run());
    auto up = p.get<int32_t>(U), idx = p.get<int32_t>(I);
    auto peers = p.get<uint32_t>(P);
    for (int i = 0; i < n; ++i) {
      int l = i % 32, w = i / 32;
      CHECK(up[i] == (l >= 3 ? x[i - 3] : x[i]));
      CHECK(idx[i] == x[w * 32 + (l * 5) % 32]);
      uint32_t m = 0;
      for (int k = 0; k < 32; ++k)
        if ((k >= 16) == (l >= 16) && x[w * 32 + k] % 4 == x[i] % 4) m |= 1u << k;
      CHECK(peers[i] == m);
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 35 3-D stencil and 36 __constant__ / __device__ data") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    {
      Plan p = corpus_plan("35_stencil_3d.cu", arch);
      int nx = 19, ny = 10, nz = 7;
      Rng g(35);
      std::vector<float> in(nx * ny * nz);
      for (auto& v : in) v = g.uniform(-1, 1);
      int I = p.buffer("in", in), O = p.buffer("out", std::vector<float>(nx * ny * nz));
      p.launch("stencil3d", {3, 2, 2}, {8, 8, 4},
               {Plan::buf(I), Plan::buf(O), Plan::val(nx), Plan::val(ny), Plan::val(nz)});
      // ptxas contracts the PTX's mul.f32 + sub.f32 (no rounding modifier, so the PTX ISA allows
      // it) into one fma; the simulator rounds each as written: up to a few ulp apart.
      p.approx(O, 1e-6, 1e-6);
      require_ok(p.run());
      auto out = p.get<float>(O);
      auto at = [&](int a, int b, int c) {
        a = std::clamp(a, 0, nx - 1), b = std::clamp(b, 0, ny - 1), c = std::clamp(c, 0, nz - 1);
        return double(in[(c * ny + b) * nx + a]);
      };
      for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y)
          for (int x = 0; x < nx; ++x) {
            double want = 6 * at(x, y, z) - at(x - 1, y, z) - at(x + 1, y, z) - at(x, y - 1, z) -
                          at(x, y + 1, z) - at(x, y, z - 1) - at(x, y, z + 1);
            REQUIRE(close(out[(z * ny + y) * nx + x], want, 1e-5, 1e-6));
          }
    }
    {
      Plan p = corpus_plan("36_const_global.cu", arch);
      int n = 100;
      std::vector<float> x(n);
      for (int i = 0; i < n; ++i) x[i] = float(i) * 0.5f;
      int X = p.buffer("x", x), O = p.buffer("out", std::vector<float>(n)),
          H = p.buffer("hits", std::vector<int32_t>(1));
      p.launch("const_global", {1, 1, 1}, {128, 1, 1},
               {Plan::buf(X), Plan::buf(O), Plan::buf(H), Plan::val(n)});
      require_ok(p.run());
      auto out = p.get<float>(O);
      const float bias[4] = {0.5f, -0.5f, 0.25f, -0.25f};
      for (int i = 0; i < n; ++i) REQUIRE(out[i] == std::fma(float(i % 8 + 1), x[i], bias[i % 4]));
      CHECK(p.get<int32_t>(H)[0] == 1);
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 38 fast-math and integer intrinsics") {
  for (auto arch : kArchs) {
    CAPTURE(arch);
    Plan p = corpus_plan("38_intrinsics.cu", arch);
    int n = 96;
    Rng g(38);
    std::vector<float> x(n);
    std::vector<uint16_t> hv(2 * n);
    std::vector<uint32_t> u(n);
    std::vector<int64_t> l(n);
    for (int i = 0; i < n; ++i) {
      x[i] = g.uniform(-3, 3);
      hv[2 * i] = to_f16(g.uniform(-4, 4));
      hv[2 * i + 1] = to_f16(g.uniform(-4, 4));
      u[i] = g.next();
      l[i] = int64_t((uint64_t(g.next()) << 32) | g.next()) >> (i % 40);
    }
    int X = p.buffer("x", x), O = p.buffer("out", std::vector<float>(8 * n)), H = p.buffer("h", hv),
        U = p.buffer("u", u), L = p.buffer("l", l);
    p.launch("intrinsics", {2, 1, 1}, {64, 1, 1},
             {Plan::buf(X), Plan::buf(O), Plan::buf(H), Plan::buf(U), Plan::buf(L), Plan::val(n)});
    p.approx(O, 1e-5, 1e-5); // __fdividef, __sinf, __cosf, __logf: .approx
    p.approx(H, 2e-3, 1e-4); // h2exp: ex2.approx.f16x2
    require_ok(p.run());
    auto out = p.get<float>(O);
    auto h = p.get<uint16_t>(H);
    auto uo = p.get<uint32_t>(U);
    auto lo = p.get<int64_t>(L);
    for (int i = 0; i < n; ++i) {
      double v = x[i];
      CAPTURE(v);
      CHECK(close(out[8 * i + 0], v / 3, 1e-6, 1e-7));
      CHECK(close(out[8 * i + 1], std::sin(v), 0, 2e-6));
      CHECK(close(out[8 * i + 2], std::cos(v), 0, 2e-6));
      CHECK(close(out[8 * i + 3], std::log(v + 4), 0, 2e-6));
      CHECK(out[8 * i + 4] == std::min(std::max(x[i], 0.0f), 1.0f));
      double prod = double(x[i]) * double(1.1f); // exact; round toward zero
      float rz = float(prod);
      if (std::fabs(double(rz)) > std::fabs(prod)) rz = std::nextafter(rz, 0.0f);
      CHECK(out[8 * i + 5] == rz);
      CHECK(out[8 * i + 6] == 1.0f / (x[i] + 5.0f));
      CHECK(out[8 * i + 7] == std::sqrt(std::fabs(x[i])));
      for (int k = 0; k < 2; ++k)
        CHECK(close(from_f16(h[2 * i + k]), std::exp(from_f16(hv[2 * i + k])), 2e-3, 1e-4));
      uint32_t w = u[i], vadd = 0;
      for (int b = 0; b < 4; ++b) vadd |= ((((w >> (8 * b)) & 0xff) + 1) & 0xff) << (8 * b);
      uint32_t m24 = uint32_t(uint64_t(w & 0xffffff) * 7);
      CHECK(uo[i] == m24 + vadd + (w > 5 ? w - 5 : 5 - w) + 1);
      uint64_t q = uint64_t(l[i]), rv = 0;
      for (int b = 0; b < 64; ++b) rv |= ((q >> b) & 1) << (63 - b);
      int64_t want =
          int64_t(rv) + std::popcount(q) + std::countl_zero(q) + l[i] / (i + 1) + l[i] % 7;
      CHECK(lo[i] == want);
    }
  }
}

TEST_CASE(CORPUS_SUITE_PREFIX "corpus 39 TMA tiles through tensor maps (128B swizzle, ragged)") {
  // compute_90 only: cp.async.bulk.tensor needs sm_90. 19 x 70 floats in rows padded to 72 (a
  // tensor map's row stride must be a multiple of 16 bytes); tiles of 8 x 32 overhang both edges.
  const int rows = 19, cols = 70, pitch = 72, gx = 3, gy = 3;
  Plan p = corpus_plan("39_tma_tile.cu", "compute_90");
  Rng g(39);
  std::vector<float> x(size_t(rows) * pitch);
  for (auto& v : x) v = g.uniform(-4, 4);
  const float sentinel = -777.0f;
  int X = p.buffer("x", x), Y = p.buffer("y", std::vector<float>(x.size(), sentinel)),
      R = p.buffer("raw", std::vector<float>(size_t(gx * gy) * 256, sentinel));
  const uint64_t stride = uint64_t(pitch) * 4;
  p.launch("tma_tile", {gx, gy, 1}, {256, 1, 1},
           {p.tensor_map(X, {cols, rows}, {32, 8}, wb::TmSwizzle::b128, {stride}),
            p.tensor_map(Y, {cols, rows}, {32, 8}, wb::TmSwizzle::none, {stride}), Plan::buf(R)});
  require_ok(p.run());
  auto y = p.get<float>(Y);
  auto raw = p.get<float>(R);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < pitch; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      const float xv = x[size_t(r * pitch + c)];
      // The store writes whole 16-byte pieces: columns 70 and 71, past the edge but in the
      // 16 bytes it falls in, get the box's values there (2 x 0 + 1: the load zero-filled them).
      CHECK(fbits(y[size_t(r * pitch + c)]) ==
            fbits(c < cols ? 2.0f * xv + 1.0f : c < 72 ? 1.0f : sentinel));
    }
  for (int by = 0; by < gy; ++by)
    for (int bx = 0; bx < gx; ++bx)
      for (int i = 0; i < 256; ++i) {
        // Slot i of the swizzled box holds element (r, k), k's chunk XOR the row's 3 low bits.
        const int r = i / 32, chunk = (i % 32) / 4, k = ((chunk ^ (r % 8)) * 4) + i % 4;
        const int gr = by * 8 + r, gc = bx * 32 + k;
        const float want = gr < rows && gc < cols ? x[size_t(gr * pitch + gc)] : 0.0f;
        CAPTURE(i);
        CHECK(fbits(raw[size_t((by * gx + bx) * 256 + i)]) == fbits(want));
      }
}
