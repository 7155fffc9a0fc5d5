// Tensor-core instructions as warp collectives: wmma.load / wmma.mma / wmma.store (fragment layout
// is opaque in PTX, so the simulator picks one: element (lane * E + i) mod size of the row-major
// matrix, duplicated across lanes when the fragment holds more than one copy), mma.sync
// m16n8k16 / m16n8k8 (f16, bf16) and m16n8k32 (fp8 e4m3 / e5m2, either on either side) with the
// fragment layouts the PTX ISA specifies, and ldmatrix.
// Products of f16/bf16/fp8 inputs are exact in double; the sums are accumulated in double and
// rounded once, which matches the GPU to within a few ulp (the tensor cores truncate inner sums).
#include "core/tensor_map.hpp"
#include "fp_fast.hpp"
#include "ops_common.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <immintrin.h>

namespace wb::sim {
namespace {

enum class FT : uint8_t { f16, bf16, f32, f64, s32, tf32, e4m3, e5m2 }; // 3 bits (Inst::flags)

// Every e4m3 or e5m2 code widened once: the tensor-core loops widen each element they touch, and
// a 256-entry table is the same double as fmt_to_double's, bit for bit.
const double* fp8_table(FT t) {
  static const auto make = [](const FFmt& f) {
    std::array<double, 256> a{};
    for (int i = 0; i < 256; ++i) a[size_t(i)] = fmt_to_double(uint64_t(i), f);
    return a;
  };
  static const std::array<double, 256> e4m3 = make(kE4M3), e5m2 = make(kE5M2);
  return t == FT::e4m3 ? e4m3.data() : e5m2.data();
}

double elem_value(uint32_t bitsv, FT t) {
  switch (t) {
  case FT::f16:
    return fmt_to_double(uint16_t(bitsv), kF16);
  case FT::bf16:
    return fmt_to_double(uint16_t(bitsv), kBF16);
  case FT::e4m3:
  case FT::e5m2:
    return fp8_table(t)[uint8_t(bitsv)];
  case FT::tf32:
  case FT::f32:
    return f32(bitsv);
  case FT::s32:
    return double(int32_t(bitsv));
  default:
    return 0;
  }
}
// A bf16 or f16 element widened exactly (through f32: every such value is one).
double widen_bf16(uint32_t b) {
  return double(std::bit_cast<float>(bf16_to_f32_bits(uint16_t(b))));
}
double widen_f16(uint32_t b) {
  return double(std::bit_cast<float>(f16_to_f32_bits(uint16_t(b))));
}

// D (M x N) = A (M x K) B (K x N), all row-major: each element sums its products in k order, as a
// dot product would, with k outside c so that the compiler vectorises along a row of B.
// Every product is exact in double (the inputs have at most 11 significant bits), so a fused
// multiply-add rounds exactly as a multiply then an add does: the AVX2 form gives the same bits.
void multiply_rows_portable(const double* __restrict A, const double* __restrict B,
                            double* __restrict D, int M, int N, int K) {
  for (int r = 0; r < M; ++r) {
    double* d = D + r * N;
    std::fill(d, d + N, 0.0);
    for (int k = 0; k < K; ++k) {
      const double a = A[r * K + k];
      const double* b = B + k * N;
      for (int c = 0; c < N; ++c) d[c] += a * b[c];
    }
  }
}
// Four outputs of a row at a time (N is a multiple of 4 for every tensor-core shape), each summed
// in k order. Where M is a multiple of 4 and N of 8, four rows by eight outputs at once: eight
// independent sums keep the FMA units busy where one sum would wait on its last add (the same
// adds in the same order, so the same bits).
__attribute__((target("avx2,fma"))) void multiply_rows_avx2(const double* __restrict A,
                                                            const double* __restrict B,
                                                            double* __restrict D, int M, int N,
                                                            int K) {
  int r0 = 0;
  if (N % 8 == 0)
    for (; r0 + 4 <= M; r0 += 4) {
      const double *a0 = A + r0 * K, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K;
      for (int c = 0; c < N; c += 8) {
        __m256d s0 = _mm256_setzero_pd(), t0 = s0, s1 = s0, t1 = s0, s2 = s0, t2 = s0, s3 = s0,
                t3 = s0;
        for (int k = 0; k < K; ++k) {
          const __m256d lo = _mm256_loadu_pd(B + k * N + c),
                        hi = _mm256_loadu_pd(B + k * N + c + 4);
          __m256d x = _mm256_set1_pd(a0[k]);
          s0 = _mm256_fmadd_pd(x, lo, s0), t0 = _mm256_fmadd_pd(x, hi, t0);
          x = _mm256_set1_pd(a1[k]);
          s1 = _mm256_fmadd_pd(x, lo, s1), t1 = _mm256_fmadd_pd(x, hi, t1);
          x = _mm256_set1_pd(a2[k]);
          s2 = _mm256_fmadd_pd(x, lo, s2), t2 = _mm256_fmadd_pd(x, hi, t2);
          x = _mm256_set1_pd(a3[k]);
          s3 = _mm256_fmadd_pd(x, lo, s3), t3 = _mm256_fmadd_pd(x, hi, t3);
        }
        double* d = D + r0 * N + c;
        _mm256_storeu_pd(d, s0), _mm256_storeu_pd(d + 4, t0);
        _mm256_storeu_pd(d + N, s1), _mm256_storeu_pd(d + N + 4, t1);
        _mm256_storeu_pd(d + 2 * N, s2), _mm256_storeu_pd(d + 2 * N + 4, t2);
        _mm256_storeu_pd(d + 3 * N, s3), _mm256_storeu_pd(d + 3 * N + 4, t3);
      }
    }
  for (int r = r0; r < M; ++r) {
    const double* a = A + r * K;
    double* d = D + r * N;
    for (int c = 0; c < N; c += 4) {
      __m256d acc = _mm256_setzero_pd();
      for (int k = 0; k < K; ++k)
        acc = _mm256_fmadd_pd(_mm256_set1_pd(a[k]), _mm256_loadu_pd(B + k * N + c), acc);
      _mm256_storeu_pd(d + c, acc);
    }
  }
}
inline void multiply_rows(const double* A, const double* B, double* D, int M, int N, int K) {
  if (host_cpu::kAvx2Fma && N % 4 == 0)
    multiply_rows_avx2(A, B, D, M, N, K);
  else
    multiply_rows_portable(A, B, D, M, N, K);
}

int elem_bytes(FT t) {
  return t == FT::e4m3 || t == FT::e5m2 ? 1 : t == FT::f16 || t == FT::bf16 ? 2 : 4;
}

// Fragment: the 32-bit registers of each lane; 16-bit elements are packed two per register and
// 8-bit ones four, the lowest-numbered element in the low bits.
struct Frag {
  const uint32_t* rows;
  int nregs;
  FT t;
  int per_reg() const { return 4 / elem_bytes(t); }
  int per_lane() const { return nregs * per_reg(); }
  uint32_t get(Warp& w, int lane, int i) const {
    int n = per_reg(), eb = elem_bytes(t);
    if (n == 1) return uint32_t(w.row(rows[i])[lane]);
    uint32_t mask = (1u << (8 * eb)) - 1;
    return uint32_t(w.row(rows[i / n])[lane] >> (8 * eb * (i % n))) & mask;
  }
  void set(Warp& w, int lane, int i, uint32_t v) const {
    int n = per_reg(), eb = elem_bytes(t);
    if (n == 1) {
      w.row(rows[i])[lane] = v;
      return;
    }
    uint64_t mask = (1ull << (8 * eb)) - 1;
    uint64_t& r = w.row(rows[i / n])[lane];
    int sh = 8 * eb * (i % n);
    r = (r & ~(mask << sh)) | (uint64_t(v & mask) << sh);
    r &= 0xffffffffull;
  }
};

// wmma: which (row, col) of an R x C matrix element i of lane l holds.
inline void wmma_pos(int l, int i, int E, int R, int C, int& r, int& c) {
  int idx = (l * E + i) % (R * C);
  r = idx / C;
  c = idx % C;
}

struct Shape {
  int m, n, k;
};
bool parse_shape(const Opc& o, Shape& s) {
  for (auto& md : o.mods) {
    int m, n, k;
    if (std::sscanf(md.c_str(), "m%dn%dk%d", &m, &n, &k) == 3) {
      s = {m, n, k};
      return true;
    }
  }
  return false;
}

// aux layout for wmma.load/store: bits 0..7 which (0 a, 1 b, 2 c/d), bit 8 col-major,
// bits 16..23 element type; in.target: register list; in.vec: count; r[1] base; r[2] stride.
int h_wmma_ldst(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  int which = in.aux & 0xff;
  bool col = (in.aux >> 8) & 1;
  FT t = FT((in.aux >> 16) & 0xff);
  bool store = in.sub;
  int R, C;
  int M = int(in.imm >> 48) & 0xff, N = int(in.imm >> 40) & 0xff, K = int(in.imm >> 32) & 0xff;
  if (which == 0)
    R = M, C = K;
  else if (which == 1)
    R = K, C = N;
  else
    R = M, C = N;
  int64_t disp = int64_t(int32_t(uint32_t(in.imm)));
  Frag f{x.P->lists.data() + in.target, int(in.vec), t};
  int E = f.per_lane();
  int eb = elem_bytes(t);
  const uint64_t* base = w.row(in.r[1]);
  const uint64_t* stride = in.r[2] != kNoRow ? w.row(in.r[2]) : nullptr;
  uint64_t sect[kWarpSize * 16];
  int ns = 0, nshared = 0;
  // A run of a lane's elements along one row, wholly inside shared memory or inside the global
  // buffer the warp last touched, and aligned: its host bytes, without a lookup per element.
  // Anything else (and so every fault) goes element by element through the general lookups.
  auto run_ptr = [&](uint64_t a, uint64_t bytes, Space& sp) -> std::byte* {
    if (a & uint64_t(eb - 1)) return nullptr;
    const bool window = in.space == Space::generic && a - kSharedWindow < kWindowSize;
    if (in.space == Space::shared || window) {
      const uint64_t o = window ? a - kSharedWindow : a;
      sp = Space::shared;
      return o < x.B->shared_size && o + bytes <= x.B->shared_size ? x.B->shared + o : nullptr;
    }
    const Region* r = x.last; // a global buffer: never inside a generic window
    sp = Space::global;
    return r && a >= r->data_lo && a + bytes <= r->data_hi && !(store && r->readonly)
               ? r->host + (a - r->base)
               : nullptr;
  };
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    uint64_t ld = stride ? uint32_t(stride[l]) : uint64_t(col ? R : C);
    for (int i = 0; i < E;) {
      int r, c;
      wmma_pos(l, i, E, R, C, r, c);
      uint64_t off = col ? (uint64_t(c) * ld + r) : (uint64_t(r) * ld + c);
      uint64_t a = base[l] + uint64_t(disp) + off * eb;
      if (const int n = col ? 1 : std::min(E - i, C - c); n > 1) {
        Space sp = in.space;
        if (std::byte* p = run_ptr(a, uint64_t(n) * eb, sp)) {
          // Whole registers where the run covers them: a register's elements lie in order, the
          // lowest-numbered in the low bits, as they lie in memory.
          const int per = f.per_reg();
          if (i % per == 0 && n % per == 0)
            for (int j = 0; j < n / per; ++j) {
              uint64_t& reg = w.row(f.rows[i / per + j])[l];
              uint32_t v = uint32_t(reg);
              if (store)
                std::memcpy(p + 4 * j, &v, 4);
              else
                std::memcpy(&v, p + 4 * j, 4), reg = v;
            }
          else
            for (int k = 0; k < n; ++k) {
              uint32_t v = store ? f.get(w, l, i + k) : 0;
              if (store)
                std::memcpy(p + k * eb, &v, eb);
              else
                std::memcpy(&v, p + k * eb, eb), f.set(w, l, i + k, v);
            }
          if (sp == Space::shared) nshared += n;
          if (sp == Space::global)
            for (int k = 0; k < n; ++k, a += eb) {
              if (store && x.last->writers) note_writer(x, w, l, x.last, a);
              if (ns < int(sizeof sect / sizeof sect[0])) sect[ns++] = a >> 5;
            }
          i += n;
          continue;
        }
      }
      Space sp = in.space;
      std::byte* p;
      if (in.space == Space::global)
        p = global_ptr(x, w, in, l, a, eb, store);
      else if (in.space == Space::shared)
        p = shared_ptr(x, w, in, l, a, eb, store);
      else
        p = generic_ptr(x, w, in, l, a, eb, store, sp);
      if (!p) return kStop;
      if (store) {
        uint32_t v = f.get(w, l, i);
        std::memcpy(p, &v, eb);
        if (sp == Space::global && x.last && x.last->writers && a >= x.last->data_lo &&
            a < x.last->data_hi)
          note_writer(x, w, l, x.last, a);
      } else {
        uint32_t v = 0;
        std::memcpy(&v, p, eb);
        f.set(w, l, i, v);
      }
      if (sp == Space::global && ns < int(sizeof sect / sizeof sect[0])) sect[ns++] = a >> 5;
      if (sp == Space::shared) ++nshared;
      ++i;
    }
  }
  if (w.trace) {
    if (ns) {
      uint64_t addrs[kWarpSize * 16];
      for (int i = 0; i < ns; ++i) addrs[i] = sect[i] << 5;
      trace_global(w, addrs, ns, 32, TraceKind::global);
    } else if (nshared) {
      // A fragment's rows are contiguous: about one wavefront per 128 bytes, and no conflicts,
      // so the bytes are given per lane (a lane's whole part of the fragment), which makes the
      // wavefronts the ideal ones for the bytes asked (not "8-way conflicts" of 2-byte lanes).
      const int lanes = std::popcount(m); // at least one: a lane loaded from shared memory
      trace_shared(w, uint32_t((nshared * eb + 127) / 128),
                   uint32_t(std::min(255, (nshared * eb + lanes - 1) / lanes)));
    }
  }
  if (x.count && ns) {
    InstCount& c = x.ic[pc_of(x, in)];
    c.g_req += 1;
    std::sort(sect, sect + ns);
    c.g_sect += uint64_t(std::unique(sect, sect + ns) - sect);
    c.g_ideal += (uint64_t(R) * C * eb + 31) / 32;
    c.g_bytes += uint64_t(R) * C * eb;
  }
  return kNext;
}

__attribute__((target("avx2,fma"))) inline __m128 bf16_nan_canon(__m128i f32_bits) {
  const __m128i mag = _mm_and_si128(f32_bits, _mm_set1_epi32(0x7fffffff));
  const __m128i nan = _mm_cmpgt_epi32(mag, _mm_set1_epi32(0x7f800000));
  return _mm_castsi128_ps(_mm_blendv_epi8(f32_bits, _mm_set1_epi32(0x7fffffff), nan));
}
// 16-bit tensor-core operands widened with AVX2 (F16C for f16), 16 elements (one 32-byte K slice of
// a row) at a time: bit for bit widen_bf16 / widen_f16 (a NaN becomes 0x7fffffff, as
// bf16_to_f32_bits and f16_to_f32_bits make it; every other value widens exactly).
__attribute__((target("avx2,fma,f16c"))) inline void widen16_row(const std::byte* raw, bool bf16,
                                                                 double* dst) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(raw));
  const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
  __m128 f[4];
  if (bf16) {
    const __m128i z = _mm_setzero_si128();
    f[0] = bf16_nan_canon(_mm_unpacklo_epi16(z, lo)),
    f[1] = bf16_nan_canon(_mm_unpackhi_epi16(z, lo));
    f[2] = bf16_nan_canon(_mm_unpacklo_epi16(z, hi)),
    f[3] = bf16_nan_canon(_mm_unpackhi_epi16(z, hi));
  } else {
    const __m256 a = _mm256_cvtph_ps(lo), b = _mm256_cvtph_ps(hi);
    f[0] = bf16_nan_canon(_mm_castps_si128(_mm256_castps256_ps128(a)));
    f[1] = bf16_nan_canon(_mm_castps_si128(_mm256_extractf128_ps(a, 1)));
    f[2] = bf16_nan_canon(_mm_castps_si128(_mm256_castps256_ps128(b)));
    f[3] = bf16_nan_canon(_mm_castps_si128(_mm256_extractf128_ps(b, 1)));
  }
  for (int i = 0; i < 4; ++i) _mm256_storeu_pd(dst + 4 * i, _mm256_cvtps_pd(f[i]));
}
// Matrix multiply shared by wmma.mma and mma.sync: gather A, B, C; D = A * B + C.
struct MmaDesc {
  int M, N, K;
  FT at, bt, ct, dt;
  bool satfinite;
};
uint32_t round_out(double v, FT t, bool satf) {
  switch (t) {
  case FT::f16:
    return uint32_t(round_double(v, 0, kF16, {Rnd::rn, satf}));
  case FT::bf16:
    return uint32_t(round_double(v, 0, kBF16, {Rnd::rn, satf}));
  case FT::s32: {
    double c = std::min(std::max(v, -2147483648.0), 2147483647.0);
    return uint32_t(int32_t(c));
  }
  default:
    return uint32_t(bits(std::isnan(v) ? std::bit_cast<float>(0x7fffffffu) : float(v)));
  }
}

