#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/generate.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <doctest/doctest.h>
#include <vector>

using namespace wb;

TEST_CASE("dtype names round-trip") {
  for (auto n : {"f64", "f32", "f16", "bf16", "fp8e4m3", "fp8e5m2", "i64", "i32", "u32", "i16",
                 "i8", "u8"}) {
    auto t = parse_dtype(n);
    REQUIRE(t);
    CHECK(dtype_name(*t) == n);
  }
  CHECK_FALSE(parse_dtype("float"));
  CHECK(dtype_size(DType::bf16) == 2);
  CHECK(dtype_size(DType::fp8e4m3) == 1);
}

TEST_CASE("f16 conversion rounds to nearest even like cvt.rn.f16.f32") {
  CHECK(f32_to_f16_bits(1.0f) == 0x3c00);
  CHECK(f32_to_f16_bits(-2.0f) == 0xc000);
  CHECK(f32_to_f16_bits(65504.0f) == 0x7bff);
  CHECK(f32_to_f16_bits(65520.0f) == 0x7c00); // rounds up to Inf
  CHECK(f32_to_f16_bits(65519.0f) == 0x7bff);
  CHECK(f32_to_f16_bits(5.960464477539063e-08f) == 0x0001); // smallest subnormal
  CHECK(f32_to_f16_bits(2.980232238769531e-08f) == 0x0000); // half of it: ties to even (0)
  CHECK(f32_to_f16_bits(1.0f + 1.0f / 2048) == 0x3c00);     // tie -> even
  CHECK(f32_to_f16_bits(1.0f + 3.0f / 2048) == 0x3c02);     // tie -> even (up)
  CHECK((f32_to_f16_bits(NAN) & 0x7c00) == 0x7c00);
  for (uint32_t h = 0; h < 0x7c00; ++h) CHECK(f32_to_f16_bits(f16_bits_to_f32(uint16_t(h))) == h);
}

#ifdef __FLT16_MAX__
TEST_CASE("an f16 input is the double rounded once to nearest even") {
  // store_element rounds most doubles on their own bits; the compiler's _Float16 conversion is
  // an independent reference. Random bit patterns, then every exponent around f16's range with
  // the rounding's halfway and carry cases.
  uint64_t s = 1;
  auto next = [&] { return s = s * 6364136223846793005ull + 1442695040888963407ull; };
  auto same = [](double x) {
    std::byte b[2];
    store_element(DType::f16, b, x);
    uint16_t got, want;
    std::memcpy(&got, b, 2);
    const _Float16 h = static_cast<_Float16>(x);
    std::memcpy(&want, &h, 2);
    return std::isnan(x) ? (got & 0x7c00) == 0x7c00 && (got & 0x3ff) != 0 : got == want;
  };
  int bad = 0;
  for (int i = 0; i < 1000000; ++i) bad += !same(std::bit_cast<double>(next()));
  for (uint64_t e = 1023 - 30; e <= 1023 + 20; ++e)
    for (int k = 0; k < 4000; ++k) {
      uint64_t m = next() >> 12;
      if (k % 4 == 1) m = (m & ~((1ull << 42) - 1)) | (1ull << 41);        // halfway
      if (k % 4 == 2) m |= ((1ull << 52) - 1) & ~((1ull << (k % 52)) - 1); // carries
      bad += !same(std::bit_cast<double>(uint64_t(k & 1) << 63 | e << 52 | m));
    }
  CHECK(bad == 0);
}
#endif

TEST_CASE("bf16 and fp8 conversions") {
  CHECK(f32_to_bf16_bits(1.0f) == 0x3f80);
  CHECK(f32_to_bf16_bits(1.00390625f) == 0x3f80); // tie -> even
  CHECK(f32_to_bf16_bits(1.01171875f) == 0x3f82);
  CHECK(e4m3_bits_to_f32(0x7e) == 448.0f);
  CHECK(f32_to_e4m3_bits(1000.0f) == 0x7e); // saturates
  CHECK(f32_to_e4m3_bits(-1000.0f) == 0xfe);
  CHECK(f32_to_e4m3_bits(NAN) == 0x7f);
  CHECK(std::isnan(e4m3_bits_to_f32(0x7f)));
  CHECK(e4m3_bits_to_f32(0x01) == std::ldexp(1.0f, -9)); // smallest subnormal
  CHECK(f32_to_e5m2_bits(57344.0f) == 0x7b);
  CHECK(f32_to_e5m2_bits(1e9f) == 0x7b);
  CHECK(std::isinf(e5m2_bits_to_f32(0x7c)));
  for (uint32_t b = 0; b < 0x7f; ++b) CHECK(f32_to_e4m3_bits(e4m3_bits_to_f32(uint8_t(b))) == b);
  for (uint32_t b = 0; b < 0x7c; ++b) CHECK(f32_to_e5m2_bits(e5m2_bits_to_f32(uint8_t(b))) == b);
}

