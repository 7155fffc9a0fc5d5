// Loads, stores, atomics and the other memory instructions; coalescing (32-byte sectors) and
// shared-memory bank (wavefront) counters; shared-memory race checks.
#include "ops_common.hpp"

#include <algorithm>
#include <atomic>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace wb::sim {

namespace {

const uint64_t kZeroRow[kWarpSize] = {};

inline const uint64_t* base_row(Warp& w, const Inst& in) {
  return in.r[1] != kNoRow ? w.row(in.r[1]) : kZeroRow;
}

// Distinct values among s[0..n): neighbouring lanes usually share a sector, and a warp touches
// few distinct sectors, so a short list beats sorting.
// Bits set in a 64-bit word (inline: without -mpopcnt std::popcount is a library call).
inline uint32_t bits_in(uint64_t v) {
  v = v - ((v >> 1) & 0x5555555555555555ull);
  v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
  return uint32_t((((v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full) * 0x0101010101010101ull) >> 56);
}

// Distinct values among s[0..n) >> shift when they all lie within 64 of the smallest (nearly
// every warp access: its sectors span at most 2 KiB), as a bit set: two branch-free passes;
// returns 0 when they spread wider.
inline uint32_t count_distinct_near(const uint64_t* s, int n, int shift) {
  uint64_t lo = ~0ull, hi = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t v = s[i] >> shift;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (n == 0 || hi - lo >= 64) return 0;
  uint64_t set = 0;
  for (int i = 0; i < n; ++i) set |= 1ull << ((s[i] >> shift) - lo);
  return bits_in(set);
}

// A full warp's addresses (base + disp) into addr[], their lowest and highest, and the OR of all
// (for the alignment test): the first step of every full-warp global access.
struct WarpSpan {
  uint64_t lo, hi, any;
  uint64_t sectors = 0;    // AVX2 pass only: bit k = sector (addr[0] >> 5) - 31 + k was touched
  bool sectors_ok = false; // ... valid when every lane's sector lies in that 64-sector window
};
inline WarpSpan warp_addresses_scalar(const uint64_t* base, uint64_t disp, uint64_t* addr) {
  uint64_t mn = ~0ull, mx = 0, any = 0;
  for (int l = 0; l < kWarpSize; ++l) {
    uint64_t a = base[l] + disp;
    addr[l] = a;
    mn = std::min(mn, a);
    mx = std::max(mx, a);
    any |= a;
  }
  return {mn, mx, any};
}
// The 32-byte sectors of a full warp's addresses as a bit set relative to sector s0 (every
// sector must lie in [s0, s0 + 64)).
inline uint64_t warp_sectors_scalar(const uint64_t* addr, uint64_t s0) {
  uint64_t set = 0;
  for (int l = 0; l < kWarpSize; ++l) set |= 1ull << ((addr[l] >> 5) - s0);
  return set;
}
#if defined(__x86_64__)
// The same two with AVX2 (the baseline build targets SSE2, which has no 64-bit compares or
// per-lane shifts, so the compiler cannot vectorise them itself): these run on every full-warp
// global access, the interpreter's hottest path.
__attribute__((target("avx2"))) WarpSpan warp_addresses_avx2(const uint64_t* base, uint64_t disp,
                                                             uint64_t* addr) {
  const __m256i d = _mm256_set1_epi64x(int64_t(disp));
  const __m256i bias = _mm256_set1_epi64x(INT64_MIN); // unsigned order through signed compares
  __m256i mn = _mm256_set1_epi64x(INT64_MAX), mx = _mm256_set1_epi64x(INT64_MIN);
  __m256i any = _mm256_setzero_si256();
  // The sectors in the same pass, as a bit set around lane 0's sector (a shift of 64 or more
  // gives 0 in vpsllvq, so lanes outside the window are caught through `far`).
  const __m256i s_ref = _mm256_set1_epi64x(int64_t(((base[0] + disp) >> 5) - 31));
  const __m256i one = _mm256_set1_epi64x(1);
  __m256i set = _mm256_setzero_si256(), far = _mm256_setzero_si256();
  for (int l = 0; l < kWarpSize; l += 4) {
    __m256i a = _mm256_add_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + l)), d);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(addr + l), a);
    __m256i ab = _mm256_xor_si256(a, bias);
    mn = _mm256_blendv_epi8(mn, ab, _mm256_cmpgt_epi64(mn, ab));
    mx = _mm256_blendv_epi8(mx, ab, _mm256_cmpgt_epi64(ab, mx));
    any = _mm256_or_si256(any, a);
    __m256i sh = _mm256_sub_epi64(_mm256_srli_epi64(a, 5), s_ref);
    far = _mm256_or_si256(far, sh);
    set = _mm256_or_si256(set, _mm256_sllv_epi64(one, sh));
  }
  alignas(32) uint64_t vmn[4], vmx[4], vany[4], vset[4], vfar[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(vmn), mn);
  _mm256_store_si256(reinterpret_cast<__m256i*>(vmx), mx);
  _mm256_store_si256(reinterpret_cast<__m256i*>(vany), any);
  _mm256_store_si256(reinterpret_cast<__m256i*>(vset), set);
  _mm256_store_si256(reinterpret_cast<__m256i*>(vfar), far);
  WarpSpan r{~0ull, 0, 0};
  uint64_t f = 0;
  for (int k = 0; k < 4; ++k) {
    r.lo = std::min<uint64_t>(r.lo, vmn[k] ^ (1ull << 63));
    r.hi = std::max<uint64_t>(r.hi, vmx[k] ^ (1ull << 63));
    r.any |= vany[k];
    r.sectors |= vset[k];
    f |= vfar[k];
  }
  r.sectors_ok = f < 64; // every shift was in [0, 64)
  return r;
}
__attribute__((target("avx2"))) uint64_t warp_sectors_avx2(const uint64_t* addr, uint64_t s0) {
  const __m256i base = _mm256_set1_epi64x(int64_t(s0)), one = _mm256_set1_epi64x(1);
  __m256i set = _mm256_setzero_si256();
  for (int l = 0; l < kWarpSize; l += 4) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(addr + l));
    __m256i sh = _mm256_sub_epi64(_mm256_srli_epi64(a, 5), base);
    set = _mm256_or_si256(set, _mm256_sllv_epi64(one, sh));
  }
  alignas(32) uint64_t v[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(v), set);
  return v[0] | v[1] | v[2] | v[3];
}
#endif
inline WarpSpan warp_addresses(const uint64_t* base, uint64_t disp, uint64_t* addr) {
#if defined(__x86_64__)
  if (host_cpu::kAvx2) return warp_addresses_avx2(base, disp, addr);
#endif
  return warp_addresses_scalar(base, disp, addr);
}
inline uint64_t warp_sectors(const uint64_t* addr, uint64_t s0) {
#if defined(__x86_64__)
  if (host_cpu::kAvx2) return warp_sectors_avx2(addr, s0);
#endif
  return warp_sectors_scalar(addr, s0);
}

uint32_t count_distinct(const uint64_t* s, int n) {
  if (n == 0) return 0;
  if (uint32_t c = count_distinct_near(s, n, 0)) return c;
  uint32_t c = 1;
  int i = 1;
  for (; i < n; ++i) { // non-decreasing (coalesced, broadcast): count the steps
    if (s[i] < s[i - 1]) break;
    c += s[i] != s[i - 1];
  }
  if (i == n) return c;
  uint64_t uniq[kWarpSize * 4];
  int nu = 0;
  uint64_t last = ~0ull;
  for (int k = 0; k < n; ++k) {
    uint64_t v = s[k];
    if (v == last) continue;
    last = v;
    bool seen = false;
    for (int j = nu - 1; j >= 0; --j)
      if (uniq[j] == v) {
        seen = true;
        break;
      }
    if (!seen) uniq[nu++] = v;
  }
  return uint32_t(nu);
}