// mma.sync fragment positions (PTX ISA "Matrix fragments for mma.m16n8k16 / m16n8k8", and
// "for mma.m16n8k32" with 8-bit A and B). g = groupID = lane / 4, t = threadID_in_group = lane % 4.
// m16n8k32, 8-bit: A is 4 registers of 4 elements, a0..a15; a_i sits in row g (+ 8 for registers 1
// and 3) and column 4t + (i % 4) (+ 16 for registers 2 and 3). B is 2 registers, b0..b7: b_i in
// column g and row (k) 4t + (i % 4) (+ 16 for register 1). C and D as for m16n8k16.
inline void mma_a_pos(int K, int l, int i, int& r, int& c) {
  int g = l >> 2, t = l & 3;
  if (K == 32) {
    int reg = i / 4, j = i % 4;
    r = g + 8 * (reg % 2);
    c = 4 * t + j + 16 * (reg / 2);
  } else if (K == 16) {
    int reg = i / 2, h = i % 2;
    r = g + 8 * (reg % 2);
    c = 2 * t + h + 8 * (reg / 2);
  } else { // k8
    int reg = i / 2, h = i % 2;
    r = g + 8 * reg;
    c = 2 * t + h;
  }
}
inline void mma_b_pos(int K, int l, int i, int& k, int& n) {
  int g = l >> 2, t = l & 3;
  n = g;
  if (K == 32) {
    k = 4 * t + i % 4 + 16 * (i / 4);
  } else {
    int reg = i / 2, h = i % 2;
    k = 2 * t + h + 8 * reg;
  }
}
inline void mma_c_pos(int l, int i, int& r, int& c) {
  int g = l >> 2, t = l & 3;
  r = g + 8 * (i / 2);
  c = 2 * t + (i % 2);
}