TEST_CASE("integer stores wrap like a C cast; poison makes float outputs NaN") {
  std::byte buf[8];
  store_element(DType::u8, buf, 257);
  CHECK(load_element(DType::u8, buf) == 1);
  store_element(DType::i8, buf, -129);
  CHECK(load_element(DType::i8, buf) == 127);
  for (auto t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2}) {
    std::memset(buf, poison_byte(t), sizeof buf);
    CHECK(std::isnan(load_element(t, buf)));
  }
}

TEST_CASE("generators: seeded, deterministic, in range") {
  Env env{{"bins", 256}};
  auto fill = [&](const char* spec, DType t, size_t n, uint64_t seed, uint64_t stream = 1) {
    std::vector<std::byte> out(n * dtype_size(t));
    Generator::parse(spec).fill(t, out, seed, stream, env);
    std::vector<double> v;
    for (size_t i = 0; i < n; ++i) v.push_back(load_element(t, out.data() + i * dtype_size(t)));
    return v;
  };
  auto a = fill("uniform(-1, 1)", DType::f32, 10000, 42);
  CHECK(a == fill("uniform(-1, 1)", DType::f32, 10000, 42));
  CHECK(a != fill("uniform(-1, 1)", DType::f32, 10000, 43));
  CHECK(a != fill("uniform(-1, 1)", DType::f32, 10000, 42, 2));
  double lo = 1, hi = -1, sum = 0;
  for (double x : a) lo = std::min(lo, x), hi = std::max(hi, x), sum += x;
  CHECK(lo >= -1);
  CHECK(hi < 1);
  CHECK(lo < -0.99);
  CHECK(hi > 0.99);
  CHECK(std::fabs(sum / a.size()) < 0.05);
  // Golden values: the same bytes on every machine. (A change here changes every puzzle's inputs.)
  CHECK(mix64(0) == 0xe220a8397b1dcdafull); // splitmix64's published first output
  auto g = fill("uniform(0, 1)", DType::f64, 2, 1, 7);
  CHECK(g[0] == 0x1.c0431c3004f88p-2);
  CHECK(g[1] == 0x1.e46d100b028fp-4);
  auto r = fill("randint(0, bins)", DType::i32, 5000, 9);
  for (double x : r) CHECK((x >= 0 && x < 256));
  auto s = fill("skewed(0, 256, 8)", DType::i32, 5000, 9);
  int low = 0;
  for (double x : s) low += x < 16;
  CHECK(low > 2500); // most mass near the low end: atomics contend
  auto ar = fill("arange(3, 2)", DType::i32, 4, 0);
  CHECK(ar == std::vector<double>{3, 5, 7, 9});
  auto n = fill("normal(0, 1)", DType::f32, 20000, 5);
  double m = 0, v = 0;
  for (double x : n) m += x;
  m /= double(n.size());
  for (double x : n) v += (x - m) * (x - m);
  v /= double(n.size());
  CHECK(std::fabs(m) < 0.05);
  CHECK(v == doctest::Approx(1.0).epsilon(0.05));
  auto t = fill("ties(0, 1, 3)", DType::f32, 1000, 5);
  for (double x : t) CHECK((x == 0 || x == 0.5 || x == 1));
  // randperm: every run of n is a permutation of 0 .. n-1, runs differ, and n need not be a power
  // of two (the Feistel domain is 2^bits, walked back into [0, n)).
  for (uint64_t n : {uint64_t(1), uint64_t(2), uint64_t(7), uint64_t(64), uint64_t(1000)}) {
    env["n"] = int64_t(n);
    auto p = fill("randperm(n)", DType::i32, size_t(3 * n), 11);
    std::vector<std::vector<double>> runs;
    for (int c = 0; c < 3; ++c) {
      std::vector<double> run(p.begin() + c * int64_t(n), p.begin() + (c + 1) * int64_t(n));
      std::vector<double> sorted = run;
      std::sort(sorted.begin(), sorted.end());
      for (uint64_t k = 0; k < n; ++k) CHECK(sorted[k] == double(k));
      runs.push_back(run);
    }
    if (n >= 7) CHECK(runs[0] != runs[1]);
  }
  env["n"] = 1 << 20; // a buffer shorter than n: distinct values below n, not the identity
  auto few = fill("randperm(n)", DType::i32, 4096, 3);
  std::vector<double> fs = few;
  std::sort(fs.begin(), fs.end());
  CHECK(std::adjacent_find(fs.begin(), fs.end()) == fs.end());
  CHECK(fs.back() < double(1 << 20));
  CHECK(fs.back() > double(1 << 19));
  // padded: runs of 10; run r keeps 3 + 2r values in [-1, 1), then NaN (floats) or -1 (integers).
  auto pd = fill("padded(-1, 1, 10, 3, 2)", DType::bf16, 40, 4);
  auto pi = fill("padded(5, 9, 10, 3, 2)", DType::i32, 40, 4);
  for (size_t i = 0; i < 40; ++i) {
    const bool valid = double(i % 10) < 3.0 + 2.0 * double(i / 10);
    CHECK(std::isnan(pd[i]) == !valid);
    if (valid)
      CHECK((pd[i] >= -1 && pd[i] <= 1 && pi[i] >= 5 && pi[i] <= 9));
    else
      CHECK(pi[i] == -1);
  }
}