// Shared-memory wavefronts for one warp access (32 banks of 4 bytes): each phase of lanes is
// served in as many wavefronts as the most distinct 4-byte words any one bank must deliver
// (the same word to many lanes is a broadcast). 8-byte accesses are served per half-warp and
// 16-byte accesses per quarter-warp, as the hardware does.
uint32_t shared_wavefronts(const uint64_t* addr, uint32_t m, uint32_t n, uint32_t& ideal) {
  uint32_t phases = n <= 4 ? 1 : n / 4;
  uint32_t per = kWarpSize / phases;
  uint32_t words = std::max<uint32_t>(1, n / 4);
  uint32_t total = 0;
  ideal = 0;
  for (uint32_t ph = 0; ph < phases; ++ph) {
    uint32_t lanes = per == 32 ? kFull : ((1u << per) - 1);
    uint32_t pm = m & (lanes << (ph * per));
    if (!pm) continue;
    ++ideal;
    // The common patterns first: the phase's lanes at one address (a broadcast), or lane l at
    // element l (a phase spans at most 128 bytes, so consecutive words fall in distinct banks).
    const int l0 = std::countr_zero(pm);
    bool same = true, consecutive = true;
    for (uint32_t mm = pm; mm; mm &= mm - 1) {
      const int l = std::countr_zero(mm);
      same &= addr[l] == addr[l0];
      consecutive &= addr[l] == addr[l0] + uint64_t(l - l0) * n;
    }
    if (same || consecutive) {
      total += 1;
      continue;
    }
    uint8_t cnt[32] = {};
    uint64_t list[32][8];
    uint32_t worst = 1;
    bool overflow = false;
    for (uint32_t mm = pm; mm; mm &= mm - 1) {
      int l = std::countr_zero(mm);
      for (uint32_t k = 0; k < words; ++k) {
        uint64_t wd = (addr[l] >> 2) + k;
        uint32_t bank = uint32_t(wd & 31);
        bool dup = false;
        for (uint32_t i = 0; i < std::min<uint32_t>(cnt[bank], 8); ++i)
          if (list[bank][i] == wd) dup = true;
        if (dup) continue;
        if (cnt[bank] < 8)
          list[bank][cnt[bank]] = wd;
        else
          overflow = true;
        ++cnt[bank];
        worst = std::max<uint32_t>(worst, cnt[bank]);
      }
    }
    if (overflow) { // more than 8 distinct words in a bank: count exactly
      worst = 0;
      for (uint32_t bank = 0; bank < 32; ++bank) {
        uint64_t v[kWarpSize * 4];
        int k = 0;
        for (uint32_t mm = pm; mm; mm &= mm - 1) {
          int l = std::countr_zero(mm);
          for (uint32_t j = 0; j < words; ++j) {
            uint64_t wd = (addr[l] >> 2) + j;
            if ((wd & 31) == bank) v[k++] = wd;
          }
        }
        worst = std::max(worst, count_distinct(v, k));
      }
    }
    total += worst;
  }
  return total;
}

#if defined(__x86_64__)
// A whole warp's float4 reads into four register rows, four lanes at a time: their 16-byte
// vectors turned over (4 x 4 words), each row's four words widened to 64 bits. The rows are
// written after all the loads of the four lanes, as the scalar loop (which reads every lane's
// bytes before writing) would leave them: rows and shared memory never overlap.
// (`hb` + an address is where its bytes are on the host.)
__attribute__((target("avx2"))) void float4_rows_avx2(uintptr_t hb, const uint64_t* addr,
                                                      uint64_t* const reg[4]) {
  for (int l = 0; l < kWarpSize; l += 4) {
    const __m128 v0 = _mm_loadu_ps(reinterpret_cast<const float*>(hb + addr[l]));
    const __m128 v1 = _mm_loadu_ps(reinterpret_cast<const float*>(hb + addr[l + 1]));
    const __m128 v2 = _mm_loadu_ps(reinterpret_cast<const float*>(hb + addr[l + 2]));
    const __m128 v3 = _mm_loadu_ps(reinterpret_cast<const float*>(hb + addr[l + 3]));
    const __m128 t0 = _mm_unpacklo_ps(v0, v1), t1 = _mm_unpacklo_ps(v2, v3);
    const __m128 t2 = _mm_unpackhi_ps(v0, v1), t3 = _mm_unpackhi_ps(v2, v3);
    const __m128 x = _mm_movelh_ps(t0, t1), y = _mm_movehl_ps(t1, t0);
    const __m128 z = _mm_movelh_ps(t2, t3), q = _mm_movehl_ps(t3, t2);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(reg[0] + l),
                        _mm256_cvtepu32_epi64(_mm_castps_si128(x)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(reg[1] + l),
                        _mm256_cvtepu32_epi64(_mm_castps_si128(y)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(reg[2] + l),
                        _mm256_cvtepu32_epi64(_mm_castps_si128(z)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(reg[3] + l),
                        _mm256_cvtepu32_epi64(_mm_castps_si128(q)));
  }
}
#endif

// shared_wavefronts for 16-byte accesses whose lanes are all 16-byte aligned (a tile's float4
// reads): each address covers the four banks of its group ((a / 16) % 8) with one word each, so a
// bank's distinct words in a quarter-warp are the distinct addresses of its group, and the phase
// takes as many wavefronts as the group with the most.
#if defined(__x86_64__)
// Whether a full quarter-warp's eight addresses are all a[0], or a[0] + 16 k (AVX2).
__attribute__((target("avx2"))) bool phase16_simple(const uint64_t* a) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 4));
  const __m256i a0 = _mm256_set1_epi64x(int64_t(a[0]));
  const __m256i same = _mm256_and_si256(_mm256_cmpeq_epi64(lo, a0), _mm256_cmpeq_epi64(hi, a0));
  if (_mm256_movemask_epi8(same) == -1) return true;
  const __m256i step_lo = _mm256_add_epi64(a0, _mm256_setr_epi64x(0, 16, 32, 48));
  const __m256i step_hi = _mm256_add_epi64(a0, _mm256_setr_epi64x(64, 80, 96, 112));
  const __m256i cons =
      _mm256_and_si256(_mm256_cmpeq_epi64(lo, step_lo), _mm256_cmpeq_epi64(hi, step_hi));
  return _mm256_movemask_epi8(cons) == -1;
}
#endif

uint32_t shared_wavefronts16(const uint64_t* addr, uint32_t m, uint32_t& ideal) {
  uint32_t total = 0;
  ideal = 0;
  for (uint32_t ph = 0; ph < 4; ++ph) {
    uint32_t pm = m & (0xffu << (ph * 8));
    if (!pm) continue;
    ++ideal;
#if defined(__x86_64__)
    if (pm == 0xffu << (ph * 8) && host_cpu::kAvx2 && phase16_simple(addr + ph * 8)) {
      total += 1;
      continue;
    }
#endif
    // The phase's lanes at one address, or lane l at element l: one wavefront.
    const int l0 = std::countr_zero(pm);
    const uint64_t a0 = addr[l0];
    bool same = true, consecutive = true;
    for (uint32_t mm = pm; mm; mm &= mm - 1) {
      const int l = std::countr_zero(mm);
      same &= addr[l] == a0;
      consecutive &= addr[l] == a0 + uint64_t(l - l0) * 16;
    }
    if (same || consecutive) {
      total += 1;
      continue;
    }
    uint64_t seen[8];
    uint32_t n = 0, per_group[8] = {}, worst = 0;
    for (; pm; pm &= pm - 1) {
      const uint64_t a = addr[std::countr_zero(pm)];
      bool dup = false;
      for (uint32_t i = 0; i < n; ++i) dup |= seen[i] == a;
      if (dup) continue;
      seen[n++] = a;
      worst = std::max(worst, ++per_group[(a >> 4) & 7]);
    }
    total += worst;
  }
  return total;
}

// Loaded bytes -> register value. Signed types sign-extend into the destination register: 32
// bits, or 64 where the register is 64 bits wide (ld.s32 %rd: PTX extends to the register's size).
enum class Ext : uint8_t { none, to32, to64 };
inline Ext sign_ext(const Inst& in) {
  return !(in.flags & kSat) ? Ext::none : (in.flags & kWide) ? Ext::to64 : Ext::to32;
}
inline uint64_t extend(int64_t v, Ext e) {
  return e == Ext::to64 ? uint64_t(v) : uint32_t(v);
}
inline uint64_t load_value(const std::byte* p, uint32_t width, Ext sign) {
  switch (width) {
  case 1: {
    uint8_t v;
    std::memcpy(&v, p, 1);
    return sign != Ext::none ? extend(int8_t(v), sign) : v;
  }
  case 2: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return sign != Ext::none ? extend(int16_t(v), sign) : v;
  }
  case 4: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return sign == Ext::to64 ? extend(int32_t(v), sign) : v;
  }
  default: {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
}
inline void store_value(std::byte* p, uint64_t v, uint32_t width) {
  std::memcpy(p, &v, width);
}

