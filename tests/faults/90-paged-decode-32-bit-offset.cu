// fault: paged decode attention with the row offset (page * 16 + slot) * Hkv * D in 32 bits: it wraps for pages past 131071 at Hkv = 8, D = 128
// puzzle: 25-paged-decode-attention
// sim: passed |
// gpu: wrong_answer,runtime_fault |
// gpu-sticky: maybe
// perf: yes
// note: The solution with one line changed. Right at every correctness size and at sim_perf (a pool of 128 pages); the perf pool has 139264 pages, and about 6% of the pages read start past element 2^31. On the H200 the wrapped offset lands outside every allocation: an illegal address, which ends the CUDA context (a wrong answer if it had landed inside one).
// @tune BLOCK=128
// @tune CHUNK=512
#include <cuda_bf16.h>

#define NW (BLOCK / 32)

// 2^x in one MUFU instruction (ex2.approx, relative error ~2^-22; 2^-inf = +0).
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float2 bf2(unsigned u) {
  return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&u));
}

// One step of a reduce-scatter over the lanes of a group: of the N values, the lane keeps the
// upper half if its bit `off` is set (else the lower), adds the partner's copy of that half, and
// sends the other half to the partner. x[0 .. N/2) holds the result.
template <int N>
__device__ __forceinline__ void rs_step(float* x, int off, int t) {
  const bool up = (t & off) != 0;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const float send = up ? x[i] : x[i + N / 2], keep = up ? x[i + N / 2] : x[i];
    x[i] = keep + __shfl_xor_sync(0xffffffffu, send, off);
  }
}

// One lane's online-softmax state for one query head: 8 elements of acc.
template <int D, int G, int U>
__device__ __forceinline__ void split_body(const __nv_bfloat16* __restrict__ q,
                                           const __nv_bfloat16* __restrict__ k,
                                           const __nv_bfloat16* __restrict__ v,
                                           const int* __restrict__ block_table,
                                           const int* __restrict__ lens, float* __restrict__ part,
                                           int Hq, int Hkv, int max_blocks, float* sm, int* pages) {
  constexpr int T = D / 8;   // lanes per key
  constexpr int KW = 32 / T; // keys per warp per load
  constexpr int SR = D + 4;  // one warp's state for one head in shared memory: m, l, 2 spare, acc
  const int s = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int n = lens[b];
  const int k0 = s * CHUNK;
  if (k0 >= n) return; // the combine reads only cdiv(lens[b], CHUNK) partials
  const int k1 = min(k0 + CHUNK, n);
  // The chunk's page numbers, only those of pages that hold keys (k0 is a multiple of 16).
  for (int i = threadIdx.x; i < (k1 - k0 + 15) / 16; i += BLOCK)
    pages[i] = block_table[(long long)b * max_blocks + k0 / 16 + i];
  __syncthreads();
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int grp = lane / T, t = lane % T;

  // q rows of the group, this lane's 8 elements, scaled into base-2 logits.
  const float qs = 1.4426950408889634f / sqrtf((float)D);
  float qf[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const uint4 r = *reinterpret_cast<const uint4*>(q + ((long long)b * Hq + h * G + g) * D + t * 8);
    const unsigned* u = &r.x;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = bf2(u[e]);
      qf[g][2 * e] = f.x * qs;
      qf[g][2 * e + 1] = f.y * qs;
    }
  }
  float m[G], l[G], acc[G][8];
  float m_own = -INFINITY, l_own = 0.f; // reduce-scatter path: the running max and sum of head t % G
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[g][e] = 0.f;
  }

  const __nv_bfloat16* kb = k + (long long)h * D + t * 8; // + the key's row, below
  const __nv_bfloat16* vb = v + (long long)h * D + t * 8;
  for (int base = k0; base < k1; base += NW * KW * U) {
    uint4 kr[U], vr[U];
    int j[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      j[u] = base + (u * NW + w) * KW + grp;
      if (j[u] < k1) {
        const int jj = j[u] - k0;
        const int row = (pages[jj >> 4] * 16 + (jj & 15)) * Hkv * D; // the bug: 32 bits
        kr[u] = __ldg(reinterpret_cast<const uint4*>(kb + row));
        vr[u] = __ldg(reinterpret_cast<const uint4*>(vb + row));
      } else {
        kr[u] = make_uint4(0, 0, 0, 0);
        vr[u] = make_uint4(0, 0, 0, 0);
      }
    }
    float sc[U][G];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float kf[8];
      const unsigned* ku = &kr[u].x;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 f = bf2(ku[e]);
        kf[2 * e] = f.x;
        kf[2 * e + 1] = f.y;
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float d = 0.f;
#pragma unroll
        for (int e = 0; e < 8; ++e) d = fmaf(qf[g][e], kf[e], d);
        sc[u][g] = d;
      }
    }
    if constexpr (U * G == T) {
      // Reduce-scatter: U * G partial sums over the T lanes of the group. Each step sends half of
      // the values to the partner lane and keeps the other half: 15 shuffles for 16 sums instead
      // of 64, and afterwards lane t of the group holds the whole score of key u = t / G, head
      // g = t % G, so the softmax of that score runs once, on one lane, not on all T.
      float x[U * G];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int g = 0; g < G; ++g) x[u * G + g] = sc[u][g];
      rs_step<T>(x, T / 2, t);
      if constexpr (T >= 4) rs_step<T / 2>(x, T / 4, t);
      if constexpr (T >= 8) rs_step<T / 4>(x, T / 8, t);
      if constexpr (T >= 16) rs_step<T / 8>(x, T / 16, t);
      const int uo = t / G;
      const int jo = base + (uo * NW + w) * KW + grp;
      const float so = jo < k1 ? x[0] : -INFINITY;
      float mg = so; // the max over this round's U keys of head t % G