TEST_CASE("q4_0 generator: 18-byte blocks, an f16 scale in range, then 16 random bytes") {
  Env env;
  const size_t blocks = 4099;
  std::vector<std::byte> out(blocks * 18);
  Generator::parse("q4_0(-0.5, 2)").fill(DType::u8, out, 11, 3, env);
  auto byte = [&](size_t i) { return unsigned(out[i]); };
  double lo = 1e9, hi = -1e9;
  int low_nibbles[16] = {}, high_nibbles[16] = {};
  for (size_t b = 0; b < blocks; ++b) {
    const uint16_t h = uint16_t(byte(18 * b) | byte(18 * b + 1) << 8); // little-endian f16
    const float d = f16_bits_to_f32(h);
    REQUIRE(std::isfinite(d));
    CHECK(f32_to_f16_bits(d) == h);
    lo = std::min<double>(lo, d), hi = std::max<double>(hi, d);
    for (size_t j = 0; j < 16; ++j) {
      ++low_nibbles[byte(18 * b + 2 + j) & 15];
      ++high_nibbles[byte(18 * b + 2 + j) >> 4];
    }
  }
  CHECK(lo >= -0.5);
  CHECK(hi <= 2);
  CHECK(lo < -0.45);
  CHECK(hi > 1.95);
  for (int k = 0; k < 16; ++k) { // 65584 nibbles of each kind: about 4099 of each value
    CHECK(low_nibbles[k] > 3700);
    CHECK(low_nibbles[k] < 4500);
    CHECK(high_nibbles[k] > 3700);
    CHECK(high_nibbles[k] < 4500);
  }
  // Any range of bytes, filled on its own, is the same bytes (the lazy images fill pieces).
  std::vector<std::byte> piece(37);
  Generator::parse("q4_0(-0.5, 2)").resolve(DType::u8, 11, 3, env).fill(piece.data(), 17, 37);
  CHECK(std::memcmp(piece.data(), out.data() + 17, 37) == 0);
  // Golden bytes: a change here changes every q4_0 puzzle's inputs.
  std::vector<std::byte> g(20);
  Generator::parse("q4_0(1, 1)").fill(DType::u8, g, 1, 7, env);
  CHECK(unsigned(g[0]) == 0x00); // d = 1.0 = 0x3c00, low byte first
  CHECK(unsigned(g[1]) == 0x3c);
  CHECK(unsigned(g[18]) == 0x00); // the next block's scale
  CHECK(unsigned(g[19]) == 0x3c);
}

TEST_CASE("generator specs are validated") {
  CHECK_THROWS_WITH_AS(Generator::parse("gaussian(0, 1)"), doctest::Contains("unknown generator"),
                       ExprError);
  CHECK_THROWS_WITH_AS(Generator::parse("uniform(1)"), doctest::Contains("uniform(lo, hi)"),
                       ExprError);
  CHECK_THROWS_AS(Generator::parse("randint(0, bins +)"), ExprError);
  CHECK_NOTHROW(Generator::parse("randint(0, min(bins, 10))"));
  CHECK_NOTHROW(Generator::parse("zeros"));
  CHECK_THROWS_WITH_AS(Generator::parse("q4_0(1)"), doctest::Contains("q4_0(dlo, dhi)"), ExprError);
}

