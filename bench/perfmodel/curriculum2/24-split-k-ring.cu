// Perf-model kernel · 24 decode attention, split-K through a cp.async ring
//
// 24-split-k-registers.cu with each lane cp.async'ing the K and V pieces it will use into its own
// slots of a ring in shared memory one round ahead (STAGES rounds, no barrier, only
// cp.async.wait_group), one 512-key chunk a block, 16 partials a head. FMAX > 1: where the grid
// has blocks to spare, each working block takes up to FMAX chunks and the other blocks of every
// FMAX exit at once: the same bytes and arithmetic at every FMAX.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
// measured: 502.69 us on NVIDIA H200
// @tune BLOCK=128
// @tune CHUNK=512
#define STAGES 2       // rounds in the ring: one computed while the next one's copies are in flight
#define FMAX 1         // chunks a working block may take
#define MINBLOCKS 2048 // FMAX > 1: blocks the grid keeps at least, F chunks each

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

// 16 bytes from global into this thread's shared slot, in flight until cp.async.wait_group;
// a source size of 0 writes zeros and reads nothing (keys past lens[b]).
__device__ __forceinline__ void cp16(void* dst, const void* src, bool in) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   (unsigned)__cvta_generic_to_shared(dst)),
               "l"(src), "r"(in ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Chunks per block: where the grid has blocks to spare (at least MINBLOCKS with F chunks each),
// block s takes chunks s .. s + F - 1 and the others exit at once; fewer, longer blocks spend
// less on filling the ring and merging. Both kernels compute it the same way.
__device__ __forceinline__ int chunks_per_block(int S, int Hkv, int B) {
  int f = 1;
  while (f < FMAX && (long long)(S / (2 * f)) * Hkv * B >= MINBLOCKS) f *= 2;
  return f;
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
           float* __restrict__ part, int Hq, int Hkv, int L, float* sm, uint4* ring) {
  constexpr int T = D / 8;   // lanes per key
  constexpr int KW = 32 / T; // keys per warp per load
  constexpr int SR = D + 4;  // one warp's state for one head in shared memory: m, l, 2 spare, acc
  const int s = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int n = lens[b];
  const int F = chunks_per_block(gridDim.x, Hkv, gridDim.z);
  const int k0 = s * CHUNK;
  if (s % F != 0 || k0 >= n) return; // the combine reads the partials of s = 0, F, 2F, ...
  const int k1 = min(k0 + F * CHUNK, n);
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
  // Each lane copies exactly the 16-byte pieces it will read (its U keys' K and V) into its own
  // slots of a STAGES-round ring in shared memory, STAGES - 1 rounds ahead: the bytes in flight
  // cost no registers, and no other thread touches the slots, so no barrier is needed.
  static_assert(U <= 4, "the ring holds 4 keys' pieces a lane a round");
  constexpr int RK = NW * KW * U; // keys per round
  const int nr = (k1 - k0 + RK - 1) / RK;
  auto issue = [&](int r) {
    uint4* slot = ring + (r % STAGES) * (2 * 4 * BLOCK) + threadIdx.x;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int ju = k0 + r * RK + (u * NW + w) * KW + grp;
      const bool in = ju < k1;
      const long long o = in ? ju * rs : 0;
      cp16(slot + (2 * u) * BLOCK, kb + o, in);
      cp16(slot + (2 * u + 1) * BLOCK, vb + o, in);
    }
  };
#pragma unroll
  for (int r = 0; r < STAGES - 1; ++r) {
    if (r < nr) issue(r);
    cp_commit();
  }
  for (int r = 0; r < nr; ++r) {
    const int base = k0 + r * RK;
    if (r + STAGES - 1 < nr) issue(r + STAGES - 1);
    cp_commit();
    cp_wait<STAGES - 1>(); // this thread's copies of round r have landed
    uint4 kr[U], vr[U];
    int j[U];
    const uint4* slot = ring + (r % STAGES) * (2 * 4 * BLOCK) + threadIdx.x;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      j[u] = base + (u * NW + w) * KW + grp;
      kr[u] = slot[(2 * u) * BLOCK];
      vr[u] = slot[(2 * u + 1) * BLOCK];
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
  cp_wait<0>();
  __syncthreads(); // sm shares its bytes with the ring, which other warps may still be reading
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

extern "C" __global__ void __launch_bounds__(BLOCK, 512 / BLOCK)
    decode_split(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                 const __nv_bfloat16* __restrict__ v, const int* __restrict__ lens,
                 float* __restrict__ part, __nv_bfloat16* __restrict__ out, int B, int Hq, int Hkv,
                 int L, int D) {
  // The ring (STAGES rounds of U keys' K and V, 16 bytes a lane each) and, after the loop, the
  // warps' states for the merge share one array.
  constexpr int RING = STAGES * 2 * 4 * BLOCK * 16, MERGE = NW * 8 * (128 + 4) * 4;
  __shared__ __align__(16) unsigned char smem[RING > MERGE ? RING : MERGE];
  float* sm = reinterpret_cast<float*>(smem);
  uint4* ring = reinterpret_cast<uint4*>(smem);
  const int G = Hq / Hkv;
  // D is 64 or 128 and G is 1, 2, 4 or 8 (the puzzle's promise): one specialised body each, so
  // that the per-head arrays live in registers. Fewer keys in flight where G is large.
  if (D == 128) {
    if (G == 1)
      split_body<128, 1, 4>(q, k, v, lens, part, Hq, Hkv, L, sm, ring);
    else if (G == 2)
      split_body<128, 2, 4>(q, k, v, lens, part, Hq, Hkv, L, sm, ring);
    else if (G == 4)
      split_body<128, 4, 4>(q, k, v, lens, part, Hq, Hkv, L, sm, ring);
    else
      split_body<128, 8, 2>(q, k, v, lens, part, Hq, Hkv, L, sm, ring);
  } else {
    if (G == 1)
      split_body<64, 1, 4>(q, k, v, lens, part, Hq, Hkv, L, sm, ring);
    else if (G == 2)
      split_body<64, 2, 4>(q, k, v, lens, part, Hq, Hkv, L, sm, ring);
    else if (G == 4)
      split_body<64, 4, 4>(q, k, v, lens, part, Hq, Hkv, L, sm, ring);
    else
      split_body<64, 8, 2>(q, k, v, lens, part, Hq, Hkv, L, sm, ring);
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
  const int F = chunks_per_block(S, Hkv, B);
  for (int s = 0; s < ns; s += F) mx = fmaxf(mx, ml[2 * s]);
  float lt = 0.f, at = 0.f;
  for (int s = 0; s < ns; s += F) {
    const float c = ex2(ml[2 * s] - mx); // every partial saw at least one key: m is finite
    lt += ml[2 * s + 1] * c;
    at += part[(p0 + s) * D + d] * c;
  }
  out[((long long)b * Hq + hq) * D + d] = __float2bfloat16(at / lt);
}
