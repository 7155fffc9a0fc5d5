// Perf-model kernel · 24 decode attention on the tensor cores
//
// QK^T and PV on mma.sync with P as two bf16 terms, one warp a block, a 3-stage cp.async ring,
// CHUNK 512 (a tune sets 1024, 2048): the instructions per key fall 3.4x and the time does not.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
// @tune BLOCK=32
// @tune CHUNK=512

#include <cuda_bf16.h>

#ifndef TK
#define TK 16 // keys per step (a multiple of 16)
#endif
#ifndef NS
#define NS 3 // ring stages
#endif
#ifndef PSPLIT
#define PSPLIT 1 // P as bf16 hi + lo: two P V products
#endif

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N_> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N_) : "memory");
}
__device__ __forceinline__ void ldsm_x4(unsigned* r, const void* p) {
  unsigned a = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ void ldsm_x4_t(unsigned* r, const void* p) {
  unsigned a = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ void mma_bf16(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<unsigned*>(&h);
}
// lo + hi as bf16 pairs: hi the rounded values, lo what rounding left out (rounded too).
__device__ __forceinline__ void split_bf16(float a, float b, unsigned& hi, unsigned& lo) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  const float2 f = __bfloat1622float2(h);
  hi = *reinterpret_cast<unsigned*>(&h);
  lo = pack_bf16(a - f.x, b - f.y);
}

constexpr int LDM = 128 + 8; // halves per shared row at the largest D (padding: conflict-free ldmatrix)

template <int D>
__device__ __forceinline__ void split_body(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                                           const __nv_bfloat16* __restrict__ v, const int* __restrict__ lens,
                                           float* __restrict__ part, int Hq, int Hkv, int L,
                                           __nv_bfloat16 (*ring)[2][TK][LDM]) {
  constexpr int KD = D / 16, CH = D / 8, RP = 32 / CH;
  static_assert(TK % RP == 0 && TK % 16 == 0, "tile");
  const int s = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int n = lens[b], k0 = s * CHUNK;
  if (k0 >= n) return;
  const int k1 = min(k0 + CHUNK, n);
  const int G = Hq / Hkv;
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  const long long rs = (long long)Hkv * D;

  // Copies: lane takes 16-byte chunk lane % CH of rows lane / CH + i * RP of each tile.
  const int cr = lane / CH, cc = (lane % CH) * 8;
  const long long g0 = ((long long)b * L * Hkv + h) * D + cc;
  const int nst = (k1 - k0 + TK - 1) / TK;
  auto load = [&](int st) {
    __nv_bfloat16* Kb = &ring[st % NS][0][cr][cc];
    __nv_bfloat16* Vb = &ring[st % NS][1][cr][cc];
    const int key0 = k0 + st * TK + cr;
    const __nv_bfloat16* Kg = k + g0 + (long long)key0 * rs;
    const __nv_bfloat16* Vg = v + g0 + (long long)key0 * rs;
    if (k0 + (st + 1) * TK <= k1) {
#pragma unroll
      for (int i = 0; i < TK / RP; ++i) {
        cp_async16(Kb + i * RP * LDM, Kg + i * RP * rs, 16);
        cp_async16(Vb + i * RP * LDM, Vg + i * RP * rs, 16);
      }
    } else {
#pragma unroll
      for (int i = 0; i < TK / RP; ++i) {
        const bool in = key0 + i * RP < k1; // past k1: zero-fill, nothing read
        cp_async16(Kb + i * RP * LDM, in ? Kg + i * RP * rs : k, in ? 16 : 0);
        cp_async16(Vb + i * RP * LDM, in ? Vg + i * RP * rs : v, in ? 16 : 0);
      }
    }
  };
#pragma unroll
  for (int st = 0; st < NS - 1; ++st) {
    if (st < nst) load(st);
    cp_async_commit();
  }

  // Q as A fragments: row r = query head h * G + r for r < G, zero rows after.
  unsigned qa[KD][4];
  {
    const __nv_bfloat16* q0 = q + ((long long)b * Hq + h * G + g) * D + 2 * t;
    const __nv_bfloat16* q1 = q0 + 8 * D;
#pragma unroll
    for (int kk = 0; kk < KD; ++kk) {
      qa[kk][0] = g < G ? *reinterpret_cast<const unsigned*>(q0 + kk * 16) : 0u;
      qa[kk][2] = g < G ? *reinterpret_cast<const unsigned*>(q0 + kk * 16 + 8) : 0u;
      qa[kk][1] = g + 8 < G ? *reinterpret_cast<const unsigned*>(q1 + kk * 16) : 0u;
      qa[kk][3] = g + 8 < G ? *reinterpret_cast<const unsigned*>(q1 + kk * 16 + 8) : 0u;
    }
  }
  float o[D / 8][4];
#pragma unroll
  for (int j = 0; j < D / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  const float sl2 = 1.4426950408889634f / sqrtf((float)D);

  for (int st = 0; st < nst; ++st) {
    if (st + NS - 1 < nst) load(st + NS - 1); // into the stage consumed last step
    cp_async_commit();
    cp_async_wait<NS - 1>();
    __syncwarp();
    const __nv_bfloat16* Kb = &ring[st % NS][0][0][0];
    const __nv_bfloat16* Vb = &ring[st % NS][1][0][0];

    float sc[TK / 8][4];
#pragma unroll
    for (int j = 0; j < TK / 8; ++j) sc[j][0] = sc[j][1] = sc[j][2] = sc[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KD; ++kk)
#pragma unroll
      for (int np = 0; np < TK / 16; ++np) {
        unsigned bb[4];
        ldsm_x4(bb, Kb + (np * 16 + (lane / 16) * 8 + lane % 8) * LDM + kk * 16 + ((lane / 8) % 2) * 8);
        mma_bf16(sc[2 * np], qa[kk], bb[0], bb[1]);
        mma_bf16(sc[2 * np + 1], qa[kk], bb[2], bb[3]);
      }

    const int key0 = k0 + st * TK;
    const bool edge = key0 + TK > k1;
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int j = 0; j < TK / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = sc[j][e] * sl2;
        if (edge && key0 + j * 8 + 2 * t + (e & 1) >= k1) x = -INFINITY;
        sc[j][e] = x;
        mx[e / 2] = fmaxf(mx[e / 2], x);
      }
    float alpha[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1));
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
      alpha[i] = ex2(m[i] - mx[i]); // 0 on the first step (m = -inf, mx finite: key0 < k1)
      m[i] = mx[i];
      l[i] *= alpha[i];
    }
#pragma unroll
    for (int j = 0; j < TK / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float p = ex2(sc[j][e] - m[e / 2]);
        sc[j][e] = p;
        l[e / 2] += p;
      }
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      o[j][0] *= alpha[0];
      o[j][1] *= alpha[0];
      o[j][2] *= alpha[1];
      o[j][3] *= alpha[1];
    }