// aux: 0 wmma, 1 mma.sync; in.r[0..3]: list offsets of d, a, b, c; in.imm: shape and register
// counts; in.sub: A's type (low 4 bits) and C's; in.flags: D's type (low 4 bits), 0x10 satfinite,
// bits 5..7 B's type (mma.sync may mix e4m3 and e5m2; wmma's B has A's type).
int h_mma(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  bool wm = in.aux == 0;
  int M = int(in.imm >> 48) & 0xff, N = int(in.imm >> 40) & 0xff, K = int(in.imm >> 32) & 0xff;
  int nd = int(in.imm >> 24) & 0xff, na = int(in.imm >> 16) & 0xff, nb = int(in.imm >> 8) & 0xff,
      nc = int(in.imm) & 0xff;
  FT at = FT(in.sub & 0xf), ct = FT(in.sub >> 4), dt = FT(in.flags & 0xf);
  FT bt = wm ? at : FT(in.flags >> 5);
  bool satf = in.flags & 0x10;
  const uint32_t* L = x.P->lists.data();
  Frag fa{L + in.r[1], na, at}, fb{L + in.r[2], nb, bt}, fc{L + in.r[3], nc, ct},
      fd{L + in.r[0], nd, dt};
  double A[32 * 32], B[32 * 32], Cm[32 * 32];
  std::fill(A, A + M * K, 0.0);
  std::fill(B, B + K * N, 0.0);
  std::fill(Cm, Cm + M * N, 0.0);
  // Gather from every lane (the collective needs the whole warp's registers), lane by lane and
  // element by element in order, so that where a fragment holds two copies the later lane's wins.
  const int amap[3] = {M, K, 0}, bmap[3] = {K, N, 1}, cmap[3] = {M, N, 2};
  auto gather = [&](const Frag& f, const int* map, double* dst) {
    const int R = map[0], Cc = map[1], which = map[2];
    const int n = f.per_reg(), eb = elem_bytes(f.t), E = f.per_lane();
    const uint32_t mask = eb == 4 ? 0xffffffffu : (1u << (8 * eb)) - 1;
    const bool p2 = std::has_single_bit(unsigned(R * Cc)) && std::has_single_bit(unsigned(Cc));
    const int cs = std::countr_zero(unsigned(Cc));
    // Where the fragment holds several copies, lane l + S / E holds what lane l does and wins:
    // only the last copy's lanes need reading.
    const int S = R * Cc;
    const int first_lane = wm && p2 && S % E == 0 && S / E <= kWarpSize ? kWarpSize - S / E : 0;
    auto each = [&](auto cv) {
      if (wm && p2 && S % E == 0) { // lane l's elements are dst[(l * E) mod S + i], in order
        const bool wide16 = (host_cpu::kAvx2Fma && host_cpu::kF16c) &&
                            (f.t == FT::f16 || f.t == FT::bf16) && E % 16 == 0;
        for (int l = first_lane; l < kWarpSize; ++l) {
          double* d = dst + ((l * E) & (S - 1));
          if (wide16) { // sixteen at a time, from eight registers' low halves laid side by side
            for (int j = 0; j < f.nregs; j += 8) {
              uint32_t raw[8];
              for (int q = 0; q < 8; ++q) raw[q] = uint32_t(w.row(f.rows[j + q])[l]);
              widen16_row(reinterpret_cast<const std::byte*>(raw), f.t == FT::bf16, d + 2 * j);
            }
            continue;
          }
          for (int j = 0; j < f.nregs; ++j) {
            const uint64_t v = w.row(f.rows[j])[l];
            for (int h = 0; h < n; ++h) d[j * n + h] = cv(uint32_t(v >> (8 * eb * h)) & mask);
          }
        }
        return;
      }
      for (int l = first_lane; l < kWarpSize; ++l)
        for (int j = 0; j < f.nregs; ++j) {
          const uint64_t v = w.row(f.rows[j])[l];
          for (int h = 0; h < n; ++h) {
            const int i = j * n + h;
            int r, c;
            if (wm && p2) { // wmma_pos with shifts: every wmma shape's sizes are powers of two
              const int idx = (l * E + i) & (R * Cc - 1);
              r = idx >> cs, c = idx & (Cc - 1);
            } else if (wm)
              wmma_pos(l, i, E, R, Cc, r, c);
            else if (which == 0)
              mma_a_pos(K, l, i, r, c);
            else if (which == 1)
              mma_b_pos(K, l, i, r, c);
            else
              mma_c_pos(l, i, r, c);
            dst[r * Cc + c] = cv(uint32_t(v >> (8 * eb * h)) & mask);
          }
        }
    };
    switch (f.t) {
    case FT::bf16:
      return each([](uint32_t b) { return widen_bf16(b); });
    case FT::f16:
      return each([](uint32_t b) { return widen_f16(b); });
    case FT::f32:
    case FT::tf32:
      return each([](uint32_t b) { return double(std::bit_cast<float>(b)); });
    default:
      return each([t = f.t](uint32_t b) { return elem_value(b, t); });
    }
  };
  gather(fa, amap, A);
  gather(fb, bmap, B);
  gather(fc, cmap, Cm);
  // C is added last, after the products' sum.
  double D[32 * 32];
  multiply_rows(A, B, D, M, N, K);
  for (int i = 0; i < M * N; ++i) D[i] += Cm[i];
  const int Ed = fd.per_lane(), S = M * N;
  const bool p2 = std::has_single_bit(unsigned(S)) && S % Ed == 0;
  for (uint32_t mm = m | w.active; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    if (wm && p2) { // wmma_pos: lane l's elements are D[(l * Ed) mod S + i], in order
      const double* d = D + ((l * Ed) & (S - 1));
      for (int i = 0; i < Ed; ++i) fd.set(w, l, i, round_out(d[i], dt, satf));
      continue;
    }
    for (int i = 0; i < Ed; ++i) {
      int r, c;
      if (wm)
        wmma_pos(l, i, Ed, M, N, r, c);
      else
        mma_c_pos(l, i, r, c);
      fd.set(w, l, i, round_out(D[r * N + c], dt, satf));
    }
  }
  return kNext;
}

