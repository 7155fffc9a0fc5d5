#include "generate.hpp"

#include "backend.hpp"
#include "host_cpu.hpp"

#include "parallel.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace wb {

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t stream_id(std::string_view name, uint64_t case_index) {
  uint64_t h = 1469598103934665603ull; // FNV-1a: stable across machines and compilers
  for (char c : name) h = (h ^ uint8_t(c)) * 1099511628211ull;
  return mix64(h ^ mix64(case_index));
}

double GenArg::eval(const Env& env) const {
  if (auto d = std::get_if<double>(&value)) return *d;
  return double(std::get<Expr>(value).eval(env));
}

namespace {

struct Spec {
  std::string_view kind;
  size_t min_args, max_args;
  std::string_view usage;
};
constexpr Spec kSpecs[] = {
    {"uniform", 2, 2, "uniform(lo, hi)"},
    {"normal", 0, 2, "normal(mean, std)"},
    {"randint", 2, 2, "randint(lo, hi)"},
    {"skewed", 2, 3, "skewed(lo, hi, power)"},
    {"arange", 0, 2, "arange(start, step)"},
    {"const", 1, 1, "const(value)"},
    {"zeros", 0, 0, "zeros"},
    {"ones", 0, 0, "ones"},
    {"ties", 3, 3, "ties(lo, hi, k)"},
    {"q4_0", 2, 2, "q4_0(dlo, dhi)"},
    {"randperm", 1, 1, "randperm(n)"},
    {"padded", 4, 5, "padded(lo, hi, period, keep, grow)"},
};

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

GenArg parse_arg(const std::string& text) {
  // A plain number (int, float, exponent) is a literal; anything else is a size expression.
  const char* b = text.c_str();
  char* e = nullptr;
  double d = std::strtod(b, &e);
  if (e != b && *e == '\0' && std::isfinite(d)) return GenArg{d};
  return GenArg{Expr::parse(text)};
}

// A uniform double in [0, 1) from 53 random bits: exact.
double unit(uint64_t bits) {
  return double(bits >> 11) * 0x1.0p-53;
}

// Element k of the c-th random permutation of 0 .. n-1, computed alone (no table, so any range of
// a buffer fills independently): a 4-round Feistel network on the smallest even number of bits
// that holds n is a bijection of [0, 2^bits); walking its cycle until the value falls below n
// restricts it to a bijection of [0, n) (the domain is at most 4n, so a few steps on average).
uint64_t perm_element(uint64_t key, uint64_t c, uint64_t n, uint64_t k) {
  int half = 1;
  while ((uint64_t(1) << (2 * half)) < n) ++half;
  const uint64_t mask = (uint64_t(1) << half) - 1;
  const uint64_t rk = mix64(key ^ mix64(c + 0x243f6a8885a308d3ull));
  uint64_t x = k;
  do {
    uint64_t l = x >> half, r = x & mask;
    for (uint64_t round = 0; round < 4; ++round) {
      const uint64_t f = mix64(rk + round * 0x9e3779b97f4a7c15ull + r) & mask;
      const uint64_t t = l ^ f;
      l = r;
      r = t;
    }
    x = (l << half) | r;
  } while (x >= n);
  return x;
}

#if defined(__x86_64__)
// splitmix64's finaliser (mix64) on eight 64-bit lanes.
__attribute__((target("avx512f,avx512dq"))) inline __m512i mix64x8(__m512i x) {
  const __m512i c1 = _mm512_set1_epi64(int64_t(0xbf58476d1ce4e5b9ull));
  const __m512i c2 = _mm512_set1_epi64(int64_t(0x94d049bb133111ebull));
  x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_maskz_srli_epi64(0xff, x, 30)), c1);
  x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_maskz_srli_epi64(0xff, x, 27)), c2);
  return _mm512_xor_si512(x, _mm512_maskz_srli_epi64(0xff, x, 31));
}
// The two kinds a sampled run generates most of (a [perf] size's skewed bytes, its uniform
// floats), eight elements at a time: the same splitmix64 draws, unit(), powers, products, sums,
// floor and float rounding as the scalar loops, each an IEEE operation of its own, so the same
// bytes. n is a multiple of 8. `skewed`: u8 out of floor(lo + (hi - lo) u^p), lanes outside
// [0, 256) left to `odd` (the general store); else f32 out of lo + (hi - lo) u.
template <class Odd>
__attribute__((target("avx512f,avx512dq"))) void
fill8_avx512(std::byte* out, uint64_t key, uint64_t first, size_t n, bool skewed, double lo,
             double hi, int p, Odd&& odd) {
  const __m512i step = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i g = _mm512_set1_epi64(int64_t(0x9e3779b97f4a7c15ull));
  const __m512i kv = _mm512_set1_epi64(int64_t(key));
  const __m512d scale = _mm512_set1_pd(0x1.0p-53), vlo = _mm512_set1_pd(lo),
                span = _mm512_set1_pd(hi - lo), zero = _mm512_setzero_pd(),
                top = _mm512_set1_pd(256.0);
  for (size_t k = 0; k < n; k += 8) {
    const __m512i i = _mm512_add_epi64(_mm512_set1_epi64(int64_t(first + k)), step);
    __m512i x = _mm512_add_epi64(kv, _mm512_mullo_epi64(_mm512_maskz_slli_epi64(0xff, i, 4), g));
    x = mix64x8(_mm512_add_epi64(x, g));
    const __m512d u = _mm512_mul_pd(
        _mm512_mask_cvtepu64_pd(zero, 0xff, _mm512_maskz_srli_epi64(0xff, x, 11)), scale);
    if (skewed) {
      __m512d w = u;
      for (int e = 1; e < p; ++e) w = _mm512_mul_pd(w, u);
      const __m512d v =
          _mm512_mask_roundscale_pd(zero, 0xff, _mm512_add_pd(vlo, _mm512_mul_pd(span, w)),
                                    _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
      const __mmask8 in =
          _mm512_cmp_pd_mask(v, zero, _CMP_GE_OQ) & _mm512_cmp_pd_mask(v, top, _CMP_LT_OQ);
      if (in == 0xff) {
        _mm_storel_epi64(
            reinterpret_cast<__m128i*>(out + k),
            _mm512_mask_cvtepi64_epi8(_mm_setzero_si128(), 0xff,
                                      _mm512_mask_cvttpd_epi64(_mm512_setzero_si512(), 0xff, v)));
      } else {
        alignas(64) double vs[8];
        _mm512_store_pd(vs, v);
        for (int j = 0; j < 8; ++j) {
          if ((in >> j) & 1)
            out[k + size_t(j)] = std::byte(uint8_t(vs[j]));
          else
            odd(out + k + size_t(j), vs[j]);
        }
      }
    } else {
      _mm256_storeu_ps(reinterpret_cast<float*>(out + 4 * k),
                       _mm512_mask_cvtpd_ps(_mm256_setzero_ps(), 0xff,
                                            _mm512_add_pd(vlo, _mm512_mul_pd(span, u))));
    }
  }
}
// normal(mean, sd) for eight elements at a time: each lane sums its twelve draws in the scalar
// loop's order, one IEEE operation at a time (the _round forms are never fused), so the same
// doubles. n is a multiple of 8.
__attribute__((target("avx512f,avx512dq"))) void
normal8_avx512(double* out, uint64_t key, uint64_t first, size_t n, double mean, double sd) {
  constexpr int kRn = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m512i step = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  const uint64_t gs = 0x9e3779b97f4a7c15ull;
  const __m512i g = _mm512_set1_epi64(int64_t(gs));
  const __m512d scale = _mm512_set1_pd(0x1.0p-53), zero = _mm512_setzero_pd();
  for (size_t k = 0; k < n; k += 8) {
    const __m512i i = _mm512_add_epi64(_mm512_set1_epi64(int64_t(first + k)), step);
    const __m512i base = _mm512_mullo_epi64(_mm512_maskz_slli_epi64(0xff, i, 4), g);
    __m512d sum = zero;
    for (uint64_t j = 0; j < 12; ++j) {
      // mix64(key + (16 i + j) g), as rnd(i, j)
      const __m512i x =
          mix64x8(_mm512_add_epi64(base, _mm512_set1_epi64(int64_t(key + j * gs + gs))));
      const __m512d u = _mm512_maskz_mul_round_pd(
          0xff, _mm512_mask_cvtepu64_pd(zero, 0xff, _mm512_maskz_srli_epi64(0xff, x, 11)), scale,
          kRn);
      sum = _mm512_maskz_add_round_pd(0xff, sum, u, kRn);
    }
    const __m512d d = _mm512_maskz_sub_round_pd(0xff, sum, _mm512_set1_pd(6.0), kRn);
    _mm512_storeu_pd(out + k,
                     _mm512_maskz_add_round_pd(
                         0xff, _mm512_set1_pd(mean),
                         _mm512_maskz_mul_round_pd(0xff, _mm512_set1_pd(sd), d, kRn), kRn));
  }
}
#endif

} // namespace

