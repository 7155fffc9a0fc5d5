// Solution · 25 paged decode attention (split-K over a paged KV cache), bf16 in and out, f32 inside
//
// What: puzzle 24's solution, with the keys found through the block table. decode_split gives
// each block CHUNK = 512 keys (32 pages of 16) of one (sequence b, KV head h) pair and all
// G = Hq / Hkv query heads of that KV head. Each warp first loads the chunk's 32 page numbers
// from block_table into its registers, one per lane (only those of pages that hold keys: entries
// past the sequence's last page may be anything). Then, as in 24: a key's K row (D bf16) is read by
// a group of D/8 lanes, one 16-byte load each, at element ((page * 16 + slot) * Hkv + h) * D of the
// pool, an offset computed in 64 bits (at the perf size a page starts at up to 2.28e9 elements,
// past 2^31); each lane group has U keys' K and V loads in flight, forms U x G partial dot products
// with its 8 elements of the G query rows (pre-scaled by log2(e)/sqrt(D)), finishes them with a
// reduce-scatter over the group (15 shuffles for 16 sums at G = 4, U = 4, D = 128, leaving lane t
// with the score of key t / G, head t % G, whose weight it computes once and shuffles back), and
// keeps an online-softmax state (m, l, acc[8]) per head. Keys past lens[b] are never loaded. The
// lane groups and warps merge their states, the block writes one (m, l) and D sums per query head,
// and decode_combine merges the cdiv(lens[b], CHUNK) partials.
// Run:  warpbook check 25-paged-decode-attention solutions/25-paged-decode-attention.cu
//       warpbook predict 25-paged-decode-attention solutions/25-paged-decode-attention.cu
//
// Why: paging changes where the rows are, not how many bytes move. A page holds 16 consecutive
// tokens, and a KV head's slice of it is 16 rows of D bf16 (256 bytes each at D = 128), so every
// 16-byte load still sits in a fully used 256-byte run: the scattered pages cost one table lookup
// per 16 keys (from shared memory) and nothing in bandwidth. The rest is 24's argument: one load
// of K and V for the G heads of the group (GQA reuse), B * Hkv * cdiv(16 * max_blocks, CHUNK)
// blocks to fill 132 SMs at any batch, and several 16-byte loads in flight per lane.
//
// Napkin maths at the perf size (B 64, Hq 32, Hkv 8, D 128, max_blocks 512, every page full):
// K and V are 64 x 8192 x 8 x 128 x 2 bytes x 2 = 2.15 GB read once (of a 9.1 GB pool); 8.6 GFLOP.
// Least time: 447 us on the H200 (4.8 TB/s), 1.05 ms on an A100 80 GB (2.04 TB/s), 2.13 ms on an
// RTX 4090 (1.01 TB/s).
// The K and V rows do not go straight to registers: each warp streams them through a ring of 3
// stages in shared memory with cp.async (12 KB per warp, 48 KB per block, 192 KB per SM at 4
// blocks), two rounds of loads always in flight while the third is computed. The lane that
// issues a copy is the one that reads it back, so a lane needs only its own cp.async.wait_group,
// no barrier; the page numbers sit in each warp's registers and are passed by __shfl_sync.
// Why a ring: on the H200, 24's plain loads into registers, each page's number read from shared
// memory, take 643 us here, against 542 us for the same bytes in 24's contiguous cache. Each page's
// loads wait for its table entry, and loads into registers stay in flight only while the warp
// waits; the ring keeps ~2x the bytes in flight all the time. On the H200 (`warpbook check`): the
// register form 643 us; loads for the next round issued before this round's arithmetic (167
// registers, 3 blocks per SM) 593 us; blocks reordered so the 8 KV heads of a chunk run together
// (for the TLB) 608 us; the ring 530 us; ring + reordering 529 us (and a small spill), so the ring
// alone is kept. Predicted by `warpbook predict` for the H200: 594 us (the model sees bytes in
// flight, not the table's latency, and puts the register form at 549 us). ptxas (sm_90): 128
// registers, no spills on the G <= 4 paths; the G = 8 paths spill (as in 24). Measured on the H200
// (`warpbook check`): 512.00 us, 4.20 TB/s, about 87% of the speed of light against the ceilings
// `warpbook probe` measures; gold. With the L2 flushed by writing instead of reading, the flush's
// dirty lines drain during the timed kernel and it takes 529.78 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 512.00 us on NVIDIA H200
// measured: 746.37 us on NVIDIA H100 80GB HBM3
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

