// Single instructions through inline PTX, against host results computed independently (the host
// FPU in the wanted rounding mode, plain integer arithmetic): rounding modes, NaN and signed-zero
// rules, integer corner cases, bit-field and byte-permute instructions, carries, barriers with
// reductions, shared vs global float atomics.
#include "sim_test_util.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <limits>

using namespace simtest;

namespace {

uint32_t fb(float f) {
  return std::bit_cast<uint32_t>(f);
}
float bf(uint32_t u) {
  return std::bit_cast<float>(u);
}

// The host FPU in a rounding mode (volatile keeps the compiler from folding across fesetround).
template <class F> float in_mode(int mode, F f) {
  int old = std::fegetround();
  std::fesetround(mode);
  volatile float r = f();
  std::fesetround(old);
  return r;
}

// Runs `k(const float* a, const float* b, const float* c, unsigned* out)` over n triples.
std::vector<uint32_t> run_f3(const std::string& src, const std::vector<float>& a,
                             const std::vector<float>& b, const std::vector<float>& c, int outs) {
  Plan p;
  p.program = program_from(src);
  int n = int(a.size());
  int A = p.buffer("a", a), B = p.buffer("b", b), C = p.buffer("c", c),
      O = p.buffer("out", std::vector<uint32_t>(size_t(n) * outs));
  p.launch("k", {uint32_t((n + 63) / 64), 1, 1}, {64, 1, 1},
           {Plan::buf(A), Plan::buf(B), Plan::buf(C), Plan::buf(O), Plan::val(n)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  return p.get<uint32_t>(O);
}

std::vector<float> interesting_floats() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          1.5f,
                          3.0f,
                          0.1f,
                          -0.3f,
                          1e30f,
                          -1e30f,
                          3.4e38f,
                          1e-38f,
                          1e-45f,
                          -1e-45f,
                          bf(0x7f800000u),
                          bf(0xff800000u),
                          bf(0x7fc00000u),
                          16777217.0f,
                          0.33333334f,
                          7.0f,
                          1e-40f,
                          2.5f};
  uint32_t s = 12345;
  for (int i = 0; i < 200; ++i) {
    s = s * 1664525u + 1013904223u;
    uint32_t e = 100 + (s >> 24) % 56; // exponents that collide in sums and products
    v.push_back(bf(((s & 1) << 31) | (e << 23) | (s & 0x7fffff)));
  }
  return v;
}

} // namespace

TEST_CASE("f32 add / mul / fma in all four rounding modes are bit-exact") {
  auto v = interesting_floats();
  size_t n = v.size();
  std::vector<float> a(n), b(n), c(n);
  for (size_t i = 0; i < n; ++i) a[i] = v[i], b[i] = v[(i * 7 + 3) % n], c[i] = v[(i * 13 + 5) % n];
  std::string src =
      R"(extern "C" __global__ void k(const float* a, const float* b, const float* c, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i], r[12];
  asm("add.rn.f32 %0, %1, %2;" : "=f"(r[0]) : "f"(x), "f"(y));
  asm("add.rz.f32 %0, %1, %2;" : "=f"(r[1]) : "f"(x), "f"(y));
  asm("add.rm.f32 %0, %1, %2;" : "=f"(r[2]) : "f"(x), "f"(y));
  asm("add.rp.f32 %0, %1, %2;" : "=f"(r[3]) : "f"(x), "f"(y));
  asm("mul.rn.f32 %0, %1, %2;" : "=f"(r[4]) : "f"(x), "f"(y));
  asm("mul.rz.f32 %0, %1, %2;" : "=f"(r[5]) : "f"(x), "f"(y));
  asm("mul.rm.f32 %0, %1, %2;" : "=f"(r[6]) : "f"(x), "f"(y));
  asm("mul.rp.f32 %0, %1, %2;" : "=f"(r[7]) : "f"(x), "f"(y));
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r[8]) : "f"(x), "f"(y), "f"(z));
  asm("fma.rz.f32 %0, %1, %2, %3;" : "=f"(r[9]) : "f"(x), "f"(y), "f"(z));
  asm("fma.rm.f32 %0, %1, %2, %3;" : "=f"(r[10]) : "f"(x), "f"(y), "f"(z));
  asm("fma.rp.f32 %0, %1, %2, %3;" : "=f"(r[11]) : "f"(x), "f"(y), "f"(z));
  for (int k = 0; k < 12; ++k) out[12 * i + k] = __float_as_uint(r[k]);
})";
  auto out = run_f3(src, a, b, c, 12);
  const int modes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
  auto canon = [](float f) { return std::isnan(f) ? 0x7fffffffu : fb(f); };
  for (size_t i = 0; i < n; ++i) {
    float x = a[i], y = b[i], z = c[i];
    CAPTURE(x);
    CAPTURE(y);
    CAPTURE(z);
    for (int m = 0; m < 4; ++m) {
      CAPTURE(m);
      CHECK(out[12 * i + m] == canon(in_mode(modes[m], [&] {
              volatile float p = x, q = y;
              return p + q;
            })));
      CHECK(out[12 * i + 4 + m] == canon(in_mode(modes[m], [&] {
              volatile float p = x, q = y;
              return p * q;
            })));
      CHECK(out[12 * i + 8 + m] == canon(in_mode(modes[m], [&] { return std::fmaf(x, y, z); })));
    }
  }
}