Generator Generator::parse(std::string_view text) {
  Generator g;
  g.text = trim(text);
  std::string_view s = g.text;
  size_t open = s.find('(');
  std::string kind = trim(s.substr(0, open));
  const Spec* spec = nullptr;
  for (const auto& sp : kSpecs)
    if (sp.kind == kind) spec = &sp;
  if (!spec) {
    std::string known;
    for (const auto& sp : kSpecs) known += fmt::format("{}{}", known.empty() ? "" : ", ", sp.usage);
    throw ExprError(fmt::format("unknown generator '{}' (known: {})", kind, known), 1);
  }
  g.kind = kind;
  if (open != std::string_view::npos) {
    if (s.back() != ')')
      throw ExprError(fmt::format("'{}': expected ')' at the end", s), int(s.size()));
    std::string_view inner = s.substr(open + 1, s.size() - open - 2);
    // Split on commas at depth 0 (size expressions may hold min(a, b)).
    int depth = 0;
    size_t start = 0;
    std::vector<std::string> parts;
    for (size_t i = 0; i <= inner.size(); ++i) {
      if (i == inner.size() || (inner[i] == ',' && depth == 0)) {
        parts.push_back(trim(inner.substr(start, i - start)));
        start = i + 1;
      } else if (inner[i] == '(')
        ++depth;
      else if (inner[i] == ')')
        --depth;
    }
    if (parts.size() == 1 && parts[0].empty()) parts.clear();
    for (auto& p : parts) {
      if (p.empty()) throw ExprError(fmt::format("'{}': empty argument", s), int(open + 2));
      g.args.push_back(parse_arg(p));
    }
  }
  if (g.args.size() < spec->min_args || g.args.size() > spec->max_args)
    throw ExprError(fmt::format("'{}': expected {}", s, spec->usage), int(open + 1));
  return g;
}