__device__ __forceinline__ void cp16(void* dst, const void* src) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N> __device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
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
           const __nv_bfloat16* __restrict__ v, const int* __restrict__ block_table,
           const int* __restrict__ lens, float* __restrict__ part, int Hq, int Hkv, int max_blocks,
           float* sm) {
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
  // The chunk's page numbers, in this warp's registers: lane i holds entry i (+ 32, ...). Only
  // entries of pages that hold keys are read (k0 is a multiple of 16).
  constexpr int NPG = (CHUNK / 16 + 31) / 32;
  int pg[NPG];
  {
    const int npages = (k1 - k0 + 15) / 16;
    const int* bt = block_table + (long long)b * max_blocks + k0 / 16;
#pragma unroll
    for (int i = 0; i < NPG; ++i) pg[i] = i * 32 + lane < npages ? __ldg(bt + i * 32 + lane) : 0;
  }

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

  constexpr int P = 12 / U; // ring stages
  static_assert(P >= 2, "ring needs two stages");
  constexpr int STEP = NW * KW * U;                                     // keys per round (block)
  uint4* ring = reinterpret_cast<uint4*>(sm) + w * (P * U * 64) + lane; // [P][U][K, V][32 lanes]
  const __nv_bfloat16* kb = k + (long long)h * D + t * 8;               // + the key's row, below
  const __nv_bfloat16* vb = v + (long long)h * D + t * 8;
  const int R = (k1 - k0 + STEP - 1) / STEP; // rounds (block-uniform)
  // Issue round r's loads into its slot, then commit a group (an empty one past the last round,
  // so that wait_group counts stay the same).
  auto issue = [&](int r) {
    if (r < R) {
      uint4* sl = ring + (r % P) * (U * 64);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int jw = r * STEP + (u * NW + w) * KW; // the warp's first key of slot u, from k0
        const int pi = jw >> 4;                      // its page, the same for the whole warp
        int src = pg[0];
#pragma unroll
        for (int i = 1; i < NPG; ++i) src = (pi >> 5) == i ? pg[i] : src;
        const int page = __shfl_sync(0xffffffffu, src, pi & 31);
        const int jj = jw + grp;
        if (k0 + jj < k1) {
          const long long row = ((long long)page * 16 + (jj & 15)) * Hkv * D; // 64-bit
          cp16(sl + u * 64, kb + row);
          cp16(sl + u * 64 + 32, vb + row);
        }
      }
    }
    cp_commit();
  };
#pragma unroll
  for (int r = 0; r < P - 1; ++r) issue(r);
  for (int r = 0; r < R; ++r) {
    const int base = k0 + r * STEP;
    issue(r + P - 1); // into the slot read in round r - 1
    cp_wait<P - 1>(); // round r's group has landed
    const uint4* sl = ring + (r % P) * (U * 64);
    uint4 kr[U], vr[U];
    int j[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      j[u] = base + (u * NW + w) * KW + grp;
      if (j[u] < k1) {
        kr[u] = sl[u * 64];
        vr[u] = sl[u * 64 + 32];
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

  cp_wait<0>();
  __syncthreads(); // the merge buffer below aliases every warp's ring
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

extern "C" __global__ void __launch_bounds__(BLOCK, 512 / BLOCK)
    decode_split(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                 const __nv_bfloat16* __restrict__ v, const int* __restrict__ block_table,
                 const int* __restrict__ lens, float* __restrict__ part,
                 __nv_bfloat16* __restrict__ out, int B, int Hq, int Hkv, int D, int max_blocks) {
  static_assert(BLOCK <= 128, "the ring takes 12 KB per warp, 48 KB per block at most");
  __shared__ __align__(16) float sm[NW * 12 * 1024 / 4]; // the cp.async ring, then the merge buffer
  const int G = Hq / Hkv;
  // D is 64 or 128 and G is 1, 2, 4 or 8 (the puzzle's promise): one specialised body each, so
  // that the per-head arrays live in registers. Fewer keys in flight where G is large.
  if (D == 128) {
    if (G == 1)
      split_body<128, 1, 4>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm);
    else if (G == 2)
      split_body<128, 2, 4>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm);
    else if (G == 4)
      split_body<128, 4, 4>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm);
    else
      split_body<128, 8, 2>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm);
  } else {
    if (G == 1)
      split_body<64, 1, 4>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm);
    else if (G == 2)
      split_body<64, 2, 4>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm);
    else if (G == 4)
      split_body<64, 4, 4>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm);
    else
      split_body<64, 8, 2>(q, k, v, block_table, lens, part, Hq, Hkv, max_blocks, sm);
  }
}

extern "C" __global__ void
decode_combine(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
               const __nv_bfloat16* __restrict__ v, const int* __restrict__ block_table,
               const int* __restrict__ lens, float* __restrict__ part,
               __nv_bfloat16* __restrict__ out, int B, int Hq, int Hkv, int D, int max_blocks) {
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
