// Puzzles 04-18: each reference against an independent host computation (host_reference.hpp).
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("04 matrix add: reference against the host") {
  check_puzzle_reference("04-matrix-add-2d", {0, 0}, [](const Env& s, const Vals& in) {
    auto& a = in.at("a");
    auto& b = in.at("b");
    std::vector<double> c(a.size());
    for (size_t i = 0; i < a.size(); ++i) c[i] = f32(a[i] + b[i]);
    return Vals{{"c", c}};
  });
}

TEST_CASE("05 outer add: reference against the host") {
  check_puzzle_reference("05-outer-add", {0, 0}, [](const Env& s, const Vals& in) {
    int64_t rows = sz(s, "rows"), cols = sz(s, "cols");
    std::vector<double> out(size_t(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        out[size_t(r * cols + k)] = f32(in.at("x")[r] + in.at("y")[k]);
    return Vals{{"out", out}};
  });
}

TEST_CASE("06 gelu half2: reference against the host") {
  // The output is f16: one rounding step is 2^-11 relative; allow two.
  check_puzzle_reference("06-gelu-half2", {2e-3, 1e-5}, [](const Env& s, const Vals& in) {
    auto& x = in.at("x");
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      long double v = x[i];
      long double u = std::sqrt(2.0L / 3.14159265358979323846L) * (v + 0.044715L * v * v * v);
      y[i] = double(0.5L * v * (1.0L + std::tanh(u)));
    }
    return Vals{{"y", y}};
  });
}

TEST_CASE("07 transpose: reference against the host") {
  check_puzzle_reference("07-transpose", {0, 0}, [](const Env& s, const Vals& in) {
    int64_t rows = sz(s, "rows"), cols = sz(s, "cols");
    std::vector<double> out(size_t(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        out[size_t(c * rows + r)] = in.at("input")[size_t(r * cols + c)];
    return Vals{{"output", out}};
  });
}

TEST_CASE("08 dot product: reference against the host") {
  check_puzzle_reference("08-dot-product", {1e-6, 1e-6}, [](const Env& s, const Vals& in) {
    long double t = 0;
    for (size_t i = 0; i < in.at("a").size(); ++i) t += (long double)in.at("a")[i] * in.at("b")[i];
    return Vals{{"out", {f32(double(t))}}};
  });
}

TEST_CASE("09 argmax rows: reference against the host") {
  check_puzzle_reference("09-argmax-rows", {0, 0}, [](const Env& s, const Vals& in) {
    int64_t rows = sz(s, "rows"), cols = sz(s, "cols");
    std::vector<double> idx((size_t)rows);
    for (int64_t r = 0; r < rows; ++r) {
      auto first = in.at("x").begin() + r * cols;
      idx[size_t(r)] =
          double(std::max_element(first, first + cols) - first); // the first of equal maxima
    }
    return Vals{{"idx", idx}};
  });
}

TEST_CASE("10 histogram: reference against the host") {
  check_puzzle_reference("10-histogram", {0, 0}, [](const Env& s, const Vals& in) {
    std::vector<double> bins(256, 0.0);
    for (double v : in.at("data")) bins[size_t(v)] += 1;
    return Vals{{"bins", bins}};
  });
}

TEST_CASE("11 inclusive scan: reference against the host") {
  check_puzzle_reference("11-inclusive-scan", {0, 0}, [](const Env& s, const Vals& in) {
    std::vector<double> y(in.at("x").size());
    double run = 0;
    for (size_t i = 0; i < y.size(); ++i) y[i] = run += in.at("x")[i]; // whole numbers: exact
    return Vals{{"y", y}};
  });
}

TEST_CASE("12 online softmax: reference against the host") {
  check_puzzle_reference("12-online-softmax", {1e-6, 1e-9}, [](const Env& s, const Vals& in) {
    int64_t rows = sz(s, "rows"), cols = sz(s, "cols");
    auto& x = in.at("x");
    std::vector<double> y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * cols;
      double m = *std::max_element(row, row + cols);
      long double sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += std::exp((long double)row[c] - m);
      for (int64_t c = 0; c < cols; ++c)
        y[size_t(r * cols + c)] = double(std::exp((long double)row[c] - m) / sum);
    }
    return Vals{{"y", y}};
  });
}

TEST_CASE("13 layernorm: reference against the host") {
  check_puzzle_reference("13-layernorm", {1e-6, 1e-6}, [](const Env& s, const Vals& in) {
    int64_t rows = sz(s, "rows"), cols = sz(s, "cols");
    auto &x = in.at("x"), &w = in.at("w"), &b = in.at("b");
    const long double eps = (long double)1e-5f;
    std::vector<double> y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * cols;
      long double mean = 0, var = 0;
      for (int64_t c = 0; c < cols; ++c) mean += row[c];
      mean /= cols;
      for (int64_t c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
      var /= cols;
      long double rstd = 1.0L / std::sqrt(var + eps);
      for (int64_t c = 0; c < cols; ++c)
        y[size_t(r * cols + c)] = double((row[c] - mean) * rstd * w[c] + b[c]);
    }
    return Vals{{"y", y}};
  });
}

TEST_CASE("14 rmsnorm residual: reference against the host") {
  check_puzzle_reference("14-rmsnorm-residual", {1e-6, 1e-7}, [](const Env& s, const Vals& in) {
    int64_t rows = sz(s, "rows"), cols = sz(s, "cols");
    auto &x = in.at("x"), &res = in.at("res"), &w = in.at("w");
    const long double eps = (long double)1e-6f;
    std::vector<double> h(x.size()), y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      long double ss = 0;
      for (int64_t c = 0; c < cols; ++c) {
        long double v = (long double)x[size_t(r * cols + c)] + res[size_t(r * cols + c)];
        h[size_t(r * cols + c)] = f32(double(v));
        ss += v * v;
      }
      long double rstd = 1.0L / std::sqrt(ss / cols + eps);
      for (int64_t c = 0; c < cols; ++c)
        y[size_t(r * cols + c)] = double(
            ((long double)x[size_t(r * cols + c)] + res[size_t(r * cols + c)]) * rstd * w[c]);
    }
    return Vals{{"h", h}, {"y", y}};
  });
}

TEST_CASE("15 swiglu: reference against the host") {
  check_puzzle_reference("15-swiglu", {1e-6, 1e-30}, [](const Env& s, const Vals& in) {
    int64_t rows = sz(s, "rows"), cols = sz(s, "cols");
    auto& gu = in.at("gu");
    std::vector<double> y(size_t(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j) {
        long double g = gu[size_t(r * 2 * cols + j)], u = gu[size_t(r * 2 * cols + cols + j)];
        y[size_t(r * cols + j)] = double(g / (1.0L + std::exp(-g)) * u);
      }
    return Vals{{"y", y}};
  });
}

TEST_CASE("16 conv1d: reference against the host") {
  check_puzzle_reference("16-conv1d", {1e-6, 1e-6}, [](const Env& s, const Vals& in) {
    int64_t ch = sz(s, "channels"), len = sz(s, "length"), ks = sz(s, "ksize");
    auto &x = in.at("x"), &w = in.at("w");
    std::vector<double> y(size_t(ch * len));
    for (int64_t c = 0; c < ch; ++c)
      for (int64_t t = 0; t < len; ++t) {
        long double acc = 0;
        for (int64_t k = 0; k < ks; ++k) {
          int64_t i = t + k - (ks - 1);
          if (i >= 0) acc += (long double)w[size_t(c * ks + k)] * x[size_t(c * len + i)];
        }
        y[size_t(c * len + t)] = double(acc);
      }
    return Vals{{"y", y}};
  });
}

TEST_CASE("17 tiled sgemm: reference against the host") {
  check_puzzle_reference("17-tiled-sgemm", {1e-6, 1e-6}, [](const Env& s, const Vals& in) {
    int64_t M = sz(s, "M"), N = sz(s, "N"), K = sz(s, "K");
    auto &A = in.at("A"), &B = in.at("B");
    std::vector<double> C(size_t(M * N));
    for (int64_t r = 0; r < M; ++r)
      for (int64_t c = 0; c < N; ++c) {
        long double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (long double)A[size_t(r * K + k)] * B[size_t(k * N + c)];
        C[size_t(r * N + c)] = double(acc);
      }
    return Vals{{"C", C}};
  });
}

TEST_CASE("18 gemv: reference against the host") {
  check_puzzle_reference("18-gemv", {1e-6, 1e-6}, [](const Env& s, const Vals& in) {
    int64_t M = sz(s, "M"), K = sz(s, "K");
    auto &A = in.at("A"), &x = in.at("x");
    std::vector<double> y((size_t)M);
    for (int64_t r = 0; r < M; ++r) {
      long double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (long double)A[size_t(r * K + k)] * x[size_t(k)];
      y[size_t(r)] = double(acc);
    }
    return Vals{{"y", y}};
  });
}