inline uint32_t dst_row(const Exec& x, const Inst& in, int k) {
  return in.vec == 1 ? in.r[0] : x.P->lists[in.target + k];
}

// ---- loads and stores ----

template <Space S, bool Store> int h_access(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const uint64_t* base = base_row(w, in);
  const uint32_t width = in.width, vec = in.vec, n = width * vec;
  const Ext sign = sign_ext(in);
  uint64_t gaddr[kWarpSize], saddr[kWarpSize];
  uint64_t gfull[kWarpSize], loff[kWarpSize]; // the trace's: global addresses, local offsets
  int llane[kWarpSize];
  int ng = 0, nsh = 0, nl = 0;
  uint32_t gmask = 0, smask = 0;
  // Whether the decoder traced this access to a variable whose bounds can be checked (once per
  // instruction, not per lane).
  bool vars = false;
  if (x.track_races && S != Space::global && S != Space::konst) {
    const InstInfo& inf = info_of(x, in);
    vars = inf.shared_sym >= 0 || inf.local_frame != kNoRow;
  }
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    uint64_t a = base[l] + uint64_t(in.imm);
    std::byte* p;
    Space sp = S;
    if constexpr (S == Space::global) {
      // The region this access hit last, or the one this instruction hit last (a loop reading two
      // buffers in turn, a tile of A then one of B).
      auto fits = [&](const Region* r) {
        return r && a >= r->data_lo && a + n <= r->data_hi && (a & (n - 1)) == 0 &&
               !(Store && r->readonly);
      };
      Region* r = x.last;
      if (!fits(r) && fits(x.rcache[pc_of(x, in)]))
        r = x.last = x.rcache[pc_of(x, in)]; // as global_ptr would leave it
      if (fits(r)) {
        p = fast_host(r, a, n);
      } else {
        p = global_ptr(x, w, in, l, a, n, Store);
        if (p && fits(x.last)) x.rcache[pc_of(x, in)] = x.last;
      }
    } else if constexpr (S == Space::shared) {
      if (a + n <= x.B->shared_size && a < x.B->shared_size && (a & (n - 1)) == 0)
        p = x.B->shared + a;
      else
        p = shared_ptr(x, w, in, l, a, n, Store);
    } else if constexpr (S == Space::local) {
      uint32_t size = x.P->local_per_thread;
      if (a + n <= size && a < size && (a & (n - 1)) == 0)
        p = w.local + size_t(l) * size + a;
      else
        p = local_ptr(x, w, in, l, a, n, Store);
    } else if constexpr (S == Space::konst) {
      p = global_ptr(x, w, in, l, a, n, Store);
    } else {
      p = generic_ptr(x, w, in, l, a, n, Store, sp);
    }
    if (!p) return kStop;
    if (vars && (sp == Space::shared || sp == Space::local)) {
      uint64_t off = sp == Space::shared
                         ? uint64_t(p - x.B->shared)
                         : uint64_t(p - (w.local + size_t(l) * x.P->local_per_thread));
      if (variable_check(x, w, in, l, sp, off, n, Store) != kNext) return kStop;
    }
    if (sp == Space::shared && x.track_races) {
      std::byte nv[16];
      if (Store)
        for (uint32_t k = 0; k < vec; ++k)
          store_value(nv + k * width, w.rv(dst_row(x, in, k), l), width);
      if (shared_race_check(x, w, in, l, uint64_t(p - x.B->shared), n, Store,
                            Store ? nv : nullptr) != kNext)
        return kStop;
    }
    for (uint32_t k = 0; k < vec; ++k) {
      uint32_t row = dst_row(x, in, k);
      if constexpr (Store)
        store_value(p + k * width, w.rv(row, l), width);
      else
        w.row(row)[l] = load_value(p + k * width, width, sign);
    }
    if (sp == Space::global) {
      if constexpr (Store) {
        if (x.last && x.last->writers && a >= x.last->data_lo && a < x.last->data_hi)
          note_writer(x, w, l, x.last, a);
        ++w.gstores[l];
      } else {
        ++w.gloads[l];
      }
      gfull[ng] = a;
      gaddr[ng++] = a >> 5;
      gmask |= 1u << l;
    } else if (sp == Space::shared) {
      saddr[l] = uint64_t(p - x.B->shared);
      smask |= 1u << l;
      ++nsh;
    } else if (sp == Space::local) {
      loff[nl] = uint64_t(p - (w.local + size_t(l) * x.P->local_per_thread));
      llane[nl++] = l;
    }
  }
  if (x.L->stop.load(std::memory_order_relaxed)) return kStop; // e.g. after a guard-band write
  if (x.count) {
    InstCount& c = x.ic[pc_of(x, in)];
    if (ng) {
      c.g_req += 1;
      c.g_bytes += uint64_t(ng) * n;
      c.g_ideal += (uint64_t(ng) * n + 31) / 32;
      if (n > 32) {
        c.g_sect += uint64_t(ng) * ((n + 31) / 32); // never for PTX's widest (16-byte) accesses
      } else {
        c.g_sect += count_distinct(gaddr, ng);
      }
    }
    if (nsh) {
      uint32_t ideal, waves = shared_wavefronts(saddr, smask, n, ideal);
      c.s_wave += waves;
      c.s_ideal += ideal;
      if (w.trace) trace_shared(w, waves, n);
    }
  }
  if (w.trace) {
    if (ng) trace_global(w, gfull, ng, n, TraceKind::global);
    if (nl) trace_local(x, w, loff, llane, nl, n);
  }
  return kNext;
}

