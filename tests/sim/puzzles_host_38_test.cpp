// Puzzle 38 (FlashAttention-2 backward): the reference against an independent host computation
// (host_reference.hpp), and the README's formulas against a finite-difference gradient.
#include "common/host_reference.hpp"

#include <vector>

using namespace wb;
using namespace wb::host_ref;

namespace {

// The formulas of the README for one head, in long double: p = exp(s - lse), delta = rowsum(dout
// o), ds = p (dp - delta), dv = p^T dout, dk = ds^T q / sqrt(D), dq = ds k / sqrt(D).
struct Grads {
  std::vector<long double> dq, dk, dv;
};
Grads backward(const double* q, const double* k, const double* v, const double* o,
               const double* dout, const double* lse, int64_t Sq, int64_t Sk, int64_t D,
               bool causal) {
  Grads r{std::vector<long double>(size_t(Sq * D), 0.0L),
          std::vector<long double>(size_t(Sk * D), 0.0L),
          std::vector<long double>(size_t(Sk * D), 0.0L)};
  const long double scale = 1.0L / std::sqrt((long double)D);
  for (int64_t i = 0; i < Sq; ++i) {
    long double delta = 0;
    for (int64_t d = 0; d < D; ++d) delta += (long double)dout[i * D + d] * o[i * D + d];
    for (int64_t j = 0; j < Sk; ++j) {
      if (causal && j > i + Sk - Sq) continue;
      long double s = 0, dp = 0;
      for (int64_t d = 0; d < D; ++d) {
        s += (long double)q[i * D + d] * k[j * D + d];
        dp += (long double)dout[i * D + d] * v[j * D + d];
      }
      const long double p = std::exp(s * scale - lse[i]), ds = p * (dp - delta);
      for (int64_t d = 0; d < D; ++d) {
        r.dv[size_t(j * D + d)] += p * dout[i * D + d];
        r.dk[size_t(j * D + d)] += ds * q[i * D + d] * scale;
        r.dq[size_t(i * D + d)] += ds * k[j * D + d] * scale;
      }
    }
  }
  return r;
}

// The forward in long double: o and lse of softmax(q k^T / sqrt(D) + mask) v.
void forward(const std::vector<double>& q, const std::vector<double>& k,
             const std::vector<double>& v, int64_t Sq, int64_t Sk, int64_t D, bool causal,
             std::vector<double>& o, std::vector<double>& lse) {
  o.assign(size_t(Sq * D), 0.0);
  lse.assign(size_t(Sq), 0.0);
  for (int64_t i = 0; i < Sq; ++i) {
    std::vector<long double> s(static_cast<size_t>(Sk));
    long double m = -INFINITY;
    for (int64_t j = 0; j < Sk; ++j) {
      long double x = 0;
      for (int64_t d = 0; d < D; ++d) x += (long double)q[size_t(i * D + d)] * k[size_t(j * D + d)];
      s[size_t(j)] = x / std::sqrt((long double)D);
      if (!(causal && j > i + Sk - Sq)) m = std::max(m, s[size_t(j)]);
    }
    long double l = 0;
    for (int64_t j = 0; j < Sk; ++j)
      if (!(causal && j > i + Sk - Sq)) l += std::exp(s[size_t(j)] - m);
    lse[size_t(i)] = double(m + std::log(l));
    for (int64_t j = 0; j < Sk; ++j) {
      if (causal && j > i + Sk - Sq) continue;
      const long double p = std::exp(s[size_t(j)] - lse[size_t(i)]);
      for (int64_t d = 0; d < D; ++d) o[size_t(i * D + d)] += double(p * v[size_t(j * D + d)]);
    }
  }
}

} // namespace

