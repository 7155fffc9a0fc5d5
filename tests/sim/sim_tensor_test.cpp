// Tensor-core and async-copy instructions beyond the corpus: wmma with bf16 inputs and an f16
// accumulator, mma.sync m16n8k8 and m16n8k32 (fp8), ldmatrix .trans, cp.async, elect.sync
// (compute_90).
#include "sim_test_util.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>

using namespace simtest;

namespace {

double h2d(uint16_t h) {
  uint32_t e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp(double(m), -24) : std::ldexp(double(m | 1024), int(e) - 25);
  return (h & 0x8000) ? -v : v;
}
uint16_t d2h_small(double v) { // exact for the small multiples of 1/8 used below
  uint16_t s = v < 0 ? 0x8000 : 0;
  v = std::fabs(v);
  if (v == 0) return s;
  int e;
  double f = std::frexp(v, &e); // v = f * 2^e, f in [0.5, 1)
  uint32_t man = uint32_t(std::lround((f * 2 - 1) * 1024));
  return uint16_t(s | (uint32_t(e - 1 + 15) << 10) | man);
}
uint16_t d2bf(double v) {
  return uint16_t(std::bit_cast<uint32_t>(float(v)) >> 16);
} // exact for these values

} // namespace

TEST_CASE("wmma with bf16 inputs, and with an f16 accumulator") {
  Plan p;
  p.program = program_from(R"(#include <mma.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
using namespace nvcuda;
extern "C" __global__ void k(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, const __half* Ah, const __half* Bh, __half* Ch) {
  {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 1.0f);
    wmma::load_matrix_sync(a, A, 16);
    wmma::load_matrix_sync(b, B, 16);
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(C, c, 16, wmma::mem_col_major);
  }
  {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, __half> c;
    wmma::fill_fragment(c, __float2half(0.0f));
    wmma::load_matrix_sync(a, Ah, 16);
    wmma::load_matrix_sync(b, Bh, 16);
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(Ch, c, 16, wmma::mem_row_major);
  }
})");
  std::vector<uint16_t> A(256), B(256), Ah(256), Bh(256);
  for (int i = 0; i < 256; ++i) {
    A[i] = d2bf(((i * 7) % 9 - 4) * 0.125);
    B[i] = d2bf(((i * 5) % 7 - 3) * 0.25);
    Ah[i] = d2h_small(((i * 3) % 5 - 2) * 0.5);
    Bh[i] = d2h_small(((i * 11) % 7 - 3) * 0.125);
  }
  int a = p.buffer("A", A), b = p.buffer("B", B), c = p.buffer("C", std::vector<float>(256)),
      ah = p.buffer("Ah", Ah), bh = p.buffer("Bh", Bh),
      ch = p.buffer("Ch", std::vector<uint16_t>(256));
  p.launch("k", {1, 1, 1}, {32, 1, 1},
           {Plan::buf(a), Plan::buf(b), Plan::buf(c), Plan::buf(ah), Plan::buf(bh), Plan::buf(ch)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto C = p.get<float>(c);
  auto Ch = p.get<uint16_t>(ch);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      double acc = 1.0, acch = 0.0;
      for (int k = 0; k < 16; ++k) {
        acc += double(std::bit_cast<float>(uint32_t(A[i * 16 + k]) << 16)) *
               std::bit_cast<float>(uint32_t(B[k * 16 + j]) << 16);
        acch += h2d(Ah[k * 16 + i]) * h2d(Bh[k * 16 + j]); // A col-major: A[i][k] at k * 16 + i
      }
      CHECK(C[j * 16 + i] == float(acc)); // col-major store; small exact values
      CHECK(h2d(Ch[i * 16 + j]) == acch);
    }
}

TEST_CASE("mma.sync m16n8k8 and ldmatrix .trans") {
  Plan p;
  p.program = program_from(R"(#include <cuda_fp16.h>
extern "C" __global__ void k(const __half* A, const __half* Bkn, float* D) {
  __shared__ __half As[16 * 8];
  __shared__ __half Bs[8 * 8]; // B stored k-major (row k holds n = 0..7): ldmatrix .trans gives the col layout
  int lane = threadIdx.x;
  for (int i = lane; i < 128; i += 32) As[i] = A[i];
  for (int i = lane; i < 64; i += 32) Bs[i] = Bkn[i];
  __syncwarp();
  unsigned a[2], b;
  unsigned sa = (unsigned)__cvta_generic_to_shared(&As[(lane % 16) * 8]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(a[0]), "=r"(a[1]) : "r"(sa));
  unsigned sb = (unsigned)__cvta_generic_to_shared(&Bs[(lane % 8) * 8]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(b) : "r"(sb));
  float d[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(b));
  int g = lane / 4, t = lane % 4;
  D[g * 8 + 2 * t] = d[0];
  D[g * 8 + 2 * t + 1] = d[1];
  D[(g + 8) * 8 + 2 * t] = d[2];
  D[(g + 8) * 8 + 2 * t + 1] = d[3];
})");
  std::vector<uint16_t> A(128), B(64);
  for (int i = 0; i < 128; ++i) A[i] = d2h_small(((i * 7) % 11 - 5) * 0.25);
  for (int i = 0; i < 64; ++i) B[i] = d2h_small(((i * 3) % 7 - 3) * 0.5);
  int a = p.buffer("A", A), b = p.buffer("B", B), d = p.buffer("D", std::vector<float>(128));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(a), Plan::buf(b), Plan::buf(d)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto D = p.get<float>(d);
  for (int i = 0; i < 16; ++i)
    for (int n = 0; n < 8; ++n) {
      double acc = 0;
      for (int k = 0; k < 8; ++k) acc += h2d(A[i * 8 + k]) * h2d(B[k * 8 + n]);
      CHECK(D[i * 8 + n] == float(acc));
    }
}