// The common case, specialised: a scalar global load or store of W bytes. Each instruction
// remembers the region it hit last time, so one unsigned compare per lane checks the bounds.
template <bool Store, uint32_t W> int h_global1(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const uint64_t* base = base_row(w, in);
  uint64_t* reg = w.row(in.r[0]);
  const Ext sign = sign_ext(in);
  const uint64_t disp = uint64_t(in.imm);
  const uint32_t pc = pc_of(x, in);
  Region*& cached = x.rcache[pc];
  Region* r = cached;
  uint64_t lo = 0, span = 0; // lanes with a - lo <= span - W (and aligned) take the fast path
  uintptr_t hb = 0;          // host address = hb + simulated address
  // (A lazy buffer through its writer mapping, each access's chunk filled first: fast_host.)
  auto refresh = [&] {
    if (r && !(Store && r->readonly) && r->data_hi - r->data_lo >= W) {
      lo = r->data_lo;
      span = r->data_hi - r->data_lo - W;
      hb = reinterpret_cast<uintptr_t>(fast_view(r)) - r->base;
    } else {
      lo = ~0ull, span = 0, hb = 0;
    }
  };
  refresh();
  uint64_t addr[kWarpSize];
  uint64_t* wr = Store && r && r->writers ? r->writers : nullptr;
  const uint64_t tag = Store ? (x.B->linear << 11) + w.tid0 + 1 : 0;
  uint32_t rest = m;
  uint64_t amin = 0, amax = 0; // full warp: the lowest and highest address
  uint64_t sector_set = 0;     // full warp, when sector_set_ok: its sectors as a bit set
  bool sector_set_ok = false;
  if (m == kFull) {
    // A whole warp, usually all in bounds: the addresses, their range and alignment first (no
    // branch per lane), then one bounds test for the warp, then the accesses. If the test fails,
    // the general loop below redoes the warp lane by lane (so faults keep lane order).
    WarpSpan ws = warp_addresses(base, disp, addr);
    amin = ws.lo, amax = ws.hi;
    sector_set = ws.sectors, sector_set_ok = ws.sectors_ok;
    if (ws.lo - lo <= span && ws.hi - lo <= span && (ws.any & (W - 1)) == 0) {
      ensure_warp(r, ws.lo, ws.hi, addr, W);
#pragma GCC unroll 4
      for (int l = 0; l < kWarpSize; ++l) {
        std::byte* p = reinterpret_cast<std::byte*>(hb + addr[l]);
        if constexpr (Store) {
          std::memcpy(p, &reg[l], W);
          if (wr) store_writer(&wr[(addr[l] - lo) >> r->elem_shift], tag + uint64_t(l));
        } else {
          reg[l] = load_value(p, W, sign);
        }
      }
      rest = 0;
    }
  }
  for (uint32_t mm = rest; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    uint64_t a = base[l] + disp;
    addr[l] = a;
    std::byte* p;
    if (a - lo <= span && (a & (W - 1)) == 0) [[likely]] {
      if (r && r->lazy) r->lazy->ensure(size_t(a - r->base), W);
      p = reinterpret_cast<std::byte*>(hb + a);
    } else {
      p = global_ptr(x, w, in, l, a, W, Store);
      if (!p) return kStop;
      if (x.last && a >= x.last->data_lo && a + W <= x.last->data_hi) {
        cached = r = x.last;
        refresh();
        wr = Store && r->writers ? r->writers : nullptr;
      }
    }
    if constexpr (Store) {
      std::memcpy(p, &reg[l], W);
      if (wr && a - r->data_lo < r->data_hi - r->data_lo)
        store_writer(&wr[(a - r->data_lo) >> r->elem_shift], tag + uint64_t(l));
    } else {
      reg[l] = load_value(p, W, sign);
    }
  }
  if (x.L->stop.load(std::memory_order_relaxed)) return kStop; // e.g. after a guard-band write
  if (m == kFull) {
    ++(Store ? w.gstores_all : w.gloads_all);
  } else {
    uint32_t* per_thread = Store ? w.gstores : w.gloads;
    each_lane(m, [&](int l) { ++per_thread[l]; });
  }
  if (x.count) {
    InstCount& c = x.ic[pc];
    uint32_t sectors;
    int ng;
    if (m == kFull) {
      ng = kWarpSize;
      uint64_t s0 = amin >> 5;
      if (sector_set_ok) {
        sectors = bits_in(sector_set);
      } else if ((amax >> 5) - s0 < 64) { // the sectors as a bit set, from the range found above
        sectors = bits_in(warp_sectors(addr, s0));
      } else {
        uint64_t seg[kWarpSize];
        for (int l = 0; l < kWarpSize; ++l) seg[l] = addr[l] >> 5;
        sectors = count_distinct(seg, kWarpSize);
      }
    } else {
      uint64_t seg[kWarpSize];
      ng = 0;
      for (uint32_t mm = m; mm; mm &= mm - 1) seg[ng++] = addr[std::countr_zero(mm)] >> 5;
      sectors = count_distinct(seg, ng);
    }
    c.g_req += 1;
    c.g_bytes += uint64_t(ng) * W;
    c.g_ideal += (uint64_t(ng) * W + 31) / 32;
    c.g_sect += sectors;
  }
  if (w.trace) {
    if (m == kFull) {
      trace_global(w, addr, kWarpSize, W, TraceKind::global);
    } else {
      uint64_t dense[kWarpSize];
      int k = 0;
      for (uint32_t mm = m; mm; mm &= mm - 1) dense[k++] = addr[std::countr_zero(mm)];
      trace_global(w, dense, k, W, TraceKind::global);
    }
  }
  return kNext;
}

// A scalar shared-memory load or store of W bytes: bounds, race records, the access, and the bank
// count, each in one pass over the lanes.
template <bool Store, uint32_t W> int h_shared1(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const uint64_t* base = base_row(w, in);
  uint64_t* reg = w.row(in.r[0]);
  const Ext sign = sign_ext(in);
  const uint64_t disp = uint64_t(in.imm);
  Block& B = *x.B;
  const uint64_t limit = B.shared_size >= W ? B.shared_size - W : ~0ull;
  std::byte* sh = B.shared;
  uint64_t addr[kWarpSize];
  bool in_bounds = each_lane_while(m, [&](int l) {
    uint64_t a = base[l] + disp;
    addr[l] = a;
    if (a > limit || B.shared_size < W || (a & (W - 1))) {
      shared_ptr(x, w, in, l, a, W, Store); // raises the fault
      return false;
    }
    return true;
  });
  if (!in_bounds) return kStop;
  if (x.track_races && info_of(x, in).shared_sym >= 0) {
    bool inside = each_lane_while(m, [&](int l) {
      return variable_check(x, w, in, l, Space::shared, addr[l], W, Store) == kNext;
    });
    if (!inside) return kStop;
  }
  if (x.track_races) {
    if constexpr (Store)
      if (!B.tma_stores.empty() && !each_lane_while(m, [&](int l) {
            return tma_store_race(x, w, in, l, addr[l], W) == kNext;
          }))
        return kStop;
    const uint32_t epoch = B.epoch;
    const uint16_t me = uint16_t(w.index);
    const uint32_t pc = pc_of(x, in);
    WordAccess* meta = x.shared_meta.data();
    bool clean = each_lane_while(m, [&](int l) {
      uint64_t a = addr[l];
      for (uint64_t wd = a >> 2; wd <= (a + W - 1) >> 2; ++wd) {
        WordAccess& r = meta[wd];
        bool other_wrote = r.w_epoch == epoch && r.w_warp != me;
        if constexpr (Store) {
          if (other_wrote || (r.r_epoch == epoch && r.r_warp != me)) {
            // The slow path checks (and records) every word of this access.
            uint64_t v = reg[l];
            return shared_race_check(x, w, in, l, a, W, true,
                                     reinterpret_cast<const std::byte*>(&v)) == kNext;
          }
          r.w_epoch = epoch;
          r.w_warp = me;
          r.w_lane = uint8_t(l);
          r.w_pc = pc;
        } else {
          if (other_wrote) return shared_race_check(x, w, in, l, a, W, false, nullptr) == kNext;
          if (r.r_epoch != epoch) {
            r.r_epoch = epoch;
            r.r_warp = me;
            r.r_lane = uint8_t(l);
            r.r_pc = pc;
          } else if (r.r_warp != me) {
            r.r_warp = 0xffff;
          }
        }
      }
      return true;
    });
    if (!clean) return kStop;
  }
  auto one = [&](int l) {
    if constexpr (Store)
      std::memcpy(sh + addr[l], &reg[l], W);
    else
      reg[l] = load_value(sh + addr[l], W, sign);
  };
  if (m == kFull)
    for (int l = 0; l < kWarpSize; ++l) one(l);
  else
    each_lane(m, one);
  if (x.count) {
    InstCount& c = x.ic[pc_of(x, in)];
    if (W <= 4) {
      // One wavefront unless two lanes want different words of one bank.
      uint64_t word[32];
      uint32_t seen = 0;
      bool simple = true;
      for (uint32_t mm = m; mm && simple; mm &= mm - 1) {
        uint64_t wd = addr[std::countr_zero(mm)] >> 2;
        uint32_t bank = uint32_t(wd & 31);
        if ((seen >> bank) & 1)
          simple = word[bank] == wd;
        else
          seen |= 1u << bank, word[bank] = wd;
      }
      if (simple) {
        c.s_wave += 1;
        c.s_ideal += 1;
        if (w.trace) trace_shared(w, 1, W);
        return kNext;
      }
    }
    uint32_t ideal, waves = shared_wavefronts(addr, m, W, ideal);
    c.s_wave += waves;
    c.s_ideal += ideal;
    if (w.trace) trace_shared(w, waves, W);
  }
  return kNext;
}

template <bool Store> ExecFn pick_shared1(uint32_t w) {
  switch (w) {
  case 1:
    return &h_shared1<Store, 1>;
  case 2:
    return &h_shared1<Store, 2>;
  case 4:
    return &h_shared1<Store, 4>;
  case 8:
    return &h_shared1<Store, 8>;
  default:
    return nullptr;
  }
}