TEST_CASE("f32 div / sqrt / rcp round to nearest, min / max NaN and zero rules, .ftz, .sat") {
  auto v = interesting_floats();
  size_t n = v.size();
  std::vector<float> a(n), b(n), c(n, 0.0f);
  for (size_t i = 0; i < n; ++i) a[i] = v[i], b[i] = v[(i * 5 + 1) % n];
  std::string src =
      R"(extern "C" __global__ void k(const float* a, const float* b, const float* c, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], r[10];
  asm("div.rn.f32 %0, %1, %2;" : "=f"(r[0]) : "f"(x), "f"(y));
  asm("sqrt.rn.f32 %0, %1;" : "=f"(r[1]) : "f"(x));
  asm("rcp.rn.f32 %0, %1;" : "=f"(r[2]) : "f"(x));
  asm("min.f32 %0, %1, %2;" : "=f"(r[3]) : "f"(x), "f"(y));
  asm("max.f32 %0, %1, %2;" : "=f"(r[4]) : "f"(x), "f"(y));
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r[5]) : "f"(x), "f"(y));
  asm("add.ftz.f32 %0, %1, %2;" : "=f"(r[6]) : "f"(x), "f"(y));
  asm("mul.sat.f32 %0, %1, %2;" : "=f"(r[7]) : "f"(x), "f"(y));
  asm("abs.f32 %0, %1;" : "=f"(r[8]) : "f"(x));
  asm("copysign.f32 %0, %1, %2;" : "=f"(r[9]) : "f"(x), "f"(y));
  for (int k = 0; k < 10; ++k) out[10 * i + k] = __float_as_uint(r[k]);
})";
  auto out = run_f3(src, a, b, c, 10);
  auto canon = [](float f) { return std::isnan(f) ? 0x7fffffffu : fb(f); };
  auto ftz = [](float f) {
    return std::fpclassify(f) == FP_SUBNORMAL ? std::copysign(0.0f, f) : f;
  };
  for (size_t i = 0; i < n; ++i) {
    float x = a[i], y = b[i];
    CAPTURE(x);
    CAPTURE(y);
    CHECK(out[10 * i + 0] == canon(x / y));
    CHECK(out[10 * i + 1] == canon(std::sqrt(x)));
    CHECK(out[10 * i + 2] == canon(1.0f / x));
    float mn, mx;
    if (std::isnan(x) && std::isnan(y))
      mn = mx = bf(0x7fffffffu);
    else if (std::isnan(x))
      mn = mx = y;
    else if (std::isnan(y))
      mn = mx = x;
    else if (x == y)
      mn = std::signbit(x) ? x : y, mx = std::signbit(x) ? y : x; // -0 < +0
    else
      mn = std::min(x, y), mx = std::max(x, y);
    CHECK(out[10 * i + 3] == fb(mn));
    CHECK(out[10 * i + 4] == fb(mx));
    CHECK(out[10 * i + 5] == (std::isnan(x) || std::isnan(y) ? 0x7fffffffu : fb(mx)));
    CHECK(out[10 * i + 6] == canon(ftz(ftz(x) + ftz(y))));
    float s = x * y;
    s = std::isnan(s) ? 0.0f : std::min(std::max(s, 0.0f), 1.0f);
    CHECK(out[10 * i + 7] == fb(s));
    CHECK(out[10 * i + 8] == (fb(x) & 0x7fffffffu));
    CHECK(out[10 * i + 9] == ((fb(y) & 0x7fffffffu) | (fb(x) & 0x80000000u)));
  }
}