// The bf16 form of h_mma_16816_f32 with AVX2, for a warp whose every lane takes part: four
// consecutive lanes hold one row of an A or C fragment (PTX ISA, mma.m16n8k16 fragment layouts),
// so a row is widened from one 32-byte load. Every value is the scalar path's, bit for bit: bf16
// NaNs become 0x7fffffff as bf16_to_f32_bits makes them, floats widen exactly, the products and
// sums are multiply_rows', and a NaN result is written as 0x7fffffff.
__attribute__((target("avx2,fma"))) inline __m128i low_words(const uint64_t* four_lanes) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(four_lanes));
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)));
}
// Eight bf16 (four lanes' low 32 bits, in order) to eight doubles.
__attribute__((target("avx2,fma"))) inline void widen_bf16x8(const uint64_t* four_lanes,
                                                             double* dst) {
  const __m128i x = low_words(four_lanes), z = _mm_setzero_si128();
  _mm256_storeu_pd(dst, _mm256_cvtps_pd(bf16_nan_canon(_mm_unpacklo_epi16(z, x))));
  _mm256_storeu_pd(dst + 4, _mm256_cvtps_pd(bf16_nan_canon(_mm_unpackhi_epi16(z, x))));
}
// A C row: columns 0, 2, 4, 6 from `even`'s four lanes, 1, 3, 5, 7 from `odd`'s.
__attribute__((target("avx2,fma"))) inline void widen_f32_pairs(const uint64_t* even,
                                                                const uint64_t* odd, double* dst) {
  const __m128i e = low_words(even), o = low_words(odd);
  _mm256_storeu_pd(dst, _mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpacklo_epi32(e, o))));
  _mm256_storeu_pd(dst + 4, _mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpackhi_epi32(e, o))));
}
__attribute__((target("avx2,fma"))) inline __m128 narrow_canon(__m256d d) {
  const __m128 f = _mm256_cvtpd_ps(d);
  const __m128i isnan = _mm_castps_si128(_mm_cmpunord_ps(f, f));
  return _mm_castsi128_ps(_mm_blendv_epi8(_mm_castps_si128(f), _mm_set1_epi32(0x7fffffff), isnan));
}
// A D row of eight doubles to f32 (NaN as 0x7fffffff): even columns to `even`'s four lanes, odd
// ones to `odd`'s, each zero-extended to the register's 64 bits.
__attribute__((target("avx2,fma"))) inline void narrow_f32_pairs(const double* src, uint64_t* even,
                                                                 uint64_t* odd) {

  const __m128 lo = narrow_canon(_mm256_loadu_pd(src)), hi = narrow_canon(_mm256_loadu_pd(src + 4));
  const __m128i ev = _mm_castps_si128(_mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
  const __m128i od = _mm_castps_si128(_mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(even), _mm256_cvtepu32_epi64(ev));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(odd), _mm256_cvtepu32_epi64(od));
}
__attribute__((target("avx2,fma"))) int mma_16816_bf16_avx2(Exec& x, Warp& w, const Inst& in) {
  const uint32_t* L = x.P->lists.data();
  const uint32_t *rd = L + in.r[0], *ra = L + in.r[1], *rb = L + in.r[2], *rc = L + in.r[3];
  alignas(32) double A[16 * 16], B[16 * 8], C[16 * 8], D[16 * 8];
  const uint64_t *a0 = w.row(ra[0]), *a1 = w.row(ra[1]), *a2 = w.row(ra[2]), *a3 = w.row(ra[3]);
  const uint64_t *b0 = w.row(rb[0]), *b1 = w.row(rb[1]);
  const uint64_t *c0 = w.row(rc[0]), *c1 = w.row(rc[1]), *c2 = w.row(rc[2]), *c3 = w.row(rc[3]);
  for (int g = 0; g < 8; ++g) {
    const int l = 4 * g;
    widen_bf16x8(a0 + l, A + g * 16), widen_bf16x8(a2 + l, A + g * 16 + 8);
    widen_bf16x8(a1 + l, A + (g + 8) * 16), widen_bf16x8(a3 + l, A + (g + 8) * 16 + 8);
    widen_f32_pairs(c0 + l, c1 + l, C + g * 8), widen_f32_pairs(c2 + l, c3 + l, C + (g + 8) * 8);
  }
  for (int l = 0; l < kWarpSize; ++l) {
    const int g = l >> 2, t = 2 * (l & 3);
    B[t * 8 + g] = widen_bf16(uint32_t(b0[l])),
              B[(t + 1) * 8 + g] = widen_bf16(uint32_t(b0[l] >> 16));
    B[(t + 8) * 8 + g] = widen_bf16(uint32_t(b1[l]));
    B[(t + 9) * 8 + g] = widen_bf16(uint32_t(b1[l] >> 16));
  }
  multiply_rows(A, B, D, 16, 8, 16);
  for (int i = 0; i < 16 * 8; i += 4)
    _mm256_store_pd(D + i, _mm256_add_pd(_mm256_load_pd(D + i), _mm256_load_pd(C + i)));
  uint64_t *d0 = w.row(rd[0]), *d1 = w.row(rd[1]), *d2 = w.row(rd[2]), *d3 = w.row(rd[3]);
  for (int g = 0; g < 8; ++g) {
    narrow_f32_pairs(D + g * 8, d0 + 4 * g, d1 + 4 * g);
    narrow_f32_pairs(D + (g + 8) * 8, d2 + 4 * g, d3 + 4 * g);
  }
  return kNext;
}

// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32, the attention and GEMM
// puzzles' inner loop: h_mma's arithmetic (products exact in double, summed in k order, C added
// last, rounded once) with the fragment layout unrolled and the inputs widened by bit operations.
template <bool BF16> int h_mma_16816_f32(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if constexpr (BF16)
    if (host_cpu::kAvx2Fma && (m | w.active) == 0xffffffffu) return mma_16816_bf16_avx2(x, w, in);
  const uint32_t* L = x.P->lists.data();
  const uint32_t *rd = L + in.r[0], *ra = L + in.r[1], *rb = L + in.r[2], *rc = L + in.r[3];
  auto widen = [](uint64_t h) { return BF16 ? widen_bf16(uint32_t(h)) : widen_f16(uint32_t(h)); };
  double A[16 * 16], B[16 * 8], C[16 * 8];
  const uint64_t *a0 = w.row(ra[0]), *a1 = w.row(ra[1]), *a2 = w.row(ra[2]), *a3 = w.row(ra[3]);
  const uint64_t *b0 = w.row(rb[0]), *b1 = w.row(rb[1]);
  const uint64_t *c0 = w.row(rc[0]), *c1 = w.row(rc[1]), *c2 = w.row(rc[2]), *c3 = w.row(rc[3]);
  for (int l = 0; l < kWarpSize; ++l) {
    const int g = l >> 2, t = 2 * (l & 3);
    // A: register j holds row g + 8 (j % 2), columns t, t + 1 (+ 8 for j >= 2).
    A[g * 16 + t] = widen(a0[l]), A[g * 16 + t + 1] = widen(a0[l] >> 16);
    A[(g + 8) * 16 + t] = widen(a1[l]), A[(g + 8) * 16 + t + 1] = widen(a1[l] >> 16);
    A[g * 16 + t + 8] = widen(a2[l]), A[g * 16 + t + 9] = widen(a2[l] >> 16);
    A[(g + 8) * 16 + t + 8] = widen(a3[l]), A[(g + 8) * 16 + t + 9] = widen(a3[l] >> 16);
    // B: register j holds rows (k) t, t + 1 (+ 8 for j = 1) of column g.
    B[t * 8 + g] = widen(b0[l]), B[(t + 1) * 8 + g] = widen(b0[l] >> 16);
    B[(t + 8) * 8 + g] = widen(b1[l]), B[(t + 9) * 8 + g] = widen(b1[l] >> 16);
    C[g * 8 + t] = f32(c0[l]), C[g * 8 + t + 1] = f32(c1[l]);
    C[(g + 8) * 8 + t] = f32(c2[l]), C[(g + 8) * 8 + t + 1] = f32(c3[l]);
  }
  double D[16 * 8];
  multiply_rows(A, B, D, 16, 8, 16);
  for (int i = 0; i < 16 * 8; ++i) D[i] += C[i];
  auto out = [](double v) {
    return uint64_t(std::isnan(v) ? 0x7fffffffu : std::bit_cast<uint32_t>(float(v)));
  };
  uint64_t *d0 = w.row(rd[0]), *d1 = w.row(rd[1]), *d2 = w.row(rd[2]), *d3 = w.row(rd[3]);
  for (uint32_t mm = m | w.active; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm), g = l >> 2, t = 2 * (l & 3);
    d0[l] = out(D[g * 8 + t]), d1[l] = out(D[g * 8 + t + 1]);
    d2[l] = out(D[(g + 8) * 8 + t]), d3[l] = out(D[(g + 8) * 8 + t + 1]);
  }
  return kNext;
}

// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16: list at target (vec regs), r[1] base.
int h_ldmatrix(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  int num = in.vec;
  bool trans = in.aux;
  const uint32_t* dst = x.P->lists.data() + in.target;
  const uint64_t* base = w.row(in.r[1]);
  uint16_t mat[4][8][8];
  for (int i = 0; i < num; ++i) {
    for (int r = 0; r < 8; ++r) {
      int src = 8 * i + r;
      uint64_t a = base[src] + uint64_t(in.imm);
      Space sp = Space::shared;
      // An aligned row inside the block's shared memory, the usual case, without the call.
      std::byte* p = in.space == Space::shared && (a & 15) == 0 && a < x.B->shared_size &&
                             a + 16 <= x.B->shared_size
                         ? x.B->shared + a
                     : in.space == Space::shared ? shared_ptr(x, w, in, src, a, 16, false)
                                                 : generic_ptr(x, w, in, src, a, 16, false, sp);
      if (!p) return kStop;
      std::memcpy(mat[i][r], p, 16);
    }
  }
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int t = std::countr_zero(mm);
    for (int i = 0; i < num; ++i) {
      uint32_t lo, hi;
      if (!trans) {
        lo = mat[i][t / 4][2 * (t % 4)];
        hi = mat[i][t / 4][2 * (t % 4) + 1];
      } else {
        lo = mat[i][2 * (t % 4)][t / 4];
        hi = mat[i][2 * (t % 4) + 1][t / 4];
      }
      w.row(dst[i])[t] = lo | (hi << 16);
    }
  }
  if (x.count) {
    InstCount& c = x.ic[pc_of(x, in)];
    c.s_wave += uint64_t(num);
    c.s_ideal += uint64_t(num);
  }
  if (w.trace) trace_shared(w, uint32_t(num), 16);
  return kNext;
}