// A vector shared load or store (V elements of W bytes: a tile's float4 reads) where no race is
// tracked (a prediction's sampled run): aligned and inside shared memory, each lane copies its
// bytes; anything else takes h_access's full path, which says what went wrong.
template <bool Store, uint32_t W, uint32_t V>
int h_shared_vec(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  constexpr uint32_t N = W * V;
  Block& B = *x.B;
  if (x.track_races || B.shared_size < N) return h_access<Space::shared, Store>(x, w, in, m);
  const uint64_t* base = base_row(w, in);
  const uint64_t disp = uint64_t(in.imm), limit = B.shared_size - N;
  uint64_t addr[kWarpSize];
  const bool inside = each_lane_while(m, [&](int l) {
    const uint64_t a = base[l] + disp;
    addr[l] = a;
    return a <= limit && (a & (N - 1)) == 0;
  });
  if (!inside) return h_access<Space::shared, Store>(x, w, in, m);
  const Ext sign = sign_ext(in);
  std::byte* sh = B.shared;
  if (!Store && W == 4 && V == 4 && sign == Ext::none) {
    // A float4 read (unsigned words: nothing to extend): a lane's 16 bytes at once.
    uint64_t* reg[4];
    for (uint32_t k = 0; k < 4; ++k) reg[k] = w.row(x.P->lists[in.target + k]);
#if defined(__x86_64__)
    if (m == kFull && host_cpu::kAvx2) {
      float4_rows_avx2(reinterpret_cast<uintptr_t>(sh), addr, reg);
    } else
#endif
      each_lane(m, [&](int l) {
        uint32_t v[4];
        std::memcpy(v, sh + addr[l], 16);
        reg[0][l] = v[0], reg[1][l] = v[1], reg[2][l] = v[2], reg[3][l] = v[3];
      });
  } else {
    for (uint32_t k = 0; k < V; ++k) {
      uint64_t* reg = w.row(x.P->lists[in.target + k]);
      each_lane(m, [&](int l) {
        if constexpr (Store)
          store_value(sh + addr[l] + k * W, reg[l], W);
        else
          reg[l] = load_value(sh + addr[l] + k * W, W, sign);
      });
    }
  }
  if (x.count) {
    InstCount& c = x.ic[pc_of(x, in)];
    uint32_t ideal, waves = N == 16 ? shared_wavefronts16(addr, m, ideal)
                                    : shared_wavefronts(addr, m, N, ideal);
    c.s_wave += waves;
    c.s_ideal += ideal;
    if (w.trace) trace_shared(w, waves, N);
  }
  return kNext;
}

// A vector global load (V elements of W bytes: a tile's float4 reads) by a whole warp whose
// lanes all lie, aligned, in the region the access or the instruction hit last: h_access's
// global path without its per-lane checks, with the same counts, trace and Exec::last. Anything
// else takes h_access.
template <uint32_t W, uint32_t V>
int h_global_vec_load(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  constexpr uint32_t N = W * V;
  if (m != kFull) return h_access<Space::global, false>(x, w, in, m);
  uint64_t addr[kWarpSize];
  const WarpSpan span = warp_addresses(base_row(w, in), uint64_t(in.imm), addr);
  auto holds = [&](const Region* r) {
    return r && span.lo >= r->data_lo && span.hi <= r->data_hi && r->data_hi - span.hi >= N;
  };
  const uint32_t pc = pc_of(x, in);
  Region* r = holds(x.last) ? x.last : holds(x.rcache[pc]) ? x.rcache[pc] : nullptr;
  if (!r || (span.any & (N - 1)) != 0) return h_access<Space::global, false>(x, w, in, m);
  x.last = r; // as h_access leaves it
  ensure_warp(r, span.lo, span.hi, addr, N);
  const uintptr_t hb = reinterpret_cast<uintptr_t>(fast_view(r)) - r->base;
  const Ext sign = sign_ext(in);
  uint64_t* reg[V];
  for (uint32_t k = 0; k < V; ++k) reg[k] = w.row(x.P->lists[in.target + k]);
#if defined(__x86_64__)
  if (W == 4 && V == 4 && sign == Ext::none && host_cpu::kAvx2) {
    float4_rows_avx2(hb, addr, reg);
  } else
#endif
    for (int l = 0; l < kWarpSize; ++l)
      for (uint32_t k = 0; k < V; ++k)
        reg[k][l] = load_value(reinterpret_cast<const std::byte*>(hb + addr[l]) + k * W, W, sign);
  for (int l = 0; l < kWarpSize; ++l) ++w.gloads[l];
  if (x.L->stop.load(std::memory_order_relaxed)) return kStop;
  if (x.count) {
    InstCount& c = x.ic[pc];
    uint64_t sectors[kWarpSize];
    for (int l = 0; l < kWarpSize; ++l) sectors[l] = addr[l] >> 5;
    c.g_req += 1;
    c.g_bytes += uint64_t(kWarpSize) * N;
    c.g_ideal += (uint64_t(kWarpSize) * N + 31) / 32;
    c.g_sect += count_distinct(sectors, kWarpSize);
  }
  if (w.trace) trace_global(w, addr, kWarpSize, N, TraceKind::global);
  return kNext;
}

ExecFn pick_global_vec_load(uint32_t width, uint32_t vec) {
  if (width == 4 && vec == 4) return &h_global_vec_load<4, 4>;
  if (width == 4 && vec == 2) return &h_global_vec_load<4, 2>;
  if (width == 8 && vec == 2) return &h_global_vec_load<8, 2>;
  if (width == 2 && vec == 4) return &h_global_vec_load<2, 4>;
  if (width == 2 && vec == 2) return &h_global_vec_load<2, 2>;
  return nullptr;
}

template <bool Store> ExecFn pick_shared_vec(uint32_t width, uint32_t vec) {
  if (width == 4 && vec == 4) return &h_shared_vec<Store, 4, 4>;
  if (width == 4 && vec == 2) return &h_shared_vec<Store, 4, 2>;
  if (width == 8 && vec == 2) return &h_shared_vec<Store, 8, 2>;
  if (width == 2 && vec == 4) return &h_shared_vec<Store, 2, 4>;
  if (width == 2 && vec == 2) return &h_shared_vec<Store, 2, 2>;
  return nullptr;
}

// A scalar local load or store of W bytes (a thread's own array indexed at run time: a
// reference's accumulators, a learner's per-thread row). Aligned and inside the frame, it goes
// straight to the lane's memory; a run that checks variables' bounds or records a trace, or any
// lane outside, takes h_access's full path, which says what went wrong.
template <bool Store, uint32_t W> int h_local1(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const uint32_t size = x.P->local_per_thread;
  if (x.track_races || w.trace || size < W) return h_access<Space::local, Store>(x, w, in, m);
  const uint64_t* base = base_row(w, in);
  const uint64_t disp = uint64_t(in.imm), limit = size - W;
  bool inside = each_lane_while(m, [&](int l) {
    const uint64_t a = base[l] + disp;
    return a <= limit && (a & (W - 1)) == 0;
  });
  if (!inside) return h_access<Space::local, Store>(x, w, in, m);
  uint64_t* reg = w.row(in.r[0]);
  const Ext sign = sign_ext(in);
  std::byte* frame = w.local;
  each_lane(m, [&](int l) {
    std::byte* p = frame + size_t(l) * size + (base[l] + disp);
    if constexpr (Store)
      store_value(p, reg[l], W);
    else
      reg[l] = load_value(p, W, sign);
  });
  return kNext;
}

template <bool Store> ExecFn pick_local1(uint32_t w) {
  switch (w) {
  case 1:
    return &h_local1<Store, 1>;
  case 2:
    return &h_local1<Store, 2>;
  case 4:
    return &h_local1<Store, 4>;
  case 8:
    return &h_local1<Store, 8>;
  default:
    return nullptr;
  }
}

template <bool Store> ExecFn pick_global1(uint32_t w) {
  switch (w) {
  case 1:
    return &h_global1<Store, 1>;
  case 2:
    return &h_global1<Store, 2>;
  case 4:
    return &h_global1<Store, 4>;
  case 8:
    return &h_global1<Store, 8>;
  default:
    return nullptr;
  }
}