#pragma unroll
      for (int off = G; off < T; off <<= 1) mg = fmaxf(mg, __shfl_xor_sync(0xffffffffu, mg, off));
      const float mo_old = m_own;
      m_own = fmaxf(m_own, mg);
      const float p_own = m_own == -INFINITY ? 0.f : ex2(so - m_own); // ex2(-inf) = 0
      if (m_own != -INFINITY) l_own = l_own * ex2(mo_old - m_own) + p_own;
      const int gbase = lane & ~(T - 1); // the group's first lane
      float vf[U][8];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const unsigned* vu = &vr[u].x;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float2 f = bf2(vu[e]);
          vf[u][2 * e] = f.x;
          vf[u][2 * e + 1] = f.y;
        }
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const float mx = fmaxf(m[g], __shfl_sync(0xffffffffu, mg, gbase + g));
        if (mx > m[g]) { // the max moved (from -inf too: acc is 0 then, and ex2(-inf) = 0)
          const float c = ex2(m[g] - mx);
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[g][e] *= c;
          m[g] = mx;
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const float pw = __shfl_sync(0xffffffffu, p_own, gbase + u * G + g);
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[g][e] = fmaf(pw, vf[u][e], acc[g][e]);
        }
      }
    } else {
#pragma unroll
      for (int off = T / 2; off > 0; off >>= 1)
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int g = 0; g < G; ++g) sc[u][g] += __shfl_xor_sync(0xffffffffu, sc[u][g], off);
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (j[u] >= k1)
#pragma unroll
          for (int g = 0; g < G; ++g) sc[u][g] = -INFINITY;

      float vf[U][8];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const unsigned* vu = &vr[u].x;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float2 f = bf2(vu[e]);
          vf[u][2 * e] = f.x;
          vf[u][2 * e + 1] = f.y;
        }
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float mx = m[g];
#pragma unroll
        for (int u = 0; u < U; ++u) mx = fmaxf(mx, sc[u][g]);
        if (mx == -INFINITY) continue; // no key yet for this lane group
        if (mx > m[g]) {               // the max moved: rescale what is summed so far
          const float c = ex2(m[g] - mx);
          l[g] *= c;
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[g][e] *= c;
          m[g] = mx;
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const float p = ex2(sc[u][g] - mx);
          l[g] += p;
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[g][e] = fmaf(p, vf[u][e], acc[g][e]);
        }
      }
    }
  }
  if constexpr (U * G == T) {
    // l of head g: the lanes t % G == g each hold a part; add them up and hand each head's total to
    // every lane of the group.
#pragma unroll
    for (int off = G; off < T; off <<= 1) l_own += __shfl_xor_sync(0xffffffffu, l_own, off);
    const int gbase = lane & ~(T - 1);
#pragma unroll
    for (int g = 0; g < G; ++g) l[g] = __shfl_sync(0xffffffffu, l_own, gbase + g);
  }

  // Merge the lane groups of the warp (lanes t, t + T, t + 2T, ... hold the same elements).
