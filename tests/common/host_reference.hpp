// The check on the judge: a puzzle's reference.cu, run on the simulator through the core API at
// every [[case]] of its puzzle.toml, against an independent host computation written in plain C++
// (double or long double, straight from the formula in the README). The references judge every
// learner's kernel, so a wrong reference would pass wrong answers. Each puzzles_host_*_test.cpp
// file holds the host computations of some puzzles.
#pragma once
#include "common/puzzle_suite.hpp"
#include "core/backend.hpp"
#include "core/catalog.hpp"
#include "core/check.hpp"
#include "core/compile.hpp"
#include "core/dtype.hpp"
#include "core/generate.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>

namespace wb::host_ref {

using Vals = std::map<std::string, std::vector<double>>; // buffer name -> elements as doubles

inline const Catalog& catalog() {
  return test::builtin_catalog();
}

inline Backend& sim() {
  static std::unique_ptr<Backend> b = [] {
    std::string why;
    auto s = make_sim_backend(why);
    if (!s) FAIL(fmt::format("the simulator is not available: {}", why));
    return s;
  }();
  return *b;
}

inline std::string slurp(const fs::path& p) {
  return test::read_file(p);
}

// Builds the buffers of one case from the puzzle's generators (as the checker does), runs the
// reference's launches on the simulator, and returns every buffer's contents afterwards.
inline Vals run_reference(const Puzzle& p, const Program& prog, const Case& c, size_t case_index,
                          uint64_t seed) {
  CaseSetup setup = prepare_case(p, c, p.env(c), seed, case_index);
  std::vector<HostBuffer>& bufs = setup.buffers;
  const std::vector<Launch>& launches = setup.launches;
  RunPlan plan;
  plan.program = &prog;
  plan.buffers = &bufs;
  plan.launches = launches;
  plan.timeout_s = 60;
  plan.seed = seed;
  plan.counters = false;
  RunResult r = sim().run(plan);
  INFO(fault_name(r.fault.kind), ": ", r.fault.message);
  REQUIRE_FALSE(r.fault);
  Vals out;
  for (auto& hb : bufs) {
    size_t es = dtype_size(hb.type), n = hb.data_bytes / es;
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = load_element(hb.type, hb.data() + i * es);
    out[hb.name] = std::move(v);
  }
  return out;
}

struct Tol {
  double rtol = 0, atol = 0;
};

// What the host says the outputs must be, from the inputs the reference saw.
using HostFn = std::function<Vals(const Env& sizes, const Vals& in)>;

inline void check_puzzle_reference(const std::string& id, Tol tol, const HostFn& host) {
  const Puzzle* p = catalog().find_puzzle(id);
  REQUIRE_MESSAGE(p, "no puzzle ", id);
  CompileOptions co = sim().compile_options();
  for (auto& t : p->tunables) co.defines[t.name] = t.default_value;
  Program prog = compile_source(slurp(p->reference), "reference.cu", co);
  REQUIRE_MESSAGE(prog.ok, prog.log);
  for (size_t ci = 0; ci < p->cases.size(); ++ci) {
    const Case& c = p->cases[ci];
    std::string label = c.label;
    for (auto& [k, v] : c.sizes) label += fmt::format(" {}={}", k, v);
    CAPTURE(id);
    CAPTURE(label);
    uint64_t seed = 0x5eed0000ull + ci;
    Vals got = run_reference(*p, prog, c, ci, seed);
    Vals want = host(c.sizes, got); // inputs are unchanged by the run; outputs are overwritten
    for (auto& [name, expect] : want) {
      const std::vector<double>& actual = got.at(name);
      REQUIRE(actual.size() == expect.size());
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < expect.size(); ++i) {
        bool ok = std::fabs(actual[i] - expect[i]) <= tol.atol + tol.rtol * std::fabs(expect[i]);
        if (!ok && bad++ == 0) first = i;
      }
      CHECK_MESSAGE(bad == 0,
                    fmt::format("{}: {} of {} wrong, first {}[{}] = {} where the host says {}",
                                name, bad, expect.size(), name, first, bad ? actual[first] : 0.0,
                                bad ? expect[first] : 0.0));
    }
  }
}

inline int64_t sz(const Env& e, const char* k) {
  return e.at(k);
}
// Rounds to the nearest bf16 (8 significant bits), ties to even: straight from the format, not
// through f32 (which would round twice).
inline double to_bf16(long double v) {
  if (v == 0 || !std::isfinite(v)) return double(v);
  int e = 0;
  long double m = std::frexp(v, &e); // v = m 2^e, 0.5 <= |m| < 1
  return double(std::ldexp(std::nearbyint(m * 256.0L), e - 8));
}
// C = A x B^T with B stored [N, K] (an nn.Linear weight), each sum in long double and handed to
// `out(row, col, sum)` for the puzzle's scaling and rounding. A and B hold the inputs decoded
// exactly from their stored bits, so every product of two 16-bit or 8-bit floats is exact.
inline std::vector<double>
gemm_abt(int64_t M, int64_t N, int64_t K, const std::vector<double>& A,
         const std::vector<double>& B,
         const std::function<double(int64_t, int64_t, long double)>& out) {
  std::vector<double> C(size_t(M * N));
  for (int64_t r = 0; r < M; ++r)
    for (int64_t c = 0; c < N; ++c) {
      long double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += (long double)A[size_t(r * K + k)] * (long double)B[size_t(c * K + k)];
      C[size_t(r * N + c)] = out(r, c, acc);
    }
  return C;
}
// One query row of softmax attention in long double: query row q[qrow .. qrow + D) against the
// first `keys` rows of k and v (row j at kv + j D): every score times 1/sqrt(D), their max m, the
// weights exp(score - m) and their sum l, and o[d] = the weighted sum of V over l. Returns
// m + log(l), the row's log-sum-exp.
inline long double attention_row(const std::vector<double>& q, int64_t qrow,
                                 const std::vector<double>& k, const std::vector<double>& v,
                                 int64_t kv, int64_t keys, int64_t D, std::vector<long double>& o) {
  const long double scale = 1.0L / std::sqrt((long double)D);
  std::vector<long double> w(static_cast<size_t>(keys));
  long double m = -INFINITY;
  for (int64_t j = 0; j < keys; ++j) {
    long double dot = 0;
    for (int64_t d = 0; d < D; ++d)
      dot += (long double)q[size_t(qrow + d)] * (long double)k[size_t(kv + j * D + d)];
    w[size_t(j)] = dot * scale;
    m = std::max(m, w[size_t(j)]);
  }
  long double l = 0;
  for (int64_t j = 0; j < keys; ++j) l += (w[size_t(j)] = std::exp(w[size_t(j)] - m));
  o.assign(size_t(D), 0.0L);
  for (int64_t d = 0; d < D; ++d) {
    long double acc = 0;
    for (int64_t j = 0; j < keys; ++j) acc += w[size_t(j)] * (long double)v[size_t(kv + j * D + d)];
    o[size_t(d)] = acc / l;
  }
  return m + std::log(l);
}
inline double f32(double v) {
  return double(float(v));
} // round to f32, as a stored output is

} // namespace wb::host_ref
