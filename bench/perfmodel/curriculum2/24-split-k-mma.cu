// Solution · 24 decode attention (split-K, "flash-decoding"), bf16 in and out, f32 inside,
// the arithmetic on the tensor cores
//
// What: decode_split is one warp per block (BLOCK = 32): block (s, h, b) takes keys
// s*CHUNK .. min((s+1)*CHUNK, lens[b]) - 1 of sequence b and KV head h, for all G = Hq / Hkv query
// heads that share that KV head, and leaves per query head an (m, l) pair and D f32 sums in `part`.
//   - Q: the G query rows (bf16, as given: not pre-scaled, see Precision) are rows 0..G-1 of the A
//     operand of mma.sync.m16n8k16 (bf16 -> f32); rows G..15 are zero. Loaded once, from global
//     memory straight into the A fragments: D/16 fragments of 4 registers.
//   - K and V: 16-key tiles streamed through a ring of NS = 3 stages in shared memory with
//     cp.async (16 bytes global -> shared, no registers; two stages in flight while the warp works
//     on the third). Keys at or past lens[b] are never read: their copies have source size 0,
//     which writes zeros, so NaN in the padding never enters (no 0 * NaN). Rows are padded to
//     D + 8 halves so that the 8 rows one ldmatrix phase reads fall in 8 different bank groups.
//     The warp owns its ring: no block barrier, only __syncwarp.
//   - S = Q K^T: K stored [key][d] is the "col" B operand as it lies: one ldmatrix.x4 gives the
//     B fragments of 16 keys for 16 values of d; D/16 x 2 mma per 16 keys.
//   - Online softmax in f32 on the C fragments (lane g*4 + t holds row g, keys 2t, 2t + 1 of each
//     8): s * log2(e) / sqrt(D), the running max over the 4 lanes of a row (two shuffles), p =
//     ex2.approx(s - m), and acc and l scaled by exp2(m_old - m_new). Keys past the chunk's end
//     (the last tile only) get -inf.
//   - O += P V: the C fragments of two 8-key blocks are the A fragment of the next mma, P never
//     leaves the registers (as in FlashAttention-2). V stored [key][d] is the row-major B:
//     ldmatrix.x4.trans. P goes in as two bf16 terms, hi = bf16(p) and lo = bf16(p - hi), and
//     each V fragment is used by two mma: 2 x D/8 mma per 16 keys.
//   - End: l summed over the 4 lanes of a row; rows < G written to `part` (float2 stores).
// decode_combine, one block per (query head, sequence), is unchanged: it rescales the
// cdiv(lens[b], CHUNK) partials to their common max and writes acc / l as bf16.
// Run:  warpbook check 24-decode-attention solutions/24-decode-attention.cu
//       warpbook predict 24-decode-attention solutions/24-decode-attention.cu
//
// Why: decode reads the whole KV cache for one token: 8 FLOPs per 4 bytes of K and V at G = 4,
// far below any ridge point, so DRAM should be the only limit. The FP32 version (history below)
// was not there: per key and lane 16 bf16 -> f32 conversions, 64 FMAs for the dots, 64 for acc
// and the shuffles of the reductions put instruction issue at 67% of its time in the model, and
// it measured 524-537 us on the H200 against PyTorch SDPA's 499.9 us. On the tensor cores a warp
// does 16 keys in 48 mma (16 for S, 32 for the two P V terms), 16 ldmatrix, 16 cp.async per lane
// and some 60 instructions of softmax and rescale: the model counts 3.4x fewer instructions per SM
// (8.2e5 against 2.8e6) and puts issue at 20% and the tensor pipe at 15% of the time.
// The rows G..15 of every mma are wasted (3/4 of the tensor work at G = 4); it does not matter:
// the tensor pipe is busy some 75 us of the ~500 us.
// Bytes in flight: 2 stages x 8.5 KB per warp, 8 blocks per SM (180 registers: o is 64 floats,
// the Q fragments 32 at D = 128), about 136 KB per SM, past the 128 KiB where the H200's measured
// read curve (`warpbook probe`) flattens at 4.45 TB/s. More stages are slower in the model (4
// stages: 6 blocks per SM by shared memory and a worse tail).
// Precision: FlashAttention rounds P to bf16 before P V. Here that fails the puzzle's tolerance
// (rtol 1e-2, atol 1e-3) in most runs on the simulator: errors of 1.3-1.5e-3 on outputs near 0.02
// (a weight's rounding is 2^-9 of it, and with few keys carrying the weight it does not average
// out). The hi + lo split makes the weights exact to about 2^-17 for 16 more mma per 16 keys,
// which cost nothing visible here. For the same reason q is not pre-scaled by log2(e)/sqrt(D) as
// the FP32 version did: the scaled q rounded to bf16 would carry 2^-9 of every score, 0.1 and more
// in the exponent when scores are in the hundreds; the scale is one f32 FMUL on S instead.
// CHUNK: 512 (the @tune) gives 8192 one-warp blocks at the perf size, 10 waves of 8 per SM, so
// the last wave's tail is small; 128 blocks at B = 1, L = 8192. CHUNK = 2048 predicts faster at
// the perf size (1.94 waves) but gives 32 blocks at B = 1 and swings with the wave count.
//
// Napkin maths at the perf size (B 64, Hq 32, Hkv 8, L 8192, D 128, every lens = L): K and V are
// 64 x 8192 x 8 x 128 x 2 bytes x 2 = 2.15 GB, read once; 8.6 GFLOP useful (34 GFLOP of mma with
// the zero rows and the lo term). Least time: 447 us on the H200 (4.8 TB/s), 472 us at its
// measured read stream (4.56 TB/s), 484 us at the 4.45 TB/s the measured curve gives with 128 KiB
// in flight per SM; 1.05 ms on an A100 80 GB (2.04 TB/s), 2.13 ms on an RTX 4090 (1.01 TB/s).
// The partials: 4 x 130 floats per block, 17 MB at CHUNK = 512, read once more by the combine.
// Predicted by `warpbook predict` for the H200 (with the model reading cp.async as the DRAM read
// it is): 523 us at CHUNK = 512
// (4.1 TB/s), 519 us at 1024, 509 us at 2048, of which the combine is 5-8 us; the DRAM queue is
// the top factor (93%), issue 20%. (The model as it was, counting cp.async as a DRAM write in the
// launch's read/write mix, said 530, 544 and 593 us.) The target of 480 us is below the model's
// own floor here: 484 us for the split kernel at 4.45 TB/s plus the combine.
//
// History. The FP32 version this replaces (its header, kept):
//   What: decode_split gives each block CHUNK = 512 keys of one (sequence b, KV head h) pair and
//   all G = Hq / Hkv query heads that share that KV head. Inside the block (4 warps), a key's K row
//   (D bf16 = 128 or 256 bytes) is read by a group of D/8 lanes, one 16-byte load each, so a warp
//   reads 32/(D/8) keys per load instruction; each lane group takes U keys at once (U K loads and U
//   V loads in flight per lane before any arithmetic). Each lane holds its 8 elements of the G
//   query rows (pre-scaled by log2(e)/sqrt(D), so exp becomes exp2) and forms U x G partial dot
//   products. Where U x G equals the group's D/8 lanes (G = 4, U = 4 at D = 128: the perf path) a
//   reduce-scatter finishes them: 4 steps in which each lane sends half of its values to a partner
//   and keeps the other half, 15 shuffles for 16 sums (a plain xor tree takes 64), after which lane
//   t holds the whole score of key t / G, head t % G. Its max over the round's keys and its weight
//   exp2(s - m) are computed once, on that lane, and 16 shuffles hand the weights to the group.
//   (Other shapes use the plain xor tree, every lane computing every weight.) Each lane keeps, per
//   query head, the running max m and its 8 elements of acc = sum exp2(s - m) * v; the sum l is kept
//   per owning lane and gathered at the end. Keys past lens[b] are never loaded
//   (their score is -inf and their V stays 0, so NaN in the padding cannot leak in as 0 * NaN).
//   At the end of the chunk the lane groups merge their states with shuffles, the warps through
//   shared memory, and the block writes one (m, l) pair and D sums per query head to the workspace.
//   decode_combine, one block per (query head, sequence), rescales the cdiv(lens[b], CHUNK)
//   partials to their common max and writes acc / l as bf16.
//   Run:  warpbook check 24-decode-attention solutions/24-decode-attention.cu
//         warpbook predict 24-decode-attention solutions/24-decode-attention.cu
//
//   Why: decode reads the whole KV cache to produce one token, 4 FLOPs per 2-byte element per query
//   head: at G = 4 that is 8 FLOPs per 4 bytes of K and V, far below any GPU's ridge point, so the
//   only goal is DRAM bandwidth. Three things get there. (1) Each K and V element is loaded once
//   for all G query heads of its group (that reuse is what GQA buys: 4x less traffic than MHA with
//   32 KV heads). (2) Enough blocks: one block per (b, h) is B * Hkv blocks, 8 at B = 1, against
//   132 SMs; splitting every sequence into chunks of CHUNK keys gives B * Hkv * L / CHUNK blocks
//   whatever B is (4096 at the perf size, 128 at B = 1, L = 8192), at the price of a combine that
//   reads D + 2 floats per (b, query head, chunk): 1.6% of the cache's bytes at CHUNK = 512,
//   D = 128, G = 4. (3) 16-byte loads, U of each per lane before the arithmetic, so each SM has
//   some 40 KB of reads in flight.
//   The softmax is base 2 with the scale folded into q: one ex2.approx per score, and the rescale
//   of acc only when the running max moves. The arithmetic is the other limit: per key and lane,
//   16 bf16-to-f32 conversions, 64 FMAs for the dots, 64 for acc. With the xor tree, 128 shuffles
//   and adds per round plus every lane computing all 16 weights made the kernel issue-bound (predicted
//   632 us); the reduce-scatter cut the instructions by about a quarter (predicted 520 us).
//   Registers: 128 at __launch_bounds__(128, 4); ptxas (sm_90) reports no spills for the G <= 4
//   paths. The G = 8 paths spill some 340 bytes (q and acc alone are 128 floats per lane): correct,
//   not tuned. CHUNK = 1024 predicts 2-3% faster at the perf size but gives only 64 blocks at B = 1.
//   On the H200 (`warpbook check`, quoted from the measurements before this version): 537.4 us at
//   CHUNK = 512, 524.1 us at CHUNK = 1024; an L2::256B prefetch hint on the K/V loads, 542.6 us;
//   PyTorch's SDPA 499.9 us (4.30 TB/s). The model had said 520-528 us and named issue.
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
