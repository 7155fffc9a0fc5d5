// The corpus on the simulator and on the GPU, side by side (label gpu): every plan of
// tests/common/corpus_suite.hpp and tests/common/tma_suite.hpp runs on both backends with the same
// inputs, and every output buffer must be bit-identical, except where the case says the two may
// differ (p.approx: .approx instructions, sums in atomic or tensor-core order, within the stated
// tolerance; p.any_value: an element whose value depends on which thread's atomic came last). The
// suites' own checks against host-computed results still run, on the simulator's output.
#define CORPUS_SUITE_PREFIX "parity: "
#include "common/corpus_suite.hpp"
#define TMA_SUITE_PREFIX "parity: "
#include "common/tma_suite.hpp"

#include <cstdio>

namespace {

wb::Backend& gpu() {
  static std::unique_ptr<wb::Backend> b = [] {
    std::string why;
    auto b = wb::make_cuda_backend(why);
    if (!b) throw std::runtime_error("no CUDA backend: " + why);
    return b;
  }();
  return *b;
}

size_t elem_bytes(wb::DType t) {
  switch (t) {
  case wb::DType::f64:
  case wb::DType::i64:
    return 8;
  case wb::DType::f32:
  case wb::DType::i32:
  case wb::DType::u32:
    return 4;
  case wb::DType::f16:
  case wb::DType::bf16:
  case wb::DType::i16:
    return 2;
  default:
    return 1;
  }
}

// The element as a double where the type is a float type (for tolerances); false otherwise.
bool as_double(const std::byte* p, wb::DType t, double& v) {
  if (t == wb::DType::f32) {
    float f;
    std::memcpy(&f, p, 4);
    v = f;
  } else if (t == wb::DType::f64) {
    std::memcpy(&v, p, 8);
  } else if (t == wb::DType::f16) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    v = from_f16(h);
  } else if (t == wb::DType::bf16) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    v = from_bf16(h);
  } else {
    return false;
  }
  return true;
}

std::string hex(const std::byte* p, size_t n) {
  std::string s = "0x";
  for (size_t i = n; i-- > 0;) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", unsigned(p[i]));
    s += b;
  }
  return s;
}

// Runs the plan on the simulator (its result and buffers are what the suite then checks) and on
// the GPU from the same initial images, and compares every buffer.
wb::RunResult run_both(simtest::Plan& p, unsigned workers) {
  const std::vector<wb::HostBuffer> initial = p.buffers;
  wb::RunResult rs = p.run_sim(workers);
  if (rs.fault) return rs; // the suite reports it; a faulting plan has no outputs to compare
  std::vector<wb::HostBuffer> g = initial;
  wb::RunPlan gp = p.rp;
  gp.program = &p.program;
  gp.buffers = &g;
  wb::RunResult rg = gpu().run(gp);
  const std::string what = p.program.file + " (" + p.program.arch + ", " +
                           (p.launches.empty() ? std::string() : p.launches[0].kernel) + ")";
  INFO(what);
  REQUIRE_MESSAGE(!rg.fault, "the GPU run failed: " << rg.fault.message);
  int identical = 0, tolerated = 0;
  double worst = 0; // largest |difference| / (atol + rtol * |gpu|) among tolerated elements
  for (size_t bi = 0; bi < p.buffers.size(); ++bi) {
    const wb::HostBuffer& s = p.buffers[bi];
    const wb::HostBuffer& d = g[bi];
    REQUIRE(s.data_bytes == d.data_bytes);
    const std::byte* sp = s.image.data() + s.guard_bytes;
    const std::byte* dp = d.image.data() + d.guard_bytes;
    if (std::memcmp(sp, dp, s.data_bytes) == 0) {
      ++identical;
      continue;
    }
    auto rule_it = p.parity.find(int(bi));
    const simtest::ParityRule* rule = rule_it == p.parity.end() ? nullptr : &rule_it->second;
    const size_t eb = elem_bytes(s.type), n = s.data_bytes / eb;
    size_t bad = 0;
    std::string first;
    for (size_t i = 0; i < n; ++i) {
      if (std::memcmp(sp + i * eb, dp + i * eb, eb) == 0) continue;
      if (rule && std::find(rule->any.begin(), rule->any.end(), i) != rule->any.end()) continue;
      double a, b;
      if (rule && (rule->rtol > 0 || rule->atol > 0) && as_double(sp + i * eb, s.type, a) &&
          as_double(dp + i * eb, s.type, b)) {
        double lim = rule->atol + rule->rtol * std::fabs(b);
        if (std::fabs(a - b) <= lim) {
          worst = std::max(worst, lim > 0 ? std::fabs(a - b) / lim : 0.0);
          continue;
        }
      }
      if (bad++ < 4)
        first += "\n  " + s.name + "[" + std::to_string(i) + "]: simulator " +
                 hex(sp + i * eb, eb) + ", GPU " + hex(dp + i * eb, eb);
    }
    CHECK_MESSAGE(bad == 0, "buffer " << s.name << ": " << bad << " of " << n
                                      << " elements differ between the simulator and the GPU"
                                      << first);
    if (!bad) ++tolerated;
  }
  std::fprintf(stderr, "parity %-60s %d buffers bit-identical, %d within their tolerance%s\n",
               what.c_str(), identical, tolerated,
               tolerated ? (" (worst at " + std::to_string(worst) + " of it)").c_str() : "");
  return rs;
}

[[maybe_unused]] const bool installed = [] {
  simtest::plan_runner() = run_both;
  return true;
}();

} // namespace