TEST_CASE("integer corner cases: division by zero, overflow, shifts, bit fields, byte permutes, "
          "funnel shifts") {
  Plan p;
  p.program = program_from(
      R"(extern "C" __global__ void k(const int* a, const int* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  unsigned r[16];
  asm("div.s32 %0, %1, %2;" : "=r"(r[0]) : "r"(x), "r"(y));
  asm("rem.s32 %0, %1, %2;" : "=r"(r[1]) : "r"(x), "r"(y));
  asm("div.u32 %0, %1, %2;" : "=r"(r[2]) : "r"(x), "r"(y));
  asm("shr.s32 %0, %1, %2;" : "=r"(r[3]) : "r"(x), "r"(y & 63));
  asm("shl.b32 %0, %1, %2;" : "=r"(r[4]) : "r"(x), "r"(y & 63));
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r[5]) : "r"(x), "r"(y & 31), "r"((y >> 5) & 31));
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r[6]) : "r"(x), "r"(y & 31), "r"((y >> 5) & 31));
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r[7]) : "r"(y), "r"(x), "r"((y >> 10) & 31), "r"((y >> 15) & 31));
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r[8]) : "r"(x), "r"(y), "r"(y >> 3));
  asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r[9]) : "r"(x), "r"(y), "r"(y));
  asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(r[10]) : "r"(x), "r"(y), "r"(y));
  asm("shf.r.clamp.b32 %0, %1, %2, %3;" : "=r"(r[11]) : "r"(x), "r"(y), "r"(y & 63));
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r[12]) : "r"(x), "r"(y), "r"(x >> 7));
  asm("mul.hi.s32 %0, %1, %2;" : "=r"(r[13]) : "r"(x), "r"(y));
  asm("bfind.s32 %0, %1;" : "=r"(r[14]) : "r"(x));
  asm("add.sat.s32 %0, %1, %2;" : "=r"(r[15]) : "r"(x), "r"(y));
  for (int k = 0; k < 16; ++k) out[16 * i + k] = r[k];
})");
  std::vector<int32_t> a = {7,         -7, 0,       std::numeric_limits<int32_t>::min(),
                            123456789, -1, 1 << 30, 5};
  std::vector<int32_t> b = {2, 2, 0, -1, -987, 0, 3000, 0x7fffffff};
  uint32_t s = 7;
  for (int i = 0; i < 100; ++i) {
    s = s * 1664525u + 1013904223u;
    a.push_back(int32_t(s));
    s = s * 1664525u + 1013904223u;
    b.push_back(int32_t(s) >> (i % 20));
  }
  int n = int(a.size());
  int A = p.buffer("a", a), B = p.buffer("b", b),
      O = p.buffer("out", std::vector<uint32_t>(size_t(n) * 16));
  p.launch("k", {uint32_t((n + 63) / 64), 1, 1}, {64, 1, 1},
           {Plan::buf(A), Plan::buf(B), Plan::buf(O), Plan::val(n)});
  auto res = p.run();
  REQUIRE(!res.fault);
  auto out = p.get<uint32_t>(O);
  for (int i = 0; i < n; ++i) {
    int32_t x = a[size_t(i)], y = b[size_t(i)];
    uint32_t ux = uint32_t(x), uy = uint32_t(y);
    CAPTURE(x);
    CAPTURE(y);
    const uint32_t* r = &out[size_t(i) * 16];
    int32_t q = y == 0 ? -1 : (x == std::numeric_limits<int32_t>::min() && y == -1) ? x : x / y;
    int32_t m = y == 0 ? x : (x == std::numeric_limits<int32_t>::min() && y == -1) ? 0 : x % y;
    CHECK(r[0] == uint32_t(q));
    CHECK(r[1] == uint32_t(m));
    CHECK(r[2] == (uy == 0 ? 0xffffffffu : ux / uy));
    uint32_t sh = uy & 63;
    CHECK(r[3] == uint32_t(sh >= 32 ? (x < 0 ? -1 : 0) : x >> sh));
    CHECK(r[4] == (sh >= 32 ? 0u : ux << sh));
    uint32_t pos = uy & 31, len = (uy >> 5) & 31;
    uint32_t field = len == 0 ? 0 : (ux >> pos) & (len >= 32 ? ~0u : ((1u << len) - 1));
    if (pos + len > 32 && len) field = ux >> pos; // bits past 31 read as the sign bit below
    uint32_t got = std::min(len, 32 - pos);
    uint32_t sfield = field;
    if (len && ((ux >> std::min(pos + len - 1, 31u)) & 1) && got < 32) sfield |= ~0u << got;
    CHECK(r[5] == (len ? sfield : 0u));
    CHECK(r[6] == field);
    uint32_t bpos = (uy >> 10) & 31, blen = (uy >> 15) & 31, ins = ux;
    for (uint32_t k = 0; k < blen && bpos + k < 32; ++k)
      ins = (ins & ~(1u << (bpos + k))) | (((uy >> k) & 1) << (bpos + k));
    CHECK(r[7] == ins);
    uint64_t t = (uint64_t(uy) << 32) | ux;
    uint32_t pr = 0, c = uy >> 3;
    for (int k = 0; k < 4; ++k) {
      uint32_t sel = (c >> (4 * k)) & 15, byte = uint32_t(t >> (8 * (sel & 7))) & 0xff;
      if (sel & 8) byte = (byte & 0x80) ? 0xff : 0;
      pr |= byte << (8 * k);
    }
    CHECK(r[8] == pr);
    uint32_t f4 = 0, b4 = 0, s2 = uy & 3;
    for (int k = 0; k < 4; ++k) {
      f4 |= uint32_t((t >> (8 * ((s2 + k) & 7))) & 0xff) << (8 * k);
      b4 |= uint32_t((t >> (8 * ((s2 - k) & 7))) & 0xff) << (8 * k);
    }
    CHECK(r[9] == f4);
    CHECK(r[10] == b4);
    uint32_t nsh = std::min(uy & 63, 32u);
    CHECK(r[11] == uint32_t(t >> nsh));
    CHECK(r[12] == (ux ^ uy ^ uint32_t(x >> 7)));
    CHECK(r[13] == uint32_t((int64_t(x) * int64_t(y)) >> 32));
    uint32_t u = x < 0 ? ~ux : ux;
    CHECK(r[14] == (u == 0 ? 0xffffffffu : uint32_t(31 - std::countl_zero(u))));
    int64_t sum = int64_t(x) + y;
    CHECK(r[15] ==
          uint32_t(int32_t(std::min<int64_t>(std::max<int64_t>(sum, INT32_MIN), INT32_MAX))));
  }
}