TEST_CASE("38 flash attention backward: reference against the host") {
  check_puzzle_reference(
      "38-flash-attention-backward", {1e-6, 1e-9}, [](const Env& s, const Vals& in) {
        const int64_t BH = sz(s, "B") * sz(s, "H"), Sq = sz(s, "Sq"), Sk = sz(s, "Sk"),
                      D = sz(s, "D");
        const bool causal = sz(s, "causal") != 0;
        Vals out{{"dq", std::vector<double>(size_t(BH * Sq * D))},
                 {"dk", std::vector<double>(size_t(BH * Sk * D))},
                 {"dv", std::vector<double>(size_t(BH * Sk * D))}};
        for (int64_t h = 0; h < BH; ++h) {
          const size_t oq = size_t(h * Sq * D), ok = size_t(h * Sk * D);
          Grads g = backward(&in.at("q")[oq], &in.at("k")[ok], &in.at("v")[ok], &in.at("o")[oq],
                             &in.at("dout")[oq], &in.at("lse")[size_t(h * Sq)], Sq, Sk, D, causal);
          for (size_t i = 0; i < g.dq.size(); ++i) out["dq"][oq + i] = to_bf16(g.dq[i]);
          for (size_t i = 0; i < g.dk.size(); ++i) out["dk"][ok + i] = to_bf16(g.dk[i]);
          for (size_t i = 0; i < g.dv.size(); ++i) out["dv"][ok + i] = to_bf16(g.dv[i]);
        }
        return out;
      });
}

TEST_CASE("38 flash attention backward: the formulas are the gradient of sum(dout * o)") {
  // With o and lse from the forward, the backward's dq, dk, dv must match central differences of
  // L(q, k, v) = sum(dout * o(q, k, v)). Small shapes, Sq != Sk, causal and not.
  for (const bool causal : {false, true})
    for (const auto& [Sq, Sk] : {std::pair<int64_t, int64_t>{5, 7}, {6, 4}, {3, 3}}) {
      CAPTURE(causal);
      CAPTURE(Sq);
      CAPTURE(Sk);
      const int64_t D = 4;
      auto fill = [](size_t n, double seed) {
        std::vector<double> x(n);
        for (size_t i = 0; i < n; ++i) x[i] = std::sin(seed * double(i + 1) + 0.3 * seed);
        return x;
      };
      std::vector<double> q = fill(size_t(Sq * D), 1.1), k = fill(size_t(Sk * D), 2.3),
                          v = fill(size_t(Sk * D), 3.7), dout = fill(size_t(Sq * D), 4.1);
      std::vector<double> o, lse;
      forward(q, k, v, Sq, Sk, D, causal, o, lse);
      const Grads g = backward(q.data(), k.data(), v.data(), o.data(), dout.data(), lse.data(), Sq,
                               Sk, D, causal);
      auto loss = [&](const std::vector<double>& q2, const std::vector<double>& k2,
                      const std::vector<double>& v2) {
        std::vector<double> o2, l2;
        forward(q2, k2, v2, Sq, Sk, D, causal, o2, l2);
        long double L = 0;
        for (int64_t i = 0; i < Sq; ++i) {
          if (causal && i + Sk - Sq < 0) continue; // a row that sees no key has no output
          for (int64_t d = 0; d < D; ++d)
            L += (long double)dout[size_t(i * D + d)] * o2[size_t(i * D + d)];
        }
        return L;
      };
      const double h = 1e-5;
      auto check = [&](std::vector<double>& x, const std::vector<long double>& grad,
                       const char* name) {
        for (size_t i = 0; i < x.size(); ++i) {
          const double x0 = x[i];
          x[i] = x0 + h;
          const long double up = loss(q, k, v);
          x[i] = x0 - h;
          const long double down = loss(q, k, v);
          x[i] = x0;
          const double fd = double((up - down) / (2 * h));
          CAPTURE(name);
          CAPTURE(i);
          CHECK(fd == doctest::Approx(double(grad[i])).epsilon(1e-5).scale(1.0));
        }
      };
      check(q, g.dq, "dq");
      check(k, g.dk, "dk");
      check(v, g.dv, "dv");
    }
}