// ld.param of a kernel parameter: the same bytes for every lane.
int h_ld_kparam(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const std::vector<std::byte>& P = x.L->params;
  for (uint32_t k = 0; k < in.vec; ++k) {
    uint64_t off = uint64_t(in.imm) + k * in.width;
    uint64_t v = 0;
    if (off + in.width <= P.size()) v = load_value(P.data() + off, in.width, sign_ext(in));
    uint64_t* d = w.row(dst_row(x, in, k));
    each_lane(m, [&](int l) { d[l] = v; });
  }
  return kNext;
}
// ld.param through a register holding a kernel-parameter address.
int h_ld_kparam_reg(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const std::vector<std::byte>& P = x.L->params;
  const uint64_t* base = base_row(w, in);
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    for (uint32_t k = 0; k < in.vec; ++k) {
      uint64_t off = base[l] + uint64_t(in.imm) + k * in.width;
      if (off + in.width > P.size()) {
        const InstInfo& inf = info_of(x, in);
        return raise_fault(x, FaultKind::out_of_bounds,
                           thread_name(x, w, l) + " of " + block_name(x) +
                               " read past the kernel's parameters" + at_line(inf.line),
                           inf.line);
      }
      w.row(dst_row(x, in, k))[l] = load_value(P.data() + off, in.width, sign_ext(in));
    }
  }
  return kNext;
}

template <bool Store> ExecFn pick_access(Space s) {
  switch (s) {
  case Space::global:
    return &h_access<Space::global, Store>;
  case Space::shared:
    return &h_access<Space::shared, Store>;
  case Space::local:
    return &h_access<Space::local, Store>;
  case Space::konst:
    return &h_access<Space::konst, Store>;
  default:
    return &h_access<Space::generic, Store>;
  }
}

// ---- atomics ----
enum AtomOp : uint8_t { aadd, amin, amax, ainc, adec, aand, aor, axor, aexch, acas };

// `global`: atom.add.f32 on global memory flushes subnormal inputs and results (PTX ISA); on
// shared memory it does not.
template <class T> T atom_apply(AtomOp op, T old, T b, bool global) {
  if constexpr (std::is_same_v<T, float>) {
    switch (op) {
    case aadd:
      return global ? ftz32(canon32(ftz32(old) + ftz32(b))) : canon32(old + b);
    case amin:
      return std::fmin(old, b);
    case amax:
      return std::fmax(old, b);
    case aexch:
      return b;
    default:
      return old;
    }
  } else if constexpr (std::is_same_v<T, double>) {
    switch (op) {
    case aadd:
      return old + b;
    case amin:
      return std::fmin(old, b);
    case amax:
      return std::fmax(old, b);
    case aexch:
      return b;
    default:
      return old;
    }
  } else {
    using U = std::make_unsigned_t<T>;
    switch (op) {
    case aadd:
      return T(U(old) + U(b));
    case amin:
      return old < b ? old : b;
    case amax:
      return old > b ? old : b;
    case ainc:
      return U(old) >= U(b) ? T(0) : T(U(old) + 1);
    case adec:
      return (U(old) == 0 || U(old) > U(b)) ? b : T(U(old) - 1);
    case aand:
      return T(old & b);
    case aor:
      return T(old | b);
    case axor:
      return T(old ^ b);
    case aexch:
      return b;
    default:
      return old;
    }
  }
}

// Half-precision packed atomics (add on f16x2 / bf16x2 and scalar f16/bf16) on raw bits.
uint32_t half_add_bits(uint32_t a, uint32_t b, bool bf, bool x2) {
  const FFmt& f = bf ? kBF16 : kF16;
  auto one = [&](uint16_t x, uint16_t y) {
    double s;
    int t = two_sum_tail(fmt_to_double(x, f), fmt_to_double(y, f), s);
    return uint32_t(std::isnan(s) ? f.canon_nan : round_double(s, t, f, {Rnd::rn}));
  };
  uint32_t r = one(uint16_t(a), uint16_t(b));
  if (x2) r |= one(uint16_t(a >> 16), uint16_t(b >> 16)) << 16;
  return r;
}

template <class T>
uint64_t atomic_rmw(std::byte* p, AtomOp op, uint64_t bv, uint64_t cv, bool concurrent, Ty ty) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t,
                                  std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>>;
  Bits* q = reinterpret_cast<Bits*>(p);
  auto compute = [&](Bits old) -> Bits {
    if (ty == Ty::f16x2 || ty == Ty::bf16x2 || ty == Ty::f16 || ty == Ty::bf16) {
      if (op == aadd)
        return Bits(half_add_bits(uint32_t(old), uint32_t(bv), ty == Ty::bf16x2 || ty == Ty::bf16,
                                  ty == Ty::f16x2 || ty == Ty::bf16x2));
      if (op == aexch) return Bits(bv);
      if (op == acas) return old == Bits(bv) ? Bits(cv) : old;
      return old;
    }
    if (op == acas) return old == Bits(bv) ? Bits(cv) : old;
    T o = get<T>(uint64_t(old)), b = get<T>(bv);
    return Bits(put<T>(atom_apply<T>(op, o, b, concurrent)));
  };
  if (!concurrent) {
    Bits old = *q;
    *q = compute(old);
    return old;
  }
  std::atomic_ref<Bits> ref(*q);
  Bits old = ref.load(std::memory_order_relaxed);
  while (!ref.compare_exchange_weak(old, compute(old), std::memory_order_acq_rel,
                                    std::memory_order_relaxed)) {
  }
  return old;
}

using RmwFn = uint64_t (*)(std::byte*, AtomOp, uint64_t, uint64_t, bool, Ty);

RmwFn pick_rmw(Ty t) {
  switch (t) {
  case Ty::u32:
  case Ty::b32:
    return &atomic_rmw<uint32_t>;
  case Ty::s32:
    return &atomic_rmw<int32_t>;
  case Ty::u64:
  case Ty::b64:
    return &atomic_rmw<uint64_t>;
  case Ty::s64:
    return &atomic_rmw<int64_t>;
  case Ty::f32:
    return &atomic_rmw<float>;
  case Ty::f64:
    return &atomic_rmw<double>;
  case Ty::f16x2:
  case Ty::bf16x2:
    return &atomic_rmw<uint32_t>;
  case Ty::f16:
  case Ty::bf16:
  case Ty::b16:
  case Ty::u16:
    return &atomic_rmw<uint16_t>;
  default:
    return nullptr;
  }
}

// atom / red: in.r[0] dest (kNoRow for red), r[1] address base, r[2] b, r[3] c (cas); sub = op.
int h_atom(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const uint64_t* base = base_row(w, in);
  const uint64_t* b = w.row(in.r[2]);
  const uint64_t* c = in.r[3] != kNoRow ? w.row(in.r[3]) : b;
  RmwFn rmw = pick_rmw(in.ty);
  uint32_t n = in.width;
  uint64_t gaddr[kWarpSize], full[kWarpSize]; // full: the trace's addresses (global or shared)
  int ng = 0, nfull = 0;
  bool shared_atomic = false;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    uint64_t a = base[l] + uint64_t(in.imm);
    Space sp = in.space;
    std::byte* p;
    if (in.space == Space::global)
      p = global_ptr(x, w, in, l, a, n, true);
    else if (in.space == Space::shared)
      p = shared_ptr(x, w, in, l, a, n, true);
    else
      p = generic_ptr(x, w, in, l, a, n, true, sp);
    if (!p || x.L->stop.load(std::memory_order_relaxed)) return kStop;
    if (sp == Space::local) {
      const InstInfo& inf = info_of(x, in);
      return raise_fault(x, FaultKind::illegal_address,
                         thread_name(x, w, l) + " of " + block_name(x) +
                             " used an atomic on local memory" + at_line(inf.line),
                         inf.line);
    }
    // Shared memory belongs to one block, which one worker runs: no other thread can race.
    uint64_t old = rmw(p, AtomOp(in.sub), b[l], c[l], sp == Space::global, in.ty);
    if (in.r[0] != kNoRow) w.row(in.r[0])[l] = old;
    if (sp == Space::global) {
      gaddr[ng++] = a >> 5;
      full[nfull++] = a;
      if (x.last && x.last->writers && a >= x.last->data_lo && a < x.last->data_hi)
        note_writer(x, w, l, x.last, a);
    } else if (sp == Space::shared) {
      full[nfull++] = uint64_t(p - x.B->shared);
      shared_atomic = true;
    }
  }
  if (x.count && ng) {
    InstCount& ic = x.ic[pc_of(x, in)];
    ic.g_req += 1;
    ic.g_sect += count_distinct(gaddr, ng);
    ic.g_ideal += (uint64_t(ng) * n + 31) / 32;
  }
  if (w.trace && nfull) trace_atomic(w, full, nfull, n, shared_atomic);
  return kNext;
}

