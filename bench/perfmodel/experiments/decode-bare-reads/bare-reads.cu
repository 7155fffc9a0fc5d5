// Puzzle 24's loads alone: the ring of
// bench/perfmodel/curriculum2/24-split-k-ring-two-chunks-a-block.cu (blocks take two 512-key chunks
// where the grid has 4096 blocks or more), with the arithmetic on the keys taken out. Each lane
// still copies its K and V pieces through the same two-round cp.async ring, waits for them and
// reads them back from shared memory; instead of scores, a softmax and the weighted sum it adds one
// word of each piece into acc, so the loads cannot be dropped. The block merge, the partials and
// decode_combine run as before, on meaningless values: the answer is wrong, and only the time says
// anything. It is the least time this grid, ring and access pattern can take, to set the solution
// beside.
// Run (on a GPU):
//   warpbook run 24-decode-attention bench/perfmodel/experiments/decode-bare-reads/bare-reads.cu
//     --size B=64 --size Hq=32 --size Hkv=8 --size L=8192 --size D=128 --time-wrong
// Measured on the H200 (`warpbook run --time-wrong`, twice in the call where that kernel took
// 503.1 and 503.5 us): 492.0 and 492.0 us, 4.37 TB/s.
// measured: 492.0 us on NVIDIA H200
// @tune BLOCK=128
// @tune CHUNK=512
#define STAGES 2 // rounds in the ring: one computed while the next one's copies are in flight

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

// Where the grid has blocks to spare (4096 or more: 8 rounds of 4 blocks on 132 SMs), a block
// takes F = 2 consecutive chunks and the blocks past S / F exit at once: half the partials to
// write and combine. Small grids (B = 1) keep every block.
__device__ __forceinline__ int chunks_per_block(int blocks) {
  int F = 1;
  while (F < 2 && blocks / (2 * F) >= 2048) F *= 2;
  return F;
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
  const int F = chunks_per_block(gridDim.x * gridDim.y * gridDim.z);
  const int k0 = s * F * CHUNK;
  if (k0 >= n) return; // the combine reads only cdiv(lens[b], F * CHUNK) partials
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
#pragma unroll
    for (int u = 0; u < U; ++u)
      acc[0][u] += __uint_as_float((kr[u].x ^ vr[u].y) & 0x3f7fffffu) + (float)j[u];
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
  const int S = (L + CHUNK - 1) / CHUNK;
  const int F = chunks_per_block(S * Hkv * B), ns = (lens[b] + F * CHUNK - 1) / (F * CHUNK);
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
