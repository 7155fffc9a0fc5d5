// Puzzle 36 (cross-entropy forward and backward, in place): the reference against an independent
// host computation (host_reference.hpp). The logits are in and out, so the host takes them from a
// second preparation of the same case with the same seed (the generators are deterministic), not
// from the buffers the run left.
#include "common/host_reference.hpp"

using namespace wb;
using namespace wb::host_ref;

TEST_CASE("36 cross-entropy forward and backward: reference against the host") {
  const Puzzle* p = catalog().find_puzzle("36-cross-entropy-fwd-bwd");
  REQUIRE(p);
  CompileOptions co = sim().compile_options();
  for (auto& t : p->tunables) co.defines[t.name] = t.default_value;
  Program prog = compile_source(slurp(p->reference), "reference.cu", co);
  REQUIRE_MESSAGE(prog.ok, prog.log);
  for (size_t ci = 0; ci < p->cases.size(); ++ci) {
    const Case& c = p->cases[ci];
    CAPTURE(c.label);
    const uint64_t seed = 0x5eed0000ull + ci;
    CaseSetup setup = prepare_case(*p, c, p->env(c), seed, ci);
    std::vector<double> z, y;
    for (auto& hb : setup.buffers) {
      if (hb.name != "z" && hb.name != "y") continue;
      const size_t es = dtype_size(hb.type), n = hb.data_bytes / es;
      auto& v = hb.name == "z" ? z : y;
      for (size_t i = 0; i < n; ++i) v.push_back(load_element(hb.type, hb.data() + i * es));
    }
    Vals got = run_reference(*p, prog, c, ci, seed);
    const int64_t T = sz(c.sizes, "T"), V = sz(c.sizes, "V");
    REQUIRE(int64_t(z.size()) == T * V);

    // loss = mean over the rows not ignored of lse - z[t]; dz = (softmax - onehot) / n, 0 on the
    // ignored rows, each rounded once to bf16 from long double.
    int64_t n = 0;
    for (double t : y) n += t != -100;
    std::vector<double> dz(size_t(T * V), 0.0);
    long double sum = 0;
    for (int64_t r = 0; r < T; ++r) {
      const int64_t t = int64_t(y[size_t(r)]);
      if (t == -100) continue;
      REQUIRE(t >= 0);
      REQUIRE(t < V);
      const double* x = z.data() + r * V;
      const long double m = *std::max_element(x, x + V);
      long double s = 0;
      for (int64_t j = 0; j < V; ++j) s += std::exp((long double)x[j] - m);
      const long double lse = m + std::log(s);
      sum += lse - x[t];
      for (int64_t j = 0; j < V; ++j)
        dz[size_t(r * V + j)] =
            to_bf16((std::exp((long double)x[j] - lse) - (j == t ? 1.0L : 0.0L)) / n);
    }
    const double loss = n > 0 ? f32(double(sum / n)) : 0.0;

    // The reference rounds through f32 on its way to bf16, and its exp is double's: a value on a
    // bf16 rounding boundary may land one bf16 ulp (2^-7 of it) away. Values below f32's normal
    // range may flush: atol 1e-37.
    const std::vector<double>& gz = got.at("z");
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < dz.size(); ++i)
      if (!(std::fabs(gz[i] - dz[i]) <= 1e-37 + 0.0079 * std::fabs(dz[i])) && bad++ == 0) first = i;
    CHECK_MESSAGE(bad == 0,
                  fmt::format("z: {} of {} wrong, first z[{}] = {} where the host says {}", bad,
                              dz.size(), first, bad ? gz[first] : 0.0, bad ? dz[first] : 0.0));
    const double gl = got.at("loss").at(0);
    CHECK_MESSAGE(std::fabs(gl - loss) <= 1e-6 * std::fabs(loss) + 1e-9,
                  fmt::format("loss = {} where the host says {}", gl, loss));
  }
}