// atom / red .shared.add on 32-bit integers (a histogram's per-block counts): the common case of
// h_atom, lane by lane in the same order. Every lane aligned and inside shared memory, it adds in
// place (the block's shared memory is its worker's alone, as in h_atom) and traces the most lanes
// on one word with a table of counts per word; anything else takes h_atom, which says what went
// wrong. (A sampled run of puzzle 10's solution is two thirds shared atomics.)
int h_atom_shared_add32(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const uint64_t* base = base_row(w, in);
  const uint64_t* b = w.row(in.r[2]);
  const uint64_t size = x.B->shared_size, disp = uint64_t(in.imm);
  uint64_t addr[kWarpSize];
  bool inside = true;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm);
    const uint64_t a = base[l] + disp;
    addr[l] = a;
    inside &= a < size && size - a >= 4 && (a & 3) == 0;
  }
  if (!inside || x.L->stop.load(std::memory_order_relaxed)) return h_atom(x, w, in, m);
  std::byte* sh = x.B->shared;
  uint64_t* d = in.r[0] != kNoRow ? w.row(in.r[0]) : nullptr;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm);
    uint32_t old;
    std::memcpy(&old, sh + addr[l], 4);
    const uint32_t sum = old + uint32_t(b[l]);
    std::memcpy(sh + addr[l], &sum, 4);
    if (d) d[l] = old;
  }
  if (w.trace && w.trace->rec) {
    // trace_atomic's count for shared memory: the word whose lane count first passed the others'.
    auto& cnt = x.word_lanes;
    if (cnt.size() < size / 4 + 1) cnt.assign(size / 4 + 1, 0);
    uint32_t most = 0, hot = 0;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      const uint32_t word = uint32_t(addr[std::countr_zero(mm)] >> 2);
      if (++cnt[word] > most) most = cnt[word], hot = word;
    }
    for (uint32_t mm = m; mm; mm &= mm - 1) cnt[addr[std::countr_zero(mm)] >> 2] = 0;
    trace_shared_atomic(w, most, hot, 4);
  }
  return kNext;
}

// atom / red .v2/.v4/.v8 on global memory (compute capability 9.0): each element is an atomic of
// its own, in order. in.target: the values' register list; in.aux: the old values' list, or
// kNoRow for red (and for atom whose results are all sinks).
int h_atom_vec(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  if (!m) return kNext;
  const uint64_t* base = base_row(w, in);
  const uint32_t* vals = x.P->lists.data() + in.target;
  const uint32_t* olds = in.aux != kNoRow ? x.P->lists.data() + in.aux : nullptr;
  RmwFn rmw = pick_rmw(in.ty);
  const uint32_t n = in.width, v = in.vec;
  uint64_t gaddr[kWarpSize], full[kWarpSize];
  int ng = 0;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    const int l = std::countr_zero(mm);
    const uint64_t a = base[l] + uint64_t(in.imm);
    std::byte* p = global_ptr(x, w, in, l, a, n * v, true);
    if (!p || x.L->stop.load(std::memory_order_relaxed)) return kStop;
    for (uint32_t e = 0; e < v; ++e) {
      const uint64_t old = rmw(p + e * n, AtomOp(in.sub), w.row(vals[e])[l], 0, true, in.ty);
      if (olds) w.row(olds[e])[l] = old;
    }
    gaddr[ng] = a >> 5;
    full[ng++] = a;
    if (x.last && x.last->writers && a >= x.last->data_lo && a < x.last->data_hi)
      note_writer(x, w, l, x.last, a);
  }
  if (x.count && ng) {
    InstCount& ic = x.ic[pc_of(x, in)];
    ic.g_req += 1;
    ic.g_sect += count_distinct(gaddr, ng);
    ic.g_ideal += (uint64_t(ng) * n * v + 31) / 32;
  }
  if (w.trace && ng) trace_atomic(w, full, ng, n * v, false);
  return kNext;
}

// cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}: done synchronously.
int h_cp_async(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  const uint64_t* dst = w.row(in.r[0]);
  const uint64_t* src = w.row(in.r[1]);
  const uint64_t* srcsz = in.r[2] != kNoRow ? w.row(in.r[2]) : nullptr;
  uint32_t n = in.width;
  uint64_t gaddr[kWarpSize], saddr[kWarpSize], gfull[kWarpSize];
  int ng = 0;
  uint32_t smask = 0;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    int l = std::countr_zero(mm);
    uint64_t da = dst[l] + uint64_t(in.imm), sa = src[l] + uint64_t(int64_t(in.aux));
    uint32_t take = srcsz ? std::min<uint32_t>(uint32_t(srcsz[l]), n) : n;
    std::byte* d = shared_ptr(x, w, in, l, da, n, true);
    if (!d) return kStop;
    std::byte buf[16] = {};
    if (take) {
      std::byte* s = global_ptr(x, w, in, l, sa, n, false);
      if (!s) return kStop;
      std::memcpy(buf, s, take);
      gfull[ng] = sa;
      gaddr[ng++] = sa >> 5;
      ++w.gloads[l];
    }
    if (x.track_races && shared_race_check(x, w, in, l, da, n, true, buf) != kNext) return kStop;
    Warp::PendingCopy pc{uint32_t(d - x.B->shared), uint8_t(l), uint8_t(n), w.cp_groups[l], {}};
    std::memcpy(pc.data, buf, n);
    w.cp_pending.push_back(pc);
    saddr[l] = da;
    smask |= 1u << l;
  }
  if (x.count) {
    InstCount& ic = x.ic[pc_of(x, in)];
    if (ng) {
      ic.g_req += 1;
      ic.g_sect += count_distinct(gaddr, ng);
      ic.g_ideal += (uint64_t(ng) * n + 31) / 32;
      ic.g_bytes += uint64_t(ng) * n;
    }
    if (smask) {
      uint32_t ideal;
      ic.s_wave += shared_wavefronts(saddr, smask, n, ideal);
      ic.s_ideal += ideal;
    }
  }
  if (w.trace && ng) trace_global(w, gfull, ng, n, TraceKind::global);
  return kNext;
}

// cp.async.commit_group: the lanes' open groups close. cp.async.wait_group N: the lanes' copies
// land except those of their newest N groups; wait_all (aux 1): all of them.
int h_cp_async_commit(Exec&, Warp& w, const Inst&, uint32_t m) {
  each_lane(m, [&](int l) { ++w.cp_groups[l]; });
  return kNext;
}
int h_cp_async_wait(Exec& x, Warp& w, const Inst& in, uint32_t m) {
  land_copies(x, w, m, uint32_t(in.imm), in.aux == 1);
  return kNext;
}

int h_zero_dst(Exec&, Warp& w, const Inst& in, uint32_t m) { // createpolicy: an opaque policy value
  uint64_t* d = w.row(in.r[0]);
  each_lane(m, [&](int l) { d[l] = 0; });
  return kNext;
}

} // namespace

void land_copies(Exec& x, Warp& w, uint32_t lanes, uint32_t newest_kept, bool all) {
  if (w.cp_pending.empty()) return;
  auto lands = [&](const Warp::PendingCopy& c) {
    if (!((lanes >> c.lane) & 1)) return false;
    // wait_all commits the open group first; wait_group N keeps the newest N committed groups
    // (and the open one) in flight.
    return all || c.group + newest_kept < w.cp_groups[c.lane];
  };
  for (const auto& c : w.cp_pending)
    if (lands(c)) std::memcpy(x.B->shared + c.off, c.data, c.n);
  std::erase_if(w.cp_pending, lands);
}