TEST_CASE("carry chains: a 96-bit add with add.cc / addc.cc / addc") {
  Plan p;
  p.program = program_from(
      R"(extern "C" __global__ void k(const unsigned* a, const unsigned* b, unsigned* out) {
  int i = threadIdx.x;
  unsigned r0, r1, r2;
  asm("add.cc.u32 %0, %3, %6;\n\taddc.cc.u32 %1, %4, %7;\n\taddc.u32 %2, %5, %8;"
      : "=r"(r0), "=r"(r1), "=r"(r2)
      : "r"(a[3 * i]), "r"(a[3 * i + 1]), "r"(a[3 * i + 2]), "r"(b[3 * i]), "r"(b[3 * i + 1]), "r"(b[3 * i + 2]));
  out[3 * i] = r0;
  out[3 * i + 1] = r1;
  out[3 * i + 2] = r2;
})");
  std::vector<uint32_t> a = {0xffffffffu, 0xffffffffu, 1, 5, 6, 7},
                        b = {1, 0, 0, 0xfffffffbu, 0xffffffffu, 0};
  int A = p.buffer("a", a), B = p.buffer("b", b), O = p.buffer("out", std::vector<uint32_t>(6));
  p.launch("k", {1, 1, 1}, {2, 1, 1}, {Plan::buf(A), Plan::buf(B), Plan::buf(O)});
  auto r = p.run();
  REQUIRE(!r.fault);
  CHECK(p.get<uint32_t>(O) == std::vector<uint32_t>{0, 0, 2, 0, 6, 8});
}