TEST_CASE("cp.async copies global to shared, with zero fill") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(const int* in, int* out) {
  __shared__ __align__(16) int s[128];
  int t = threadIdx.x;
  unsigned dst = (unsigned)__cvta_generic_to_shared(&s[4 * t]);
  int keep = t < 16 ? 16 : 8; // the upper half copies 8 bytes and zero-fills the rest
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(in + 4 * t), "r"(keep));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 0;");
  __syncthreads();
  for (int k = 0; k < 4; ++k) out[4 * t + k] = s[4 * t + k];
})");
  std::vector<int32_t> in(128);
  for (int i = 0; i < 128; ++i) in[i] = i + 1;
  int I = p.buffer("in", in), O = p.buffer("out", std::vector<int32_t>(128));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(I), Plan::buf(O)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto out = p.get<int32_t>(O);
  for (int t = 0; t < 32; ++t)
    for (int k = 0; k < 4; ++k) CHECK(out[4 * t + k] == (t < 16 || k < 2 ? 4 * t + k + 1 : 0));
  CHECK(counter(r, "global_load_requests") == 1);
}

TEST_CASE("elect.sync picks the lowest active lane (compute_90)") {
  Plan p;
  p.program = program_from(R"(extern "C" __global__ void k(int* out) {
  int t = threadIdx.x;
  if (t >= 3) {
    unsigned leader;
    int is;
    asm volatile("{ .reg .pred p; elect.sync %0|p, 0xffffffff; selp.s32 %1, 1, 0, p; }" : "=r"(leader), "=r"(is));
    out[t] = is ? 100 + (int)leader : (int)leader;
  }
})",
                           "kernel.cu", "compute_90");
  int O = p.buffer("out", std::vector<int32_t>(32, -1));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(O)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto out = p.get<int32_t>(O);
  CHECK(out[3] == 103);
  for (int t = 4; t < 32; ++t) CHECK(out[t] == 3);
}

namespace {

// fp8 codes decoded on the host, from the formats' definitions (no simulator code): e4m3 has a
// bias of 7, subnormals m * 2^-9 and no infinities (S.1111.111 is NaN); e5m2 a bias of 15 and
// subnormals m * 2^-16.
double e4m3_value(uint8_t b) {
  int e = (b >> 3) & 15, m = b & 7;
  double v = e == 0 ? std::ldexp(double(m), -9) : std::ldexp(double(8 + m), e - 10);
  return b & 0x80 ? -v : v;
}
double e5m2_value(uint8_t b) {
  int e = (b >> 2) & 31, m = b & 3;
  double v = e == 0 ? std::ldexp(double(m), -16) : std::ldexp(double(4 + m), e - 17);
  return b & 0x80 ? -v : v;
}

} // namespace