TEST_CASE("content_hash: parts add up, the generators' hash matches, any one change moves it") {
  Env env;
  // Sizes around the generators' 32768-element blocks and with a partial last word.
  for (size_t n : {size_t(1), size_t(3), size_t(32767), size_t(32768), size_t(100003)}) {
    for (DType t : {DType::f32, DType::f16, DType::i8, DType::f64}) {
      std::vector<std::byte> out(n * dtype_size(t));
      uint64_t h = Generator::parse("uniform(-1, 1)").fill(t, out, 7, 3, env);
      CHECK(h == content_hash(out.data(), out.size()));
      // Any split at a word boundary gives the same sum.
      size_t cut = out.size() / 16 * 8;
      uint64_t sum = content_hash_part(out.data(), cut, 0) +
                     content_hash_part(out.data() + cut, out.size() - cut, cut / 8);
      CHECK(content_hash_finish(sum, out.size()) == h);
      // One changed byte anywhere, the last one too, moves the hash.
      for (size_t at : {size_t(0), out.size() / 2, out.size() - 1}) {
        out[at] ^= std::byte{1};
        CHECK(content_hash(out.data(), out.size()) != h);
        out[at] ^= std::byte{1};
      }
    }
  }
  // Two swapped words move it too (a plain sum would not notice).
  std::vector<std::byte> w(64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::byte(i);
  uint64_t h = content_hash(w.data(), w.size());
  std::swap_ranges(w.begin(), w.begin() + 8, w.begin() + 8);
  CHECK(content_hash(w.data(), w.size()) != h);
  // The same bytes at another length are another hash.
  std::vector<std::byte> z1(8), z2(16);
  CHECK(content_hash(z1.data(), z1.size()) != content_hash(z2.data(), z2.size()));
}

// Every puzzle's inputs, the reference outputs cached under their hash and a learner's "seed 7"
// all rest on the generators' bytes: these hashes pin them, for every kind and element type. A
// range filled lazily (a sampled run's pages, any offset) holds the bytes of the whole fill.
TEST_CASE("generators: the same bytes for every kind and type, whole or from any offset") {
  const Env env{{"n", 37}};
  const char* specs[] = {"uniform(-3, 5)",
                         "normal(1, 2)",
                         "randint(-5, 300)",
                         "skewed(0, 256, 8)",
                         "arange(-7, 3)",
                         "const(2.5)",
                         "zeros",
                         "ties(0, 1, 5)",
                         "q4_0(0.001, 0.01)",
                         "randperm(n)",
                         "padded(-2, 2, 50, 70, 3)"};
  const DType types[] = {DType::f64,     DType::f32, DType::f16, DType::bf16,
                         DType::fp8e4m3, DType::i32, DType::u8,  DType::i8,
                         DType::i16,     DType::u32, DType::i64, DType::fp8e5m2};
  const size_t n = 100003; // four of the eager fill's 32768-element blocks, the last one short
  uint64_t all = 0;
  for (const char* spec : specs)
    for (DType t : types) {
      const size_t es = dtype_size(t);
      std::vector<std::byte> whole(n * es);
      const Generator g = Generator::parse(spec);
      const uint64_t h = g.fill(t, whole, 1234, 5, env);
      all = mix64(all ^ h);
      std::vector<std::byte> part(777 * es);
      g.resolve(t, 1234, 5, env).fill(part.data(), 40961, 777);
      CHECK_MESSAGE(std::memcmp(part.data(), whole.data() + 40961 * es, part.size()) == 0,
                    spec << " as " << dtype_name(t));
    }
  CHECK(all == 0x34e5db017e44b9c0ull);
}

TEST_CASE("generators: a range filled at once is the bytes of its elements filled one by one") {
  // (The skewed bytes, the uniform floats and the normal values a sampled run makes most of go
  // eight at a time where the CPU can; a lone element takes the general loop.)
  const Env env{{"n", 37}};
  const std::pair<const char*, DType> cases[] = {
      {"skewed(0, 256, 8)", DType::u8},  {"skewed(-3, 300, 3)", DType::u8},
      {"skewed(0, 1, 1)", DType::u8},    {"uniform(-3, 5)", DType::f32},
      {"uniform(0, 0.001)", DType::f32}, {"normal(1, 2)", DType::f32},
      {"normal(0, 1)", DType::bf16},     {"normal(-1, 0.5)", DType::f16}};
  for (auto [spec, t] : cases) {
    const ResolvedGenerator r = Generator::parse(spec).resolve(t, 77, 2, env);
    const size_t es = dtype_size(t), n = 4099;
    for (uint64_t first : {uint64_t(0), uint64_t(12345), uint64_t(1) << 33}) {
      std::vector<std::byte> bulk(n * es), one(n * es);
      r.fill(bulk.data(), first, n);
      for (size_t k = 0; k < n; ++k) r.fill(one.data() + k * es, first + k, 1);
      CHECK_MESSAGE(bulk == one, spec << " from " << first);
    }
  }
}