bool decode_mem(Dec& D, Inst& I, InstInfo& info, const Opc& o, const ptx::Instr& in) {
  const std::string& b = o.base;
  if (b == "ld" || b == "ldu" || b == "st") {
    bool store = b == "st";
    o.only({"v2", "v4", "v8", "mmio", "unified"});
    Ty t = o.last_type();
    if (t == Ty::none) throw Unsupported(b + " needs a type");
    // With .L2::cache_hint a third operand names a createpolicy value: a hint the simulator takes
    // no notice of, as a GPU may.
    need_ops(in, o.has("L2::cache_hint") ? 3 : 2);
    I.vec = uint8_t(o.vec());
    I.width = uint8_t(ty_bytes(t));
    if (I.width == 16 || I.width * I.vec > 16) throw Unsupported("accesses wider than 16 bytes");
    if (t == Ty::s8 || t == Ty::s16) I.flags |= kSat; // sign-extend
    if (!store && (t == Ty::s8 || t == Ty::s16 || t == Ty::s32) && D.reg_bytes(op(in, 0)) == 8)
      I.flags |= kSat | kWide; // into a 64-bit register: sign-extend to 64 bits
    const auto& val = op(in, store ? 1 : 0);
    const auto& ad = op(in, store ? 0 : 1);
    Space declared = o.space();
    Dec::Addr a = D.addr(ad, declared);
    I.space = a.space;
    I.r[1] = a.base;
    I.imm = a.disp;
    if (I.vec > 1 || val.kind == ptx::Operand::Kind::vec) {
      I.target = store ? D.vec_rows(val, t, I.vec) : D.vec_rows(val, t, I.vec);
      if (!store) {
        // destinations must be registers (or sinks)
        for (auto& e : val.elems)
          if (e.kind != ptx::Operand::Kind::sink) D.dst(e);
      }
      if (I.vec == 1) I.vec = uint8_t(val.elems.size());
    } else {
      I.r[0] = store ? D.row(val, t) : D.dst(val);
    }
    if (a.space == Space::kparam) {
      if (store) throw Unsupported("stores to kernel parameters");
      I.fn = a.base == kNoRow ? h_ld_kparam : h_ld_kparam_reg;
      return true;
    }
    if (a.space == Space::fparam) throw Unsupported("parameter access");
    I.fn = store ? pick_access<true>(a.space) : pick_access<false>(a.space);
    if (a.space == Space::global && I.vec == 1 && val.kind != ptx::Operand::Kind::vec)
      if (ExecFn f = store ? pick_global1<true>(I.width) : pick_global1<false>(I.width)) I.fn = f;
    if (a.space == Space::shared && I.vec == 1 && val.kind != ptx::Operand::Kind::vec)
      if (ExecFn f = store ? pick_shared1<true>(I.width) : pick_shared1<false>(I.width)) I.fn = f;
    if (a.space == Space::global && I.vec > 1 && !store)
      if (ExecFn f = pick_global_vec_load(I.width, I.vec)) I.fn = f;
    if (a.space == Space::shared && I.vec > 1)
      if (ExecFn f = store ? pick_shared_vec<true>(I.width, I.vec)
                           : pick_shared_vec<false>(I.width, I.vec))
        I.fn = f;
    if (a.space == Space::local && I.vec == 1 && val.kind != ptx::Operand::Kind::vec)
      if (ExecFn f = store ? pick_local1<true>(I.width) : pick_local1<false>(I.width)) I.fn = f;
    if (a.space == Space::global || a.space == Space::generic)
      info.mem = store ? MemKind::store : MemKind::load;
    return true;
  }
  if (b == "atom" || b == "red") {
    bool red = b == "red";
    o.only({"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas", "noftz", "v2",
            "v4", "v8"});
    static const std::pair<const char*, AtomOp> ops[] = {
        {"add", aadd}, {"min", amin}, {"max", amax}, {"inc", ainc},   {"dec", adec},
        {"and", aand}, {"or", aor},   {"xor", axor}, {"exch", aexch}, {"cas", acas}};
    int which = -1;
    for (auto& [n, k] : ops)
      if (o.has(n)) which = k;
    if (which < 0) throw Unsupported(b + " needs an operation");
    Ty t = o.last_type();
    if (!pick_rmw(t)) throw Unsupported(b + " of type ." + std::string(ty_name(t)));
    if ((t == Ty::f32 || t == Ty::f64) && which != aadd && which != aexch && which != amin &&
        which != amax)
      throw Unsupported(b + " with this operation on a float type");
    I.sub = uint8_t(which);
    I.ty = t;
    I.width = uint8_t(ty_bytes(t));
    I.space = o.space();
    if (I.space != Space::global && I.space != Space::shared && I.space != Space::generic)
      throw Unsupported(b + " in this state space");
    if (o.vec() > 1) { // one atomic per element: sm_90's float and half vectors
      if (which != aadd && which != amin && which != amax)
        throw Unsupported(b + " on a vector with this operation");
      if (I.space != Space::global) throw Unsupported(b + " on a vector outside global memory");
      I.vec = uint8_t(o.vec());
      size_t k = 0;
      I.aux = kNoRow;
      if (!red) {
        const auto& d = op(in, k++);
        bool any = false;
        for (auto& e : d.elems)
          if (e.kind != ptx::Operand::Kind::sink) D.dst(e), any = true;
        if (any) I.aux = D.vec_rows(d, t, I.vec);
      }
      Dec::Addr a = D.addr(op(in, k++), I.space);
      I.r[1] = a.base;
      I.imm = a.disp;
      I.target = D.vec_rows(op(in, k++), t, I.vec);
      if (k != in.ops.size()) throw Unsupported(b + " has the wrong number of operands");
      I.fn = h_atom_vec;
      info.mem = MemKind::atomic;
      return true;
    }
    size_t k = 0;
    if (!red) I.r[0] = D.dst(op(in, k++));
    Dec::Addr a = D.addr(op(in, k++), I.space);
    I.space = a.space;
    I.r[1] = a.base;
    I.imm = a.disp;
    I.r[2] = D.row(op(in, k++), t);
    if (which == acas) I.r[3] = D.row(op(in, k++), t);
    if (k != in.ops.size()) throw Unsupported(b + " has the wrong number of operands");
    I.fn = h_atom;
    if (I.space == Space::shared && which == aadd && (t == Ty::u32 || t == Ty::s32 || t == Ty::b32))
      I.fn = h_atom_shared_add32;
    info.mem = MemKind::atomic;
    return true;
  }
  if (b == "cp") {
    if (o.has("async")) {
      if (o.has("commit_group")) {
        I.fn = h_cp_async_commit;
        return true;
      }
      if (o.has("wait_group") || o.has("wait_all")) {
        I.aux = o.has("wait_all") ? 1 : 0;
        if (!I.aux) {
          need_ops(in, 1);
          if (op(in, 0).kind != ptx::Operand::Kind::integer)
            throw Unsupported("cp.async.wait_group needs a constant");
          I.imm = int64_t(op(in, 0).bits);
          info.group_keep = uint8_t(std::min<uint64_t>(op(in, 0).bits, 255));
        }
        I.fn = h_cp_async_wait;
        return true;
      }
      if (o.has("bulk") || o.has("mbarrier")) throw Unsupported("cp.async.bulk / mbarrier forms");
      if (!o.has("shared") && !o.has("shared::cta"))
        throw Unsupported("cp.async to a space other than shared");
      I.r[0] = kNoRow;
      Dec::Addr da = D.addr(op(in, 0), Space::shared);
      Dec::Addr sa = D.addr(op(in, 1), Space::global);
      if (da.base == kNoRow || sa.base == kNoRow)
        throw Unsupported("cp.async with absolute addresses");
      I.r[0] = da.base;
      I.imm = da.disp;
      I.r[1] = sa.base;
      I.aux = uint32_t(int32_t(sa.disp));
      const auto& sz = op(in, 2);
      if (sz.kind != ptx::Operand::Kind::integer)
        throw Unsupported("cp.async size must be a constant");
      I.width = uint8_t(sz.bits);
      if (in.ops.size() > 3 && op(in, 3).kind != ptx::Operand::Kind::integer)
        I.r[2] = D.row(op(in, 3), Ty::u32);
      else if (in.ops.size() > 3)
        I.r[2] = D.const_row(op(in, 3).bits);
      I.fn = h_cp_async;
      info.mem = MemKind::load;
      return true;
    }
    return false;
  }
  if (b == "prefetch" || b == "prefetchu" || b == "fence" || b == "membar" || b == "discard" ||
      b == "applypriority" || b == "griddepcontrol") {
    I.fn = h_nop;
    return true;
  }
  if (b == "createpolicy") {
    I.r[0] = D.dst(op(in, 0));
    I.fn = h_zero_dst;
    return true;
  }
  return false;
}

} // namespace wb::sim