TEST_CASE("mma.sync m16n8k32 with fp8 inputs: every lane's fragments, by hand and by ldmatrix") {
  // Kernel k: for each of 3 type pairs (e4m3 x e4m3, e5m2 x e5m2, e4m3 x e5m2) and each of two
  // ways in (registers packed by hand from the PTX ISA's formulas; ldmatrix from shared memory),
  // D (16 x 8, f32) = A (16 x 32, row-major bytes) x B (given as 8 rows n of 32 bytes k) + C.
  // A wrong row, column or byte order in any lane's fragment moves a random value elsewhere.
  Plan p;
  p.program = program_from(R"(
__device__ unsigned pack4(const unsigned char* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | ((unsigned)p[3] << 24);
}
extern "C" __global__ void k(const unsigned char* A, const unsigned char* B, const float* C, float* D) {
  __shared__ __align__(16) unsigned char As[3][16 * 32];
  __shared__ __align__(16) unsigned char Bs[3][8 * 32];
  int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  for (int i = lane; i < 3 * 512; i += 32) As[i / 512][i % 512] = A[i];
  for (int i = lane; i < 3 * 256; i += 32) Bs[i / 256][i % 256] = B[i];
  __syncwarp();
  for (int s = 0; s < 3; ++s) {
    for (int way = 0; way < 2; ++way) {
      const unsigned char* a = A + s * 512;
      const unsigned char* b = B + s * 256;
      unsigned ra[4], rb[2];
      if (way == 0) {  // a0: row g, k 4t..; a1: row g + 8; a2: row g, k 16 + 4t..; a3: row g + 8, k 16 + 4t..
        ra[0] = pack4(a + g * 32 + 4 * t);
        ra[1] = pack4(a + (g + 8) * 32 + 4 * t);
        ra[2] = pack4(a + g * 32 + 16 + 4 * t);
        ra[3] = pack4(a + (g + 8) * 32 + 16 + 4 * t);
        rb[0] = pack4(b + g * 32 + 4 * t);       // column n = g, k 4t..4t+3
        rb[1] = pack4(b + g * 32 + 16 + 4 * t);  // k 16 + 4t..
      } else {  // ldmatrix moves b16 pairs: 8-bit tiles load through it unchanged
        unsigned sa = (unsigned)__cvta_generic_to_shared(&As[s][(lane % 16) * 32 + (lane / 16) * 16]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(sa));
        unsigned sb = (unsigned)__cvta_generic_to_shared(&Bs[s][(lane % 8) * 32 + ((lane / 8) % 2) * 16]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(rb[0]), "=r"(rb[1]) : "r"(sb));
      }
      float d[4] = {C[g * 8 + 2 * t], C[g * 8 + 2 * t + 1], C[(g + 8) * 8 + 2 * t], C[(g + 8) * 8 + 2 * t + 1]};
      if (s == 0)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
      else if (s == 1)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
      else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
      float* o = D + (s * 2 + way) * 128;
      o[g * 8 + 2 * t] = d[0];
      o[g * 8 + 2 * t + 1] = d[1];
      o[(g + 8) * 8 + 2 * t] = d[2];
      o[(g + 8) * 8 + 2 * t + 1] = d[3];
    }
  }
})",
                           "kernel.cu", "compute_90");
  // Random codes, no NaN (e4m3 x.1111.111; e5m2 exponent 31). Row 3 of each A and column 5 of
  // each B saturate: e4m3 +-448 (0x7e / 0xfe), e5m2 +-57344 (0x7b / 0xfb).
  uint64_t st = 0x9e3779b97f4a7c15ull;
  auto rnd = [&] {
    st ^= st << 13, st ^= st >> 7, st ^= st << 17;
    return uint8_t(st >> 24);
  };
  auto code = [&](bool e4) {
    for (;;) {
      uint8_t b = rnd();
      if (e4 ? (b & 0x7f) != 0x7f : ((b >> 2) & 31) != 31) return b;
    }
  };
  const bool a_e4[3] = {true, false, true}, b_e4[3] = {true, false, false};
  std::vector<uint8_t> A(3 * 512), B(3 * 256);
  for (int s = 0; s < 3; ++s) {
    for (int i = 0; i < 512; ++i)
      A[s * 512 + i] =
          i / 32 == 3 ? uint8_t((a_e4[s] ? 0x7e : 0x7b) | (rnd() & 0x80)) : code(a_e4[s]);
    for (int i = 0; i < 256; ++i)
      B[s * 256 + i] =
          i / 32 == 5 ? uint8_t((b_e4[s] ? 0x7e : 0x7b) | (rnd() & 0x80)) : code(b_e4[s]);
  }
  std::vector<float> C(128);
  for (int i = 0; i < 128; ++i) C[i] = float(int(rnd()) - 128) * 0.25f;
  int a = p.buffer("A", A), b = p.buffer("B", B), c = p.buffer("C", C),
      d = p.buffer("D", std::vector<float>(6 * 128));
  p.launch("k", {1, 1, 1}, {32, 1, 1}, {Plan::buf(a), Plan::buf(b), Plan::buf(c), Plan::buf(d)});
  auto r = p.run();
  INFO(r.fault.message);
  REQUIRE(!r.fault);
  auto D = p.get<float>(d);
  for (int s = 0; s < 3; ++s)
    for (int way = 0; way < 2; ++way)
      for (int i = 0; i < 16; ++i)
        for (int n = 0; n < 8; ++n) {
          CAPTURE(s);
          CAPTURE(way);
          CAPTURE(i);
          CAPTURE(n);
          // The simulator's model: products exact, summed in double in k order, C added, one
          // rounding to f32 (e4m3 x e4m3 sums are exact in double; the rest follow the order).
          double acc = 0;
          for (int k = 0; k < 32; ++k) {
            uint8_t x = A[s * 512 + i * 32 + k], y = B[s * 256 + n * 32 + k];
            acc += (a_e4[s] ? e4m3_value(x) : e5m2_value(x)) *
                   (b_e4[s] ? e4m3_value(y) : e5m2_value(y));
          }
          CHECK(D[(s * 2 + way) * 128 + i * 8 + n] == float(acc + C[i * 8 + n]));
        }
  CHECK(counter(r, "flops_tensor") == 6.0 * 2 * 16 * 8 * 32);
}