#pragma unroll
    for (int kk = 0; kk < TK / 16; ++kk) {
      unsigned ph[4], pl[4];
#if PSPLIT
      split_bf16(sc[2 * kk][0], sc[2 * kk][1], ph[0], pl[0]);
      split_bf16(sc[2 * kk][2], sc[2 * kk][3], ph[1], pl[1]);
      split_bf16(sc[2 * kk + 1][0], sc[2 * kk + 1][1], ph[2], pl[2]);
      split_bf16(sc[2 * kk + 1][2], sc[2 * kk + 1][3], ph[3], pl[3]);
#else
      ph[0] = pack_bf16(sc[2 * kk][0], sc[2 * kk][1]);
      ph[1] = pack_bf16(sc[2 * kk][2], sc[2 * kk][3]);
      ph[2] = pack_bf16(sc[2 * kk + 1][0], sc[2 * kk + 1][1]);
      ph[3] = pack_bf16(sc[2 * kk + 1][2], sc[2 * kk + 1][3]);
#endif
#pragma unroll
      for (int dp = 0; dp < KD; ++dp) {
        unsigned bb[4];
        ldsm_x4_t(bb, Vb + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * LDM + dp * 16 + (lane / 16) * 8);
        mma_bf16(o[2 * dp], ph, bb[0], bb[1]);
        mma_bf16(o[2 * dp + 1], ph, bb[2], bb[3]);
#if PSPLIT
        mma_bf16(o[2 * dp], pl, bb[0], bb[1]);
        mma_bf16(o[2 * dp + 1], pl, bb[2], bb[3]);
#endif
      }
    }
    __syncwarp(); // every lane's ldmatrix of this stage is done before it is refilled
  }
  cp_async_wait<0>();

#pragma unroll
  for (int i = 0; i < 2; ++i) {
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
  }
  const int S = gridDim.x;
  const long long nacc = (long long)gridDim.z * Hq * S * D;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = g + 8 * i;
    if (r < G) {
      const long long p = ((long long)b * Hq + h * G + r) * S + s;
      float* dst = part + p * D + 2 * t;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) *reinterpret_cast<float2*>(dst + j * 8) = make_float2(o[j][2 * i], o[j][2 * i + 1]);
      if (t == 0) *reinterpret_cast<float2*>(part + nacc + 2 * p) = make_float2(m[i], l[i]);
    }
  }
}

extern "C" __global__ void __launch_bounds__(32)
decode_split(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
             const __nv_bfloat16* __restrict__ v, const int* __restrict__ lens, float* __restrict__ part,
             __nv_bfloat16* __restrict__ out, int B, int Hq, int Hkv, int L, int D) {
  static_assert(BLOCK == 32, "one warp per block: the ring is the warp's own");
  __shared__ __align__(128) __nv_bfloat16 ring[NS][2][TK][LDM];
  if (D == 128) split_body<128>(q, k, v, lens, part, Hq, Hkv, L, ring);
  else split_body<64>(q, k, v, lens, part, Hq, Hkv, L, ring);
}

extern "C" __global__ void decode_combine(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                                          const __nv_bfloat16* __restrict__ v, const int* __restrict__ lens,
                                          float* __restrict__ part, __nv_bfloat16* __restrict__ out, int B, int Hq,
                                          int Hkv, int L, int D) {
  const int hq = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
  const int S = (L + CHUNK - 1) / CHUNK, ns = (lens[b] + CHUNK - 1) / CHUNK;
  const long long p0 = ((long long)b * Hq + hq) * S;
  const float* ml = part + (long long)B * Hq * S * D + 2 * p0;
  if (d >= D) return;
  float mx = -INFINITY;
  for (int s = 0; s < ns; ++s) mx = fmaxf(mx, ml[2 * s]);
  float lt = 0.f, at = 0.f;
  for (int s = 0; s < ns; ++s) {
    const float c = ex2(ml[2 * s] - mx);
    lt += ml[2 * s + 1] * c;
    at += part[(p0 + s) * D + d] * c;
  }
  out[((long long)b * Hq + hq) * D + d] = __float2bfloat16(at / lt);
}