ResolvedGenerator Generator::resolve(DType t, uint64_t seed, uint64_t stream,
                                     const Env& env) const {
  ResolvedGenerator r;
  r.type = t;
  r.nargs = std::min<size_t>(args.size(), 5);
  for (size_t i = 0; i < r.nargs; ++i) r.a[i] = args[i].eval(env);
  r.key = mix64(seed ^ mix64(stream));
  using K = ResolvedGenerator::Kind;
  r.cval = kind == "zeros" ? 0 : kind == "ones" ? 1 : kind == "const" ? r.a[0] : 0;
  r.kind = kind == "uniform"    ? K::uniform
           : kind == "normal"   ? K::normal
           : kind == "randint"  ? K::randint
           : kind == "skewed"   ? K::skewed
           : kind == "arange"   ? K::arange
           : kind == "ties"     ? K::ties
           : kind == "randperm" ? K::randperm
           : kind == "padded"   ? K::padded
           : kind == "q4_0"     ? K::q4_0
                                : K::constant;
  return r;
}

void ResolvedGenerator::fill(std::byte* out, uint64_t first, size_t count) const {
  const size_t es = dtype_size(type);
  auto arg = [&](size_t i, double def) { return i < nargs ? a[i] : def; };
  // splitmix64 of a counter: one mix per draw (perf sizes draw 2^27 values and more).
  auto rnd = [&](uint64_t i, uint64_t j) {
    return mix64(key + (i * 16 + j) * 0x9e3779b97f4a7c15ull);
  };
  const bool integer = !is_float(type);
  // One loop per kind and element type, so that neither choice is made again per element: a
  // sampled run at a perf size generates millions of them.
  auto each = [&](auto value) {
    if (type == DType::f32) {
      for (size_t k = 0; k < count; ++k) {
        const float f = static_cast<float>(value(first + k));
        std::memcpy(out + k * 4, &f, 4);
      }
    } else if (type == DType::u8) { // store_element's u8, for the exact integers it gets here
      for (size_t k = 0; k < count; ++k) {
        const double v = value(first + k);
        if (v >= 0 && v < 256)
          out[k] = std::byte(uint8_t(v));
        else
          store_element(type, out + k, v);
      }
    } else {
      for (size_t k = 0; k < count; ++k) store_element(type, out + k * es, value(first + k));
    }
  };
#if defined(__x86_64__)
  // Eight at a time where the CPU can (the rest, under eight, below).
  const bool skewed_u8 = kind == Kind::skewed && type == DType::u8;
  if (host_cpu::kAvx512dq && count >= 8 &&
      (skewed_u8 || (kind == Kind::uniform && type == DType::f32))) {
    const size_t n = count / 8 * 8;
    fill8_avx512(out, key, first, n, skewed_u8, a[0], a[1], skewed_u8 ? int(arg(2, 4)) : 0,
                 [&](std::byte* o, double v) { store_element(type, o, v); });
    if (n < count) fill(out + n * es, first + n, count - n);
    return;
  }
  if (host_cpu::kAvx512dq && count >= 8 && kind == Kind::normal && is_float(type)) {
    const size_t n = count / 8 * 8;
    double v[512];
    for (size_t k = 0; k < n; k += 512) {
      const size_t m = std::min<size_t>(512, n - k);
      normal8_avx512(v, key, first + k, m, arg(0, 0), arg(1, 1));
      for (size_t j = 0; j < m; ++j) store_element(type, out + (k + j) * es, v[j]);
    }
    if (n < count) fill(out + n * es, first + n, count - n);
    return;
  }
#endif
  switch (kind) {
  case Kind::uniform: {
    const double lo = a[0], hi = a[1];
    if (integer) {
      const uint64_t span = uint64_t(std::max(1.0, hi - lo + 1));
      each([&](uint64_t i) { return std::floor(lo) + double(rnd(i, 0) % span); });
    } else {
      each([&](uint64_t i) { return lo + (hi - lo) * unit(rnd(i, 0)); });
    }
    break;
  }
  case Kind::normal: {
    const double mean = arg(0, 0), sd = arg(1, 1);
    each([&](uint64_t i) {
      double sum = 0;
      for (int j = 0; j < 12; ++j) sum += unit(rnd(i, j));
      return mean + sd * (sum - 6.0);
    });
    break;
  }
  case Kind::randint: {
    const uint64_t span = uint64_t(std::max(1.0, a[1] - a[0]));
    each([&](uint64_t i) { return a[0] + double(rnd(i, 0) % span); });
    break;
  }
  case Kind::skewed: {
    const double lo = a[0], hi = a[1];
    const int p = int(arg(2, 4));
    each([&](uint64_t i) {
      const double u = unit(rnd(i, 0));
      double w = u;
      for (int e = 1; e < p; ++e) w *= u; // integer powers only: exact everywhere
      return std::floor(lo + (hi - lo) * w);
    });
    break;
  }
  case Kind::arange: {
    const double start = arg(0, 0), step = arg(1, 1);
    each([&](uint64_t i) { return start + double(i) * step; });
    break;
  }
  case Kind::ties: {
    const double lo = a[0], hi = a[1], kk = std::max(1.0, a[2]);
    const double step = kk > 1 ? (hi - lo) / (kk - 1) : 0;
    each([&](uint64_t i) { return lo + step * double(rnd(i, 0) % uint64_t(kk)); });
    break;
  }
  case Kind::q4_0:
    // llama.cpp's block_q4_0, byte by byte: 18-byte blocks {f16 d; u8 qs[16]}, d little-endian
    // and uniform in [dlo, dhi] (rounded to f16), then 16 random bytes (32 random nibbles).
    each([&](uint64_t i) {
      const uint64_t blk = i / 18, off = i % 18;
      if (off < 2) {
        const float d = static_cast<float>(a[0] + (a[1] - a[0]) * unit(rnd(blk, 0)));
        const uint16_t h = f32_to_f16_bits(d);
        return double(off == 0 ? (h & 0xffu) : (h >> 8));
      }
      const uint64_t r = rnd(blk, 1 + (off - 2) / 8);
      return double((r >> (8 * ((off - 2) % 8))) & 0xffu);
    });
    break;
  case Kind::randperm: {
    const uint64_t n = uint64_t(std::max(1.0, a[0]));
    each([&](uint64_t i) { return double(perm_element(key, i / n, n, i % n)); });
    break;
  }
  case Kind::padded: {
    const uint64_t period = uint64_t(std::max(1.0, a[2]));
    const double grow = arg(4, 0);
    each([&](uint64_t i) {
      const double keep = a[3] + double(i / period) * grow;
      if (double(i % period) < keep) return a[0] + (a[1] - a[0]) * unit(rnd(i, 0));
      return integer ? -1.0 : std::numeric_limits<double>::quiet_NaN();
    });
    break;
  }
  case Kind::constant:
    each([&](uint64_t) { return cval; });
    break;
  }
}