TEST_CASE(
    "a signed load into a 64-bit register sign-extends to 64 bits, an unsigned one zero-extends") {
  // NVRTC emits `ld.shared.s32 %rd, [...]` for an int field read into a 64-bit index; taken as
  // 32 bits wide, -1 became 4294967295 and a `slot >= 0` test passed for slot -1.
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(const int* x, unsigned long long* out) {
  __shared__ int s[4];
  long long a, b, c, d, e;
  asm volatile("ld.global.s32 %0, [%1];" : "=l"(a) : "l"(x));
  asm volatile("ld.global.s16 %0, [%1];" : "=l"(b) : "l"(x + 1));
  asm volatile("ld.global.s8 %0, [%1];" : "=l"(c) : "l"(x + 2));
  asm volatile("ld.global.u32 %0, [%1];" : "=l"(d) : "l"(x));
  s[threadIdx.x] = x[3];
  __syncthreads();
  asm volatile("ld.shared.s32 %0, [%1];" : "=l"(e) : "r"((unsigned)__cvta_generic_to_shared(s)));
  int f;
  asm volatile("ld.global.s16 %0, [%1];" : "=r"(f) : "l"(x + 1));
  out[0] = a, out[1] = b, out[2] = c, out[3] = d, out[4] = e, out[5] = (unsigned)f;
})");
  std::vector<int32_t> x = {-1, -2, -128, -7};
  int X = p.buffer("x", x), O = p.buffer("out", std::vector<uint64_t>(6));
  p.launch("k", {1, 1, 1}, {1, 1, 1}, {Plan::buf(X), Plan::buf(O)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  CHECK(p.get<uint64_t>(O) == std::vector<uint64_t>{uint64_t(-1), uint64_t(-2), uint64_t(-128),
                                                    0xffffffffull, uint64_t(-7), 0xfffffffeull});
}

TEST_CASE("__syncthreads_count / _and / _or reduce over the block") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out, const int* x) {
  int t = threadIdx.x;
  out[t] = __syncthreads_count(x[t] > 3);
  out[t + 96] = __syncthreads_and(x[t] > 3);
  out[t + 192] = __syncthreads_or(x[t] > 90);
})");
  std::vector<int32_t> x(96);
  for (int i = 0; i < 96; ++i) x[i] = i;
  int O = p.buffer("out", std::vector<int32_t>(288)), X = p.buffer("x", x);
  p.launch("k", {1, 1, 1}, {96, 1, 1}, {Plan::buf(O), Plan::buf(X)});
  auto r = p.run();
  REQUIRE(!r.fault);
  auto out = p.get<int32_t>(O);
  for (int t = 0; t < 96; ++t) {
    CHECK(out[t] == 92);
    CHECK(out[t + 96] == 0);
    CHECK(out[t + 192] != 0);
  }
}

TEST_CASE("float atomics: global add flushes subnormals, shared add keeps them") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(float* g, float* out) {
  __shared__ float s;
  if (threadIdx.x == 0) s = 0.0f;
  __syncthreads();
  float tiny = __int_as_float(0x00000100); // a subnormal
  atomicAdd(g, tiny);
  atomicAdd(&s, tiny);
  __syncthreads();
  if (threadIdx.x == 0) out[0] = s;
})");
  int G = p.buffer("g", std::vector<float>(1, 0.0f)), O = p.buffer("out", std::vector<float>(1));
  p.launch("k", {1, 1, 1}, {4, 1, 1}, {Plan::buf(G), Plan::buf(O)});
  auto r = p.run();
  REQUIRE(!r.fault);
  CHECK(fb(p.get<float>(G)[0]) == 0u);
  CHECK(fb(p.get<float>(O)[0]) == 0x400u);
}

