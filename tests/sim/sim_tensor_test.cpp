// Tensor-core and async-copy instructions beyond the corpus: wmma with bf16 inputs and an f16
// accumulator, mma.sync m16n8k8, ldmatrix .trans, cp.async, elect.sync (compute_90).
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
