// Solution · 24 decode attention (split-K, "flash-decoding"), bf16 in and out, f32 inside
//
// What: decode_split gives each block CHUNK = 512 keys of one (sequence b, KV head h) pair and
// all G = Hq / Hkv query heads that share that KV head. Inside the block (4 warps), a key's K row
// (D bf16 = 128 or 256 bytes) is read by a group of D/8 lanes, one 16-byte load each, so a warp
// reads 32/(D/8) keys per load instruction; each lane group takes U keys at once (U K loads and U
// V loads in flight per lane before any arithmetic). Each lane holds its 8 elements of the G
// query rows (pre-scaled by log2(e)/sqrt(D), so exp becomes exp2) and forms U x G partial dot
// products. Where U x G equals the group's D/8 lanes (G = 4, U = 4 at D = 128: the perf path) a
// reduce-scatter finishes them: 4 steps in which each lane sends half of its values to a partner
// and keeps the other half, 15 shuffles for 16 sums (a plain xor tree takes 64), after which lane
// t holds the whole score of key t / G, head t % G. Its max over the round's keys and its weight
// exp2(s - m) are computed once, on that lane, and 16 shuffles hand the weights to the group.
// (Other shapes use the plain xor tree, every lane computing every weight.) Each lane keeps, per
// query head, the running max m and its 8 elements of acc = sum exp2(s - m) * v; the sum l is kept
// per owning lane and gathered at the end. Keys past lens[b] are never loaded
// (their score is -inf and their V stays 0, so NaN in the padding cannot leak in as 0 * NaN).
// At the end of the chunk the lane groups merge their states with shuffles, the warps through
// shared memory, and the block writes one (m, l) pair and D sums per query head to the workspace.
// decode_combine, one block per (query head, sequence), rescales the cdiv(lens[b], CHUNK)
// partials to their common max and writes acc / l as bf16.
// Run:  warpbook check 24-decode-attention solutions/24-decode-attention.cu
//       warpbook predict 24-decode-attention solutions/24-decode-attention.cu
//
// Why: decode reads the whole KV cache to produce one token, 4 FLOPs per 2-byte element per query
// head: at G = 4 that is 8 FLOPs per 4 bytes of K and V, far below any GPU's ridge point, so the
// only goal is DRAM bandwidth. Three things get there. (1) Each K and V element is loaded once
// for all G query heads of its group (that reuse is what GQA buys: 4x less traffic than MHA with
// 32 KV heads). (2) Enough blocks: one block per (b, h) is B * Hkv blocks, 8 at B = 1, against
// 132 SMs; splitting every sequence into chunks of CHUNK keys gives B * Hkv * L / CHUNK blocks
// whatever B is (4096 at the perf size, 128 at B = 1, L = 8192), at the price of a combine that
// reads D + 2 floats per (b, query head, chunk): 1.6% of the cache's bytes at CHUNK = 512,
// D = 128, G = 4. (3) 16-byte loads, U of each per lane before the arithmetic, so each SM has
// some 40 KB of reads in flight.
// The softmax is base 2 with the scale folded into q: one ex2.approx per score, and the rescale
// of acc only when the running max moves. The arithmetic is the other limit: per key and lane,
// 16 bf16-to-f32 conversions, 64 FMAs for the dots, 64 for acc. With the xor tree, 128 shuffles
// and adds per round plus every lane computing all 16 weights made the kernel issue-bound
// (predicted 632 us); the reduce-scatter cut the instructions by about a quarter (predicted 520
// us). Registers: 128 at __launch_bounds__(128, 4); ptxas (sm_90) reports no spills for the G <= 4
// paths. The G = 8 paths spill some 340 bytes (q and acc alone are 128 floats per lane): correct,
// not tuned. CHUNK = 1024 predicts 2-3% faster at the perf size but gives only 64 blocks at B = 1.
//
// Napkin maths at the perf size (B 64, Hq 32, Hkv 8, L 8192, D 128, every lens = L): K and V are
// 64 x 8192 x 8 x 128 x 2 bytes x 2 = 2.15 GB, read once; 8.6 GFLOP. Least time: 447 us on the
// H200 (4.8 TB/s), 1.05 ms on an A100 80 GB (2.04 TB/s), 2.13 ms on an RTX 4090 (1.01 TB/s).
// Predicted by `warpbook predict` for the H200: 528 us, 4.07 TB/s (85% of the datasheet; the
// tool's speed of light, against the measured DRAM ceiling, calls it 89%).
// Measured on the H200 (`warpbook check`, 2026-11-24): 542.0 us, 3.96 TB/s, 86.8% of the speed of
// light against the ceilings `warpbook probe` measured; gold.
// Side by side on the H200 (`warpbook check`, 2026-11-25, median): this file 537.0 us; CHUNK =
// 1024 524.0 us, 2.4% faster here but 64 blocks at B = 1, L = 8192, half the SMs idle, so 512
// stays; an L2::256B prefetch hint on the K and V loads 542.6 us. A tensor-core version (QK^T and
// PV on mma.sync with P as two bf16 terms, one warp per block, a 3-stage cp.async ring: the
// instructions per key fell 3.4x) measured 544.4, 539.5 and 527.1 us at CHUNK 512, 1024 and 2048:
// the FMAs were not what held it back. What does: bytes in flight. `warpbook probe` reads DRAM at
// 4.09 TB/s with 32 KiB in flight per SM and 4.51 TB/s with 128 KiB; this kernel keeps about
// 40 KiB. PyTorch's SDPA took 499.9 us the same day: 0.93x of it, short of issue 12's bar.
// Session 3 (2026-11-25, beside this file's 542.9 and 542.5 us): the grid's blocks taking their
// (chunk, KV head) pairs head-fastest, so that neighbouring blocks read neighbouring 256-byte rows
// of the [B, L, Hkv, D] cache, 540.5 us (529.3 at CHUNK 1024); with that, an L1 or L2 prefetch of
// the next round's rows (one per 128-byte line, no registers) 566.1 and 565.7 us.
// measured: 541.98 us on NVIDIA H200
// @tune BLOCK=128
// @tune CHUNK=512