TEST_CASE("redux.sync and match.all") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(const int* x, int* out) {
  int t = threadIdx.x;
  out[t] = __reduce_add_sync(0xffffffffu, x[t]);
  out[t + 32] = __reduce_max_sync(0xffffffffu, x[t]);
  if (t < 16) out[t + 64] = (int)__reduce_or_sync(0x0000ffffu, (unsigned)x[t]);
  int pred;
  unsigned m = __match_all_sync(0xffffffffu, x[t] & 1, &pred);
  out[t + 96] = (int)m;
  out[t + 128] = pred;
})");
  std::vector<int32_t> x(32);
  for (int i = 0; i < 32; ++i) x[i] = (i * 7) % 13 * 2;
  int X = p.buffer("x", x), O = p.buffer("out", std::vector<int32_t>(160));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(X), Plan::buf(O)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto out = p.get<int32_t>(O);
  int sum = 0, mx = 0, orv = 0;
  for (int i = 0; i < 32; ++i) sum += x[i], mx = std::max(mx, x[i]);
  for (int i = 0; i < 16; ++i) orv |= x[i];
  for (int t = 0; t < 32; ++t) {
    CHECK(out[t] == sum);
    CHECK(out[t + 32] == mx);
    if (t < 16) CHECK(out[t + 64] == orv);
    CHECK(uint32_t(out[t + 96]) == 0xffffffffu); // all even
    CHECK(out[t + 128] == 1);
  }
}

TEST_CASE(
    "loads and stores with an L2 cache policy (createpolicy, .L2::cache_hint) move the data") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(const float4* x, float4* out) {
  unsigned long long keep, drop;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(keep));
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 0.5;" : "=l"(drop));
  float4 v;
  asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(x + threadIdx.x), "l"(keep));
  v.x += 1.0f;
  asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;"
               :: "l"(out + threadIdx.x), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "l"(drop)
               : "memory");
})");
  std::vector<float> x(4 * 32);
  for (int i = 0; i < 4 * 32; ++i) x[i] = 0.5f * float(i) - 7.0f;
  int X = p.buffer("x", x), O = p.buffer("out", std::vector<float>(4 * 32, -1.0f));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(X), Plan::buf(O)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto out = p.get<float>(O);
  for (int i = 0; i < 4 * 32; ++i) CHECK(out[i] == x[i] + (i % 4 == 0 ? 1.0f : 0.0f));
}

TEST_CASE("sin.approx / cos.approx reduce their argument as the GPU does: x / (2 pi) in f32, "
          "rounded toward zero") {
  // Small arguments stay within the PTX ISA's bound (2^-20.9 absolute in [-pi, pi]); large ones
  // carry the GPU's range-reduction error (a __sinf RoPE at position 131071 fails because of it).
  std::vector<float> a = {0.0f,        -0.0f,     0.5f,       -1.0f,      3.0f,
                          -3.1415926f, 100.0f,    1000.5f,    4096.0f,    65536.75f,
                          113500.1f,   131071.0f, -131071.0f, 1048575.0f, 16777216.0f};
  std::vector<float> b(a.size(), 0.0f), c(a.size(), 0.0f);
  std::string src =
      R"(extern "C" __global__ void k(const float* a, const float* b, const float* c, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[2 * i] = __float_as_uint(__sinf(a[i]));
  out[2 * i + 1] = __float_as_uint(__cosf(a[i]));
})";
  auto out = run_f3(src, a, b, c, 2);
  const double two_pi = 6.283185307179586477;
  for (size_t i = 0; i < a.size(); ++i) {
    double x = a[i];
    CAPTURE(x);
    // The host's own reduction: the product in double is exact; truncate it to f32 by hand.
    double p = x * double(0.15915493667125701904f);
    float rz = float(p);
    if (std::fabs(double(rz)) > std::fabs(p)) rz = std::nextafter(rz, 0.0f);
    double frac = double(rz) - std::trunc(double(rz));
    float want_s = float(std::sin(two_pi * frac)), want_c = float(std::cos(two_pi * frac));
    float got_s = bf(out[2 * i]), got_c = bf(out[2 * i + 1]);
    CHECK(std::fabs(double(got_s) - want_s) <= 1e-7);
    CHECK(std::fabs(double(got_c) - want_c) <= 1e-7);
    if (std::fabs(x) <= 3.1415927) {
      CHECK(std::fabs(got_s - std::sin(x)) <= std::ldexp(1.0, -21));
      CHECK(std::fabs(got_c - std::cos(x)) <= std::ldexp(1.0, -21));
    }
  }
  CHECK(std::signbit(bf(out[2]))); // __sinf(-0) = -0
  // At 131071 the reduction alone moves the sine by 0.0095 (sin(131071) = -0.575).
  CHECK(std::fabs(bf(out[2 * 11]) - std::sin(131071.0)) > 1e-3);
}