// ---- wgmma (sm_90a): warpgroup MMA with operands in shared memory ----
// wgmma.mma_async.sync.aligned.m64nNkK.f32.atype.btype d, a-desc, b-desc, scale-d, imm-scale-a,
// imm-scale-b[, imm-trans-a, imm-trans-b]. The warpgroup is four consecutive warps of the block;
// warp w % 4 of it owns rows 16 (w % 4) .. + 15 of the 64 x N result (PTX ISA, "Register
// fragments" for wgmma: lane l holds, for each 8-column tile j, D[16 w' + l / 4][8 j + 2 (l % 4)]
// and the next column in d[4 j], d[4 j + 1], and the same eight rows further down in d[4 j + 2],
// d[4 j + 3]), so each warp is executed on its own, at issue: a program may not read the
// accumulators or overwrite the operands before the wgmma.wait_group that covers it, so doing the
// work early is invisible to a correct one. wgmma.fence / commit_group / wait_group are therefore
// no-ops here.
// Numerics: products of f16 / bf16 / fp8 values are exact in double; each output's K products and
// the accumulator are summed in double and rounded to f32 once per instruction. The H200's tensor
// cores truncate the inner sums (FP8 wgmma keeps fewer bits than f32), so on a GPU results differ
// from these by a few ulp of the accumulator (more for long FP8 sums): within documented bounds,
// not bit-exact.
//
// Shared-memory matrix descriptor (64 bits): start address >> 4 in bits 0-13, leading-dimension
// byte offset (LBO) >> 4 in 16-29, stride-dimension byte offset (SBO) >> 4 in 32-45, base offset in
// 49-51, swizzle in 62-63 (0 none, 1 128-byte, 2 64-byte, 3 32-byte). K-major (imm-trans 0):
// - no swizzle: 8-row x 16-byte core matrices, each 128 contiguous bytes; row r, byte kb of the
//   slice is at start + (r / 8) SBO + (kb / 16) LBO + (r % 8) 16 + kb % 16;
// - W-byte swizzle (W = 128, 64, 32): rows of W bytes in atoms of 8 rows; the logical address
//   start + (r / 8) SBO + (r % 8) W + kb has its 16-byte chunk bits (4-6, 4-5 or 4) XORed with
//   bits 7-9 (7-8, 7) of the same absolute shared address (CUTLASS's Swizzle<3,4,3> and kin), so
//   a tile must start on an 8 W-byte boundary: with base offset 0 (the only one simulated), the
//   start may lie only in the first row of an atom.
// M- or N-major (imm-trans 1, 16-bit types; CUTLASS's canonical GMMA layouts for Major::MN): the
// element (n, k) of the operand (n along M or N) lies at
// - no swizzle: start + (n / 8) SBO + (k / 8) LBO + (k % 8) 16 + (n % 8) 2: core matrices of 8
//   k-rows of 16 bytes (8 n);
// - W-byte swizzle: start + (n / (W / 2)) LBO + (k / 8) SBO + (k % 8) W + (n % (W / 2)) 2, its
//   16-byte chunk swizzled as above: atoms of 8 k-rows of W bytes along n, so a [k][n] tile that
//   TMA wrote with the same swizzle (n innermost) is read as it lies. The start must be a row's.
struct WgDesc {
  uint64_t start, lbo, sbo;
  int base_off, swz;
};
WgDesc wg_desc(uint64_t d) {
  return {(d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4,
          int((d >> 49) & 7), int(d >> 62)};
}
int wg_swizzle_bytes(int swz) {
  return swz == 1 ? 128 : swz == 2 ? 64 : swz == 3 ? 32 : 0;
}
std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

// The 16-byte chunk holding elements n .. n + 7 (n a multiple of 8) of k-row k of an M- or
// N-major 16-bit operand.
inline uint64_t wg_addr_mn(const WgDesc& d, int n, int k) {
  if (d.swz == 0)
    return d.start + uint64_t(n / 8) * d.sbo + uint64_t(k / 8) * d.lbo + uint64_t(k % 8) * 16;
  const uint64_t W = uint64_t(wg_swizzle_bytes(d.swz));
  const uint64_t per = W / 2; // elements of a W-byte row
  uint64_t a = d.start + uint64_t(n) / per * d.lbo + uint64_t(k / 8) * d.sbo + uint64_t(k % 8) * W +
               uint64_t(n) % per * 2;
  return swizzle_address(a, W);
}

// Byte `kb` (0..31) of row r of the 32-byte K slice a descriptor describes.
inline uint64_t wg_addr(const WgDesc& d, int r, int kb) {
  if (d.swz == 0)
    return d.start + uint64_t(r / 8) * d.sbo + uint64_t(kb / 16) * d.lbo + uint64_t(r % 8) * 16 +
           uint64_t(kb % 16);
  const uint64_t W = uint64_t(wg_swizzle_bytes(d.swz));
  uint64_t a = d.start + uint64_t(r / 8) * d.sbo + uint64_t(r % 8) * W + uint64_t(kb);
  return swizzle_address(a, W);
}

// Rows of 16 elements (K = 16) into out[r * 16 + k].
__attribute__((target("avx2,fma,f16c"))) void widen16_rows(const std::byte* raw, int rows,
                                                           bool bf16, double* out) {
  for (int r = 0; r < rows; ++r) widen16_row(raw + size_t(r) * 32, bf16, out + r * 16);
}
// Rows of 16 elements (K = 16, rows a multiple of 4) transposed into out[k * rows + r]: four rows
// widened, then each 4 x 4 block turned over in registers.
__attribute__((target("avx2,fma,f16c"))) void
widen16_rows_transposed(const std::byte* raw, int rows, bool bf16, double* out) {
  alignas(32) double t[4][16];
  for (int r = 0; r < rows; r += 4) {
    for (int j = 0; j < 4; ++j) widen16_row(raw + size_t(r + j) * 32, bf16, t[j]);
    for (int kb = 0; kb < 16; kb += 4) {
      const __m256d r0 = _mm256_load_pd(t[0] + kb), r1 = _mm256_load_pd(t[1] + kb);
      const __m256d r2 = _mm256_load_pd(t[2] + kb), r3 = _mm256_load_pd(t[3] + kb);
      const __m256d a = _mm256_unpacklo_pd(r0, r1), b = _mm256_unpackhi_pd(r0, r1);
      const __m256d c = _mm256_unpacklo_pd(r2, r3), d = _mm256_unpackhi_pd(r2, r3);
      _mm256_storeu_pd(out + size_t(kb) * rows + r, _mm256_permute2f128_pd(a, c, 0x20));
      _mm256_storeu_pd(out + size_t(kb + 1) * rows + r, _mm256_permute2f128_pd(b, d, 0x20));
      _mm256_storeu_pd(out + size_t(kb + 2) * rows + r, _mm256_permute2f128_pd(a, c, 0x31));
      _mm256_storeu_pd(out + size_t(kb + 3) * rows + r, _mm256_permute2f128_pd(b, d, 0x31));
    }
  }
}

// D's rows back into a full warp's accumulators, eight columns of a row at a time: registers
// 4j, 4j + 1 hold columns 8j + 2t, 8j + 2t + 1 of row g (4j + 2, 4j + 3 row g + 8) in lane
// 4g + t, as the scalar loop below writes them: the same sign, the same add of C, the same
// rounding to f32 (NaN as 0x7fffffff).
__attribute__((target("avx2,fma"))) void wgmma_write_d(Warp& w, const uint32_t* dl, const double* D,
                                                       int N, double sign, bool scale_d) {
  const __m256d s = _mm256_set1_pd(sign);
  alignas(32) double row[8], c[8];
  for (int j = 0; j < N / 8; ++j)
    for (int h = 0; h < 2; ++h) {
      uint64_t *even = w.row(dl[4 * j + 2 * h]), *odd = w.row(dl[4 * j + 2 * h + 1]);
      for (int g = 0; g < 8; ++g) {
        const double* src = D + (g + 8 * h) * N + 8 * j;
        __m256d lo = _mm256_mul_pd(_mm256_loadu_pd(src), s);
        __m256d hi = _mm256_mul_pd(_mm256_loadu_pd(src + 4), s);
        if (scale_d) {
          widen_f32_pairs(even + 4 * g, odd + 4 * g, c);
          lo = _mm256_add_pd(lo, _mm256_load_pd(c)), hi = _mm256_add_pd(hi, _mm256_load_pd(c + 4));
        }
        _mm256_store_pd(row, lo), _mm256_store_pd(row + 4, hi);
        narrow_f32_pairs(row, even + 4 * g, odd + 4 * g);
      }
    }
}

// in.target: the d registers' list (N/2 rows); r[1], r[2]: the descriptors' rows (flags bit 3: r[1]
// is the list of A's four registers instead); ps / ps_xor: scale-d's predicate (-1: constant, in
// flags bit 2); imm: N | K << 16; sub: the input type; flags: bit 0 negate A, bit 1 negate B.
// A in registers has mma.sync's A layout for the warp's 16 rows (PTX ISA, "Register fragments"
// for wgmma .m64nNk16 / .m64nNk32: the same rows and columns as mma.m16n8k16 / m16n8k32).
int h_wgmma(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const int N = int(in.imm & 0xffff), K = int(in.imm >> 16);
  const FT at = FT(in.sub);
  const int eb = elem_bytes(at);
  const int l0 = std::countr_zero(m);
  const InstInfo& inf = info_of(x, in);
  const uint32_t wq = w.index % 4; // this warp's rows of the warpgroup's 64
  bool scale_d = in.ps >= 0 ? (((w.p[in.ps] ^ in.ps_xor) >> l0) & 1) : (in.flags & 4) != 0;
  const char* names[2] = {"A", "B"};
  WgDesc dsc[2];
  const bool areg = in.flags & 8;
  auto mn_major = [&](int o) { return (in.flags & (o == 0 ? 32 : 64)) != 0; }; // imm-trans 1
  for (int o = areg ? 1 : 0; o < 2; ++o) {
    uint64_t raw = w.rv(in.r[1 + o], l0);
    dsc[o] = wg_desc(raw);
    const WgDesc& d = dsc[o];
    std::string who = "wgmma.mma_async's " + std::string(names[o]) + " descriptor (" + hex(raw) +
                      ", start at shared offset " + std::to_string(d.start) + ")";
    if (d.base_off != 0)
      return raise_fault(x, FaultKind::unsupported,
                         who + " has base offset " + std::to_string(d.base_off) +
                             ": the simulator supports only base offset 0 (a swizzled tile that "
                             "starts on its pattern's boundary)" +
                             at_line(inf.line),
                         inf.line);
    if (d.swz && mn_major(o)) {
      const uint64_t W = uint64_t(wg_swizzle_bytes(d.swz));
      if (d.start % W != 0)
        return raise_fault(x, FaultKind::misaligned,
                           who + " (" + (o == 0 ? "M" : "N") + "-major, imm-trans 1) starts " +
                               std::to_string(d.start % W) + " bytes into a " + std::to_string(W) +
                               "-byte row of its " + std::to_string(W) +
                               "B swizzle: an M- or N-major swizzled tile starts on a row" +
                               at_line(inf.line),
                           inf.line);
    } else if (d.swz) {
      const uint64_t W = uint64_t(wg_swizzle_bytes(d.swz)), atom = 8 * W;
      const uint64_t off = d.start % atom;
      if (off + uint64_t(K * eb) > W)
        return raise_fault(
            x, FaultKind::misaligned,
            who + " is " + std::to_string(off) + " bytes into a " + std::to_string(atom) +
                "-byte " + std::to_string(W) + "B-swizzle atom: a K-major " + std::to_string(W) +
                "B-swizzled tile must start on a " + std::to_string(atom) +
                "-byte boundary, and a K slice lie within its first " + std::to_string(W) +
                "-byte row (start = tile + k-offset, base offset 0)" + at_line(inf.line),
            inf.line);
    }
  }
  // This warp's 16 rows of A (16 x K, row-major) and all of B, transposed (K x N), so that the
  // products below run along a row of D. Inputs are widened by a converter chosen once.
  const uint32_t size = x.B->shared_size;
  const int row_bytes = K * eb; // 32 for every wgmma input type
  auto past_end = [&](int o, uint64_t a, int row) {
    const WgDesc& d = dsc[o];
    raise_fault(x, FaultKind::out_of_bounds,
                "wgmma.mma_async's " + std::string(names[o]) + " descriptor (start at " +
                    "shared offset " + std::to_string(d.start) + ", LBO " + std::to_string(d.lbo) +
                    ", SBO " + std::to_string(d.sbo) + ") reaches shared offset " +
                    std::to_string(a) + " for row " + std::to_string(row) + ", past the block's " +
                    std::to_string(size) + " bytes of shared memory" + at_line(inf.line),
                inf.line);
    return false;
  };
  // Copies `rows` rows of the K slice operand o describes into raw (row-major, row_bytes each).
  auto gather = [&](int o, int row0, int rows, std::byte* raw) -> bool {
    const WgDesc& d = dsc[o];
    if (mn_major(o)) { // 16-byte chunks run along the rows, one k at a time
      for (int r = 0; r < rows; r += 8)
        for (int k = 0; k < K; ++k) {
          const uint64_t a = wg_addr_mn(d, row0 + r, k);
          if (a + 16 > size) return past_end(o, a, row0 + r);
          for (int i = 0; i < 8 && r + i < rows; ++i)
            std::memcpy(raw + size_t(r + i) * size_t(row_bytes) + size_t(k) * 2,
                        x.B->shared + a + 2 * uint64_t(i), 2);
        }
      return true;
    }
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < row_bytes; c += 16) {
        uint64_t a = wg_addr(d, row0 + r, c);
        if (a + 16 > size) return past_end(o, a, row0 + r);
        std::memcpy(raw + size_t(r) * size_t(row_bytes) + size_t(c), x.B->shared + a, 16);
      }
    return true;
  };
  auto element = [eb](const std::byte* p) {
    uint32_t v = 0;
    std::memcpy(&v, p, size_t(eb));
    return v;
  };
  // Widens raw (rows x K elements) into out[(r, k)] at out + r * rs + k * ks.
  auto widen = [&](const std::byte* raw, int rows, double* out, int rs, int ks) {
    if ((host_cpu::kAvx2Fma && host_cpu::kF16c) && (at == FT::bf16 || at == FT::f16) && K == 16 &&
        rows % 4 == 0) {
      if (rs == K && ks == 1) return widen16_rows(raw, rows, at == FT::bf16, out);
      if (rs == 1 && ks == rows) return widen16_rows_transposed(raw, rows, at == FT::bf16, out);
    }
    auto with = [&](auto cv) {
      for (int r = 0; r < rows; ++r)
        for (int k = 0; k < K; ++k)
          out[r * rs + k * ks] =
              cv(element(raw + (size_t(r) * size_t(K) + size_t(k)) * size_t(eb)));
    };
    if (at == FT::bf16) {
      with([](uint32_t b) { return widen_bf16(b); });
    } else if (at == FT::f16) {
      with([](uint32_t b) { return widen_f16(b); });
    } else { // fp8: one byte an element, through the table, read straight from `raw` (`with`'s
             // copy of a run-time width per element is 8% of puzzle 33's prediction)
      const double* t = fp8_table(at);
      for (int r = 0; r < rows; ++r)
        for (int k = 0; k < K; ++k)
          out[r * rs + k * ks] = t[uint8_t(raw[size_t(r) * size_t(K) + size_t(k)])];
    }
  };
  double A[16 * 32];
  if (areg) {
    Frag fa{x.P->lists.data() + in.r[1], 4, at};
    for (int l = 0; l < kWarpSize; ++l)
      for (int i = 0; i < fa.per_lane(); ++i) {
        int r, c;
        mma_a_pos(K, l, i, r, c);
        A[r * K + c] = elem_value(fa.get(w, l, i), at);
      }
  } else {
    std::byte raw_a[16 * 32];
    if (!gather(0, int(16 * wq), 16, raw_a)) return kStop;
    widen(raw_a, 16, A, K, 1);
  }
  std::byte raw_b[256 * 32];
  if (!gather(1, 0, N, raw_b)) return kStop;
  const size_t b_bytes = size_t(N) * size_t(row_bytes);
  const uint32_t key = uint32_t(N) | uint32_t(K) << 16 | uint32_t(at) << 24 | 1u << 31;
  const double* BT = nullptr;
  for (auto& e : x.wg_b)
    if (e.key == key && std::memcmp(e.raw.data(), raw_b, b_bytes) == 0) BT = e.wide.data();
  if (!BT) {
    Exec::WidenedOperand& e = x.wg_b[x.wg_b_victim];
    x.wg_b_victim = (x.wg_b_victim + 1) % std::size(x.wg_b);
    e.key = key;
    e.raw.assign(raw_b, raw_b + b_bytes);
    e.wide.resize(size_t(K) * size_t(N));
    widen(raw_b, N, e.wide.data(), 1, N); // transposed: B[n][k] lands at k * N + n
    BT = e.wide.data();
  }
  double D[16 * 256];
  multiply_rows(A, BT, D, 16, N, K);
  const double sa = (in.flags & 1) ? -1.0 : 1.0, sb = (in.flags & 2) ? -1.0 : 1.0;
  const uint32_t* dl = x.P->lists.data() + in.target;
  if (host_cpu::kAvx2Fma && m == 0xffffffffu && (in.flags & 16)) {
    wgmma_write_d(w, dl, D, N, sa * sb, scale_d);
    return kNext;
  }
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm);
    const int g = l >> 2, t = l & 3;
    for (int i = 0; i < N / 2; ++i) {
      const int r = g + 8 * ((i >> 1) & 1), c = 8 * (i >> 2) + 2 * t + (i & 1);
      double acc = D[r * N + c];
      acc *= sa * sb;
      uint64_t& reg = w.row(dl[i])[l];
      if (scale_d) acc += double(f32(uint32_t(reg)));
      reg = round_out(acc, FT::f32, false);
    }
  }
  return kNext;
}