uint64_t Generator::fill(DType t, std::span<std::byte> out, uint64_t seed, uint64_t stream,
                         const Env& env) const {
  const ResolvedGenerator r = resolve(t, seed, stream, env);
  const size_t es = dtype_size(t);
  const size_t n = out.size() / es;
  // Blocks of whole 8-byte words, each hashed (content_hash) while it is still in cache: the
  // checker needs the hash of every input, and a second pass over hundreds of MiB costs more.
  constexpr size_t kBlock = size_t(1) << 15;
  const size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<uint64_t> sums(blocks, 0);
  parallel_chunks(
      int64_t(blocks),
      [&](int, int64_t first_block, int64_t end_block) {
        for (size_t blk = size_t(first_block); blk < size_t(end_block); ++blk) {
          const size_t begin = blk * kBlock, end = std::min(n, begin + kBlock);
          r.fill(out.data() + begin * es, begin, end - begin);
          const size_t end_byte = blk + 1 == blocks ? out.size() : end * es;
          sums[blk] =
              content_hash_part(out.data() + begin * es, end_byte - begin * es, begin * es / 8);
        }
      },
      4);
  uint64_t sum = 0;
  for (uint64_t s : sums) sum += s;
  return content_hash_finish(sum, out.size());
}

} // namespace wb