#include <cuda_bf16.h>

#define NW (BLOCK / 32)
#define LB_THREADS 512 // __launch_bounds__ asks for LB_THREADS / BLOCK blocks an SM

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
template <int N> __device__ __forceinline__ void rs_step(float* x, int off, int t) {
  const bool up = (t & off) != 0;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const float send = up ? x[i] : x[i + N / 2], keep = up ? x[i + N / 2] : x[i];
    x[i] = keep + __shfl_xor_sync(0xffffffffu, send, off);
  }
}

// One lane's online-softmax state for one query head: 8 elements of acc.
template <int D, int G, int U>
__device__ __forceinline__ void
split_body(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
           const __nv_bfloat16* __restrict__ v, const int* __restrict__ lens,
           float* __restrict__ part, int Hq, int Hkv, int L, float* sm) {
  constexpr int T = D / 8;   // lanes per key
  constexpr int KW = 32 / T; // keys per warp per load
  constexpr int SR = D + 4;  // one warp's state for one head in shared memory: m, l, 2 spare, acc
  const int s = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int n = lens[b];
  const int k0 = s * CHUNK;
  if (k0 >= n) return; // the combine reads only cdiv(lens[b], CHUNK) partials
  const int k1 = min(k0 + CHUNK, n);
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int grp = lane / T, t = lane % T;

  // q rows of the group, this lane's 8 elements, scaled into base-2 logits.
  const float qs = 1.4426950408889634f / sqrtf((float)D);
  float qf[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const uint4 r =
        *reinterpret_cast<const uint4*>(q + ((long long)b * Hq + h * G + g) * D + t * 8);
    const unsigned* u = &r.x;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = bf2(u[e]);
      qf[g][2 * e] = f.x * qs;
      qf[g][2 * e + 1] = f.y * qs;
    }
  }
  float m[G], l[G], acc[G][8];
  float m_own = -INFINITY,
        l_own = 0.f; // reduce-scatter path: the running max and sum of head t % G
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[g][e] = 0.f;
  }

  const long long rs = (long long)Hkv * D; // elements from one key to the next
  const __nv_bfloat16* kb = k + ((long long)b * L * Hkv + h) * D + t * 8;
  const __nv_bfloat16* vb = v + ((long long)b * L * Hkv + h) * D + t * 8;
  for (int base = k0; base < k1; base += NW * KW * U) {
    uint4 kr[U], vr[U];
    int j[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      j[u] = base + (u * NW + w) * KW + grp;
      if (j[u] < k1) {
        kr[u] = __ldg(reinterpret_cast<const uint4*>(kb + j[u] * rs));
        vr[u] = __ldg(reinterpret_cast<const uint4*>(vb + j[u] * rs));
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
      *reinterpret_cast<float4*>(r + 4 + t * 8) =
          make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
      *reinterpret_cast<float4*>(r + 8 + t * 8) =
          make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7]);
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

extern "C" __global__ void __launch_bounds__(BLOCK, LB_THREADS / BLOCK)
    decode_split(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                 const __nv_bfloat16* __restrict__ v, const int* __restrict__ lens,
                 float* __restrict__ part, __nv_bfloat16* __restrict__ out, int B, int Hq, int Hkv,
                 int L, int D) {
  __shared__ __align__(16) float sm[NW * 8 * (128 + 4)];
  const int G = Hq / Hkv;
  // D is 64 or 128 and G is 1, 2, 4 or 8 (the puzzle's promise): one specialised body each, so
  // that the per-head arrays live in registers. Fewer keys in flight where G is large.
  if (D == 128) {
    if (G == 1)
      split_body<128, 1, 8>(q, k, v, lens, part, Hq, Hkv, L, sm);
    else if (G == 2)
      split_body<128, 2, 4>(q, k, v, lens, part, Hq, Hkv, L, sm);
    else if (G == 4)
      split_body<128, 4, 4>(q, k, v, lens, part, Hq, Hkv, L, sm);
    else
      split_body<128, 8, 2>(q, k, v, lens, part, Hq, Hkv, L, sm);
  } else {
    if (G == 1)
      split_body<64, 1, 8>(q, k, v, lens, part, Hq, Hkv, L, sm);
    else if (G == 2)
      split_body<64, 2, 4>(q, k, v, lens, part, Hq, Hkv, L, sm);
    else if (G == 4)
      split_body<64, 4, 4>(q, k, v, lens, part, Hq, Hkv, L, sm);
    else
      split_body<64, 8, 2>(q, k, v, lens, part, Hq, Hkv, L, sm);
  }
}

extern "C" __global__ void decode_combine(const __nv_bfloat16* __restrict__ q,
                                          const __nv_bfloat16* __restrict__ k,
                                          const __nv_bfloat16* __restrict__ v,
                                          const int* __restrict__ lens, float* __restrict__ part,
                                          __nv_bfloat16* __restrict__ out, int B, int Hq, int Hkv,
                                          int L, int D) {
  const int hq = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
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