FT ft_of(Ty t) {
  switch (t) {
  case Ty::f16:
  case Ty::f16x2:
    return FT::f16;
  case Ty::bf16:
  case Ty::bf16x2:
    return FT::bf16;
  case Ty::f32:
    return FT::f32;
  case Ty::s32:
    return FT::s32;
  case Ty::tf32:
    return FT::tf32;
  case Ty::e4m3:
    return FT::e4m3;
  case Ty::e5m2:
    return FT::e5m2;
  default:
    throw Unsupported("tensor-core type ." + std::string(ty_name(t)));
  }
}

} // namespace

bool decode_tensor(Dec& D, Inst& I, InstInfo& info, const Opc& o, const ptx::Instr& in) {
  const std::string& b = o.base;
  if (b == "wmma") {
    Shape s;
    if (!parse_shape(o, s)) throw Unsupported("wmma without a shape");
    if (!((s.m == 16 && s.n == 16 && s.k == 16) || (s.m == 32 && s.n == 8 && s.k == 16) ||
          (s.m == 8 && s.n == 32 && s.k == 16)))
      throw Unsupported("wmma shape m" + std::to_string(s.m) + "n" + std::to_string(s.n) + "k" +
                        std::to_string(s.k));
    uint64_t shape_bits = (uint64_t(s.m) << 48) | (uint64_t(s.n) << 40) | (uint64_t(s.k) << 32);
    if (o.has("load") || o.has("store")) {
      bool store = o.has("store");
      int which = o.has("a") ? 0 : o.has("b") ? 1 : 2;
      Ty t = o.last_type();
      FT ft = ft_of(t);
      size_t k = 0;
      const ptx::Operand* regs;
      const ptx::Operand* addr;
      if (store) {
        addr = &op(in, k++);
        regs = &op(in, k++);
      } else {
        regs = &op(in, k++);
        addr = &op(in, k++);
      }
      Dec::Addr a = D.addr(*addr, o.space());
      if (a.base == kNoRow) a.base = D.const_row(0);
      I.r[1] = a.base;
      I.space = a.space;
      I.imm = int64_t(shape_bits | uint32_t(int32_t(a.disp)));
      if (k < in.ops.size()) I.r[2] = D.row(op(in, k++), Ty::u32);
      I.target = D.vec_rows(*regs, Ty::b32, -1);
      I.vec = uint8_t(regs->kind == ptx::Operand::Kind::vec ? regs->elems.size() : 1);
      I.aux = uint32_t(which) | (o.has("col") ? 0x100u : 0u) | (uint32_t(ft) << 16);
      I.sub = store;
      I.fn = h_wmma_ldst;
      info.mem = a.space == Space::global || a.space == Space::generic
                     ? (store ? MemKind::store : MemKind::load)
                     : MemKind::none;
      return true;
    }
    if (o.has("mma")) {
      // wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype (f16) or .dtype.atype.btype.ctype
      if (o.types.size() != 2 && o.types.size() != 4) throw Unsupported("wmma.mma type list");
      FT dt = ft_of(o.types.front()), ct = ft_of(o.types.back());
      FT at = o.types.size() == 4 ? ft_of(o.types[1]) : FT::f16;
      if (at != FT::f16 && at != FT::bf16) throw Unsupported("integer/tf32/fp8 wmma");
      need_ops(in, 4);
      I.r[0] = D.vec_rows(op(in, 0), Ty::b32, -1);
      I.r[1] = D.vec_rows(op(in, 1), Ty::b32, -1);
      I.r[2] = D.vec_rows(op(in, 2), Ty::b32, -1);
      I.r[3] = D.vec_rows(op(in, 3), Ty::b32, -1);
      auto cnt = [&](size_t i) {
        return uint64_t(op(in, i).kind == ptx::Operand::Kind::vec ? op(in, i).elems.size() : 1);
      };
      I.imm = int64_t(shape_bits | (cnt(0) << 24) | (cnt(1) << 16) | (cnt(2) << 8) | cnt(3));
      I.sub = uint8_t(uint8_t(at) | (uint8_t(ct) << 4));
      I.flags = uint8_t(uint8_t(dt) | (o.has("satfinite") ? 0x10 : 0));
      I.aux = 0;
      I.fn = h_mma;
      info.tensor_flops_per_warp_k = uint16_t(2 * s.m * s.n * s.k / 1024);
      return true;
    }
    throw Unsupported("this wmma form");
  }
  if (b == "mma") {
    o.only({"row", "col", "m16n8k16", "m16n8k8", "m16n8k32", "satfinite"});
    Shape s;
    if (!parse_shape(o, s) || s.m != 16 || s.n != 8 || (s.k != 16 && s.k != 8 && s.k != 32))
      throw Unsupported("mma shape (only m16n8k16, m16n8k8 and m16n8k32 are simulated)");
    if (!o.has("row") || !o.has("col")) throw Unsupported("mma layouts other than .row.col");
    if (o.types.size() != 4) throw Unsupported("mma type list");
    FT dt = ft_of(o.types[0]), at = ft_of(o.types[1]), bt = ft_of(o.types[2]),
       ct = ft_of(o.types[3]);
    auto fp8 = [](FT t) { return t == FT::e4m3 || t == FT::e5m2; };
    if (s.k == 32 ? !(fp8(at) && fp8(bt)) : !((at == FT::f16 || at == FT::bf16) && bt == at))
      throw Unsupported("mma." + std::string(s.k == 32 ? "m16n8k32" : "m16n8k16/k8") + " with ." +
                        std::string(ty_name(o.types[1])) + "/." + std::string(ty_name(o.types[2])) +
                        " inputs (k32: e4m3/e5m2 only; k16/k8: f16 or bf16)");
    if ((dt != FT::f32 && dt != FT::f16) || (ct != FT::f32 && ct != FT::f16))
      throw Unsupported("mma accumulators other than f32 and f16");
    need_ops(in, 4);
    for (int i = 0; i < 4; ++i) I.r[i] = D.vec_rows(op(in, size_t(i)), Ty::b32, -1);
    auto cnt = [&](size_t i) {
      return uint64_t(op(in, i).kind == ptx::Operand::Kind::vec ? op(in, i).elems.size() : 1);
    };
    uint64_t shape_bits = (uint64_t(s.m) << 48) | (uint64_t(s.n) << 40) | (uint64_t(s.k) << 32);
    I.imm = int64_t(shape_bits | (cnt(0) << 24) | (cnt(1) << 16) | (cnt(2) << 8) | cnt(3));
    I.sub = uint8_t(uint8_t(at) | (uint8_t(ct) << 4));
    I.flags = uint8_t(uint8_t(dt) | (o.has("satfinite") ? 0x10 : 0) | (uint8_t(bt) << 5));
    I.aux = 1;
    I.fn = h_mma;
    if (s.m == 16 && s.n == 8 && s.k == 16 && dt == FT::f32 && ct == FT::f32 && cnt(0) == 4 &&
        cnt(1) == 4 && cnt(2) == 2 && cnt(3) == 4 && !o.has("satfinite"))
      I.fn = at == FT::bf16 ? h_mma_16816_f32<true> : h_mma_16816_f32<false>;
    info.tensor_flops_per_warp_k = uint16_t(2 * s.m * s.n * s.k / 1024);
    return true;
  }
  if (b == "wgmma") {
    if (o.has("fence") || o.has("commit_group") || o.has("wait_group")) {
      // The multiply is done at issue (h_wgmma), so ordering and completion are no-ops here.
      if (o.has("wait_group")) {
        need_ops(in, 1);
        if (op(in, 0).kind != ptx::Operand::Kind::integer)
          throw Unsupported("wgmma.wait_group needs a constant");
        info.group_keep = uint8_t(std::min<uint64_t>(op(in, 0).bits, 255));
      }
      I.fn = h_nop;
      return true;
    }
    if (!o.has("mma_async")) throw Unsupported("this wgmma form");
    if (o.has("sp")) throw Unsupported("sparse wgmma (wgmma.mma_async.sp)");
    Shape s;
    if (!parse_shape(o, s)) throw Unsupported("wgmma.mma_async without a shape");
    const std::string form = o.text;
    if (o.types.size() != 3)
      throw Unsupported("`" + form + "`: wgmma.mma_async needs .dtype.atype.btype");
    FT dt = ft_of(o.types[0]), at = ft_of(o.types[1]), bt = ft_of(o.types[2]);
    const bool fp8 = at == FT::e4m3 || at == FT::e5m2;
    const bool half = at == FT::f16 || at == FT::bf16;
    if (!((fp8 && bt == at && s.k == 32) || (half && bt == at && s.k == 16)))
      throw Unsupported("`" + form +
                        "`: the simulator runs wgmma with e4m3 x e4m3 or e5m2 x e5m2 at k32 and "
                        "f16 x f16 or bf16 x bf16 at k16");
    if (s.m != 64 || s.n < 8 || s.n > 256 || s.n % 8 != 0)
      throw Unsupported("`" + form + "`: wgmma shape m" + std::to_string(s.m) + "n" +
                        std::to_string(s.n) + " (m64 and N a multiple of 8 up to 256)");
    if (dt != FT::f32)
      throw Unsupported("`" + form + "`: the simulator runs wgmma with f32 accumulators only");
    if (fp8)
      D.warn("FP8 wgmma: this run sums each instruction's products exactly and rounds once to f32; "
             "Hopper's tensor cores keep about 14 bits inside an FP8 wgmma and as it adds into the "
             "accumulator, so on a GPU the sums drift from f32 as K grows. Start a fresh "
             "accumulator every 128 of k or fewer and add it into f32 registers (promotion, as "
             "puzzle 33's solution does): on an H100 at K = 4096 that passes puzzle 33's check, "
             "where sums left on the tensor cores for all of K miss it on about 10,000 of 16.8 "
             "million elements");
    const size_t nops = in.ops.size();
    // A from registers: {a0, a1, a2, a3} in place of a-desc, and no imm-trans-a.
    const bool areg = op(in, 1).kind == ptx::Operand::Kind::vec;
    const size_t want = fp8 ? 6 : areg ? 7 : 8;
    if (nops != want)
      throw Unsupported("`" + form + "` takes " + std::to_string(want) + " operands here, found " +
                        std::to_string(nops));
    auto imm = [&](size_t i) -> int64_t {
      if (op(in, i).kind != ptx::Operand::Kind::integer)
        throw Unsupported("`" + form + "`: operand " + std::to_string(i + 1) +
                          " must be an immediate");
      return int64_t(op(in, i).bits);
    };
    const int64_t scale_a = imm(4), scale_b = imm(5);
    if ((scale_a != 1 && scale_a != -1) || (scale_b != 1 && scale_b != -1))
      throw Unsupported("`" + form + "`: imm-scale-a and imm-scale-b must be 1 or -1");
    // imm-trans-a (desc form only) and imm-trans-b: 1 reads that operand M- or N-major. PTX
    // allows it for 16-bit types only, and the FP8 forms have no such operands.
    const int64_t trans_a = nops == 8 ? imm(6) : 0, trans_b = nops >= 7 ? imm(nops - 1) : 0;
    if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1))
      throw Unsupported("`" + form + "`: imm-trans-a and imm-trans-b must be 0 or 1");
    const ptx::Operand& dop = op(in, 0);
    const int nd = dop.kind == ptx::Operand::Kind::vec ? int(dop.elems.size()) : 1;
    if (nd != s.n / 2)
      throw Unsupported("`" + form + "` needs " + std::to_string(s.n / 2) +
                        " f32 accumulator registers, found " + std::to_string(nd));
    I.target = D.vec_rows(dop, Ty::b32, nd);
    for (auto& e : dop.elems) D.dst(e);
    I.r[1] = areg ? D.vec_rows(op(in, 1), Ty::b32, 4) : D.row(op(in, 1), Ty::b64);
    I.r[2] = D.row(op(in, 2), Ty::b64);
    const ptx::Operand& sd = op(in, 3);
    uint8_t flags = uint8_t((scale_a < 0 ? 1 : 0) | (scale_b < 0 ? 2 : 0) | (areg ? 8 : 0) |
                            (trans_a ? 32 : 0) | (trans_b ? 64 : 0));
    if (sd.kind == ptx::Operand::Kind::integer) {
      if (sd.bits) flags |= 4;
    } else {
      I.ps = D.pred(sd, &I.ps_xor);
    }
    {
      // Distinct accumulator rows let the results be written eight columns at a time (a row
      // read as C is never one already written as D).
      std::vector<uint32_t> rows(D.P.lists.begin() + I.target, D.P.lists.begin() + I.target + nd);
      std::sort(rows.begin(), rows.end());
      if (std::adjacent_find(rows.begin(), rows.end()) == rows.end()) flags |= 16;
    }
    I.flags = flags;
    I.sub = uint8_t(at);
    I.imm = int64_t(uint64_t(s.n) | (uint64_t(s.k) << 16));
    I.fn = h_wgmma;
    // This warp's quarter of the warpgroup's 2 * 64 * N * K (at most 256 for m64n256k32).
    info.tensor_flops_per_warp_k = uint16_t(2 * 16 * s.n * s.k / 1024);
    return true;
  }
  if (b == "ldmatrix") {
    o.only({"m8n8", "x1", "x2", "x4", "trans"});
    if (o.last_type() != Ty::b16) throw Unsupported("ldmatrix of non-b16 elements");
    need_ops(in, 2);
    I.vec = uint8_t(o.has("x4") ? 4 : o.has("x2") ? 2 : 1);
    I.target = D.vec_rows(op(in, 0), Ty::b32, I.vec);
    for (auto& e : op(in, 0).elems) D.dst(e);
    Dec::Addr a = D.addr(op(in, 1), o.space());
    if (a.base == kNoRow) a.base = D.const_row(0);
    I.r[1] = a.base;
    I.imm = a.disp;
    I.space = a.space;
    I.aux = o.has("trans");
    I.fn = h_ldmatrix;
    return true;
  }
  return false;
}

} // namespace wb::sim