#pragma unroll
  for (int off = T; off < 32; off <<= 1) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const float mo = __shfl_xor_sync(0xffffffffu, m[g], off);
      const float lo = __shfl_xor_sync(0xffffffffu, l[g], off);
      const float mx = fmaxf(m[g], mo);
      const float c1 = mx == -INFINITY ? 0.f : ex2(m[g] - mx);
      const float c2 = mx == -INFINITY ? 0.f : ex2(mo - mx);
      l[g] = l[g] * c1 + lo * c2;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float ao = __shfl_xor_sync(0xffffffffu, acc[g][e], off);
        acc[g][e] = acc[g][e] * c1 + ao * c2;
      }
      m[g] = mx;
    }
  }
  if (grp == 0) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float* r = sm + (w * G + g) * SR;
      if (t == 0) r[0] = m[g], r[1] = l[g];
      *reinterpret_cast<float4*>(r + 4 + t * 8) = make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
      *reinterpret_cast<float4*>(r + 8 + t * 8) = make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7]);
    }
  }
  __syncthreads();
  // Merge the warps and write the partial: acc to part[(b, hq, s)][0 .. D), (m, l) after all accs.
  const int S = gridDim.x;
  const long long nacc = (long long)gridDim.z * Hq * S * D;
  for (int i = threadIdx.x; i < G * D; i += BLOCK) {
    const int g = i / D, d = i % D;
    float mx = -INFINITY;
#pragma unroll
    for (int x = 0; x < NW; ++x) mx = fmaxf(mx, sm[(x * G + g) * SR]);
    float lt = 0.f, at = 0.f;
#pragma unroll
    for (int x = 0; x < NW; ++x) {
      const float* r = sm + (x * G + g) * SR;
      const float c = r[0] == -INFINITY ? 0.f : ex2(r[0] - mx);
      lt += r[1] * c;
      at += r[4 + d] * c;
    }
    const long long p = ((long long)b * Hq + h * G + g) * S + s;
    part[p * D + d] = at;
    if (d == 0) {
      part[nacc + 2 * p] = mx;
      part[nacc + 2 * p + 1] = lt;
    }
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK, 512 / BLOCK)
decode_split(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
             const __nv_bfloat16* __restrict__ v, const int* __restrict__ block_table,
             const int* __restrict__ lens, float* __restrict__ part,
             __nv_bfloat16* __restrict__ out, int B, int Hq, int Hkv, int D, int max_blocks) {
  __shared__ __align__(16) float sm[NW * 8 * (128 + 4)];
  __shared__ int pages[CHUNK / 16];
  const int G = Hq / Hkv;
  // D is 64 or 128 and G is 1, 2, 4 or 8 (the puzzle's promise): one specialised body each, so
  // that the per-head arrays live in registers. Fewer keys in flight where G is large.
  if (D == 128) {
    if (G == 1) split_body<128, 1, 8>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm, pages);
    else if (G == 2) split_body<128, 2, 4>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm, pages);
    else if (G == 4) split_body<128, 4, 4>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm, pages);
    else split_body<128, 8, 2>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm, pages);
  } else {
    if (G == 1) split_body<64, 1, 8>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm, pages);
    else if (G == 2) split_body<64, 2, 4>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm, pages);
    else if (G == 4) split_body<64, 4, 4>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm, pages);
    else split_body<64, 8, 2>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm, pages);
  }
}

extern "C" __global__ void decode_combine(const __nv_bfloat16* __restrict__ q,
                                          const __nv_bfloat16* __restrict__ k,
                                          const __nv_bfloat16* __restrict__ v,
                                          const int* __restrict__ block_table,
                                          const int* __restrict__ lens, float* __restrict__ part,
                                          __nv_bfloat16* __restrict__ out, int B, int Hq, int Hkv,
                                          int D, int max_blocks) {
  const int hq = blockIdx.x, b = blockIdx.y, d = threadIdx.x, L = 16 * max_blocks;
  const int S = (L + CHUNK - 1) / CHUNK, ns = (lens[b] + CHUNK - 1) / CHUNK;
  const long long p0 = ((long long)b * Hq + hq) * S;
  const float* ml = part + (long long)B * Hq * S * D + 2 * p0;
  if (d >= D) return;
  float mx = -INFINITY;
  for (int s = 0; s < ns; ++s) mx = fmaxf(mx, ml[2 * s]);
  float lt = 0.f, at = 0.f;
  for (int s = 0; s < ns; ++s) {
    const float c = ex2(ml[2 * s] - mx); // every partial saw at least one key: m is finite
    lt += ml[2 * s + 1] * c;
    at += part[(p0 + s) * D + d] * c;
  }
  out[((long long)b * Hq + hq) * D + d] = __float2bfloat16(at / lt);
}
