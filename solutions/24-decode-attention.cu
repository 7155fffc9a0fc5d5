// Solution · 24 decode attention (split-K, "flash-decoding"), bf16 in and out, f32 inside
//
// What: decode_split gives each block CHUNK = 512 keys (two chunks where the grid has 4096 blocks
// or more) of one (sequence b, KV head h) pair and all G = Hq / Hkv query heads that share it.
// Inside the block (4 warps), a key's K row (D bf16 = 128 or 256 bytes) is read by a group of D/8
// lanes, 16 bytes each, so a warp reads 32/(D/8) keys per round and load; each lane group takes U
// keys a round. The loads go through a ring in shared memory: each lane cp.async's exactly the U K
// and U V pieces it will use into its own slots, one round ahead (STAGES = 2), and reads them back
// with ld.shared when the round comes. No other thread touches a lane's slots, so there is no
// barrier, only cp.async.wait_group; and the bytes in flight cost no registers. Each lane holds its
// 8 elements of the G query rows (pre-scaled by log2(e)/sqrt(D), so exp becomes exp2) and forms U x
// G partial dot products. Where U x G equals the group's D/8 lanes (G = 4, U = 4 at D = 128: the
// perf path) a reduce-scatter finishes them: 4 steps in which each lane sends half of its values to
// a partner and keeps the other half, 15 shuffles for 16 sums (a plain xor tree takes 64), after
// which lane t holds the whole score of key t / G, head t % G. Its max over the round's keys and
// its weight exp2(s - m) are computed once, on that lane, and 16 shuffles hand the weights to the
// group. (Other shapes use the plain xor tree, every lane computing every weight.) Each lane keeps,
// per query head, the running max m and its 8 elements of acc = sum exp2(s - m) * v; the sum l is
// kept per owning lane and gathered at the end. Keys past lens[b] are copied as zeros (their
// score is -inf and their V is 0, so NaN in the padding cannot leak in as 0 * NaN); the first
// round's copies go out before lens[b] is back, and a round that reached past it is copied again.
// At the end of the
// chunk the lane groups merge their states with shuffles, the warps through shared memory, and the
// block writes one (m, l) pair and D sums per query head to the workspace. decode_combine, one
// block per (query head, sequence), reads all its partial slots at once with lens[b] (up to 8; more
// take the plain loop), rescales the cdiv(lens[b], F * CHUNK) written ones to their common max and
// writes acc / l as bf16.
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
// D = 128, G = 4. (3) Bytes in flight: with plain loads into registers each SM had some 40 KB
// of reads in flight and the next round's loads went out only after this round's arithmetic; the
// cp.async ring keeps a whole round (16 KB a block, 64 KB an SM) in flight while one is computed.
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
// Measured on the H200 (`warpbook check`): 490.59 us, 4.38 TB/s, 94.5% of the speed of light
// against the ceilings `warpbook probe` measures; gold. PyTorch's SDPA in the side-by-side runs
// took 490.0-492.9 us against this file's 490.3-490.8: level, within the spread between two runs
// (docs/vs-torch-h200.md). Nsight Compute at the perf size (`NCU=24 bash scripts/gpu_session.sh
// ncu`, one chunk a block): DRAM 89% of its peak (4.28 TB/s), issue slots 65% busy, 4 blocks of 4
// warps an SM (128 registers).
// What the loop can reach: the same grid, ring and loads with the arithmetic taken out
// (bench/perfmodel/experiments/decode-bare-reads) 492.0 us beside 493.1 of this kernel: it is
// within 2% of its own loads. The same pieces read with plain 16-byte loads and nothing else took
// 469.4 us beside 493.5 (its loads alone, ring and combine kept, 481.9): neither the stride (whole
// rows in address order 478.0) nor the occupancy (the plain loads capped at 4 blocks an SM, 469.2)
// is what is left; the frame around the loads costs about as much as the arithmetic
// (bench/perfmodel/experiments/read-shapes). The split kernel alone (the combine an empty kernel)
// 489.0 beside 493.3: the combine and its launch cost 4.3 us.
// What loses, and by how much (`warpbook check`, each against the kernel it was timed beside; the
// absolute level moves between runs and machines by up to 5%):
//   - Plain 16-byte loads into registers instead of the cp.async ring (the next round's loads go
//     out only after this round's arithmetic, about 40 KiB in flight an SM): 542.6 us against
//     519.2, and 536.5 and 542.9 against 510.9 and 519.0 in two more runs, 4-5% slower. `warpbook
//     probe` reads DRAM at 4.09 TB/s with 32 KiB in flight per SM and 4.51 TB/s with 128 KiB. On
//     that register form: CHUNK = 1024 2.4% faster (524.0 against 537.0) but 64 blocks at B = 1, L
//     = 8192, half the SMs idle, so 512 stays; an L2::256B prefetch hint on the K and V loads
//     542.6; the (chunk, KV head) pairs taken head-fastest 540.5 against 542.9 and 542.5, and with
//     that an L1 or L2 prefetch of the next round's rows 566.1 and 565.7.
//   - The tensor cores (QK^T and PV on mma.sync with P as two bf16 terms, one warp per block, a
//     3-stage cp.async ring; the instructions per key fell 3.4x): 544.4, 539.5 and 527.1 us at
//     CHUNK 512, 1024 and 2048, beside 537.0 for the register form: the FMAs are not what holds
//     decode back, the bytes in flight are.
//   - A deeper ring, 3 rounds (48 KB a block): 512.7-520.3 us beside 519; 495.0 and 495.3 beside
//     490.4-490.5. The KV heads fastest in launch order 519.6; V read from the ring only after the
//     scores 518.9; 5 blocks an SM (96 registers, spills) 562.4.
//   - Whole 2 KB cache rows a block (block (s, j, b) taking 64 keys of every KV head, lane group g
//     reading head g: contiguous loads, no merges): 603.8 and 603.3 against 518.9 and 519.9. It
//     writes 8 times the partials (128 a query head instead of 16): 136 MB more written and read
//     back, 13% of the cache's bytes; `warpbook predict` ranks it slower too (650 against 531 us).
//     With as many partials as here (CHUNK 2048, every other block exiting at once), on an H100,
//     739.4 against 739.2: the DRAM does not mind the 2 KB stride; CHUNK 1024 (64 partials a head)
//     793.1, CHUNK 2048 (32) 761.8.
//   - The combine fused into the last block of each (sequence, KV head), through a counter that
//     block resets: 537.5 against 511.1. That block combines 4 heads x 16 partials alone, with the
//     L2's latency on every step.
//   - Fewer, longer blocks: F consecutive chunks a block where the grid has blocks to spare (the
//     others exiting at once, the combine reading every F-th partial): F = 16 (one block per
//     sequence and KV head over all 8192 keys, one wave of 512 blocks) 544.0 and 544.4 against
//     519.8 and 519.9; F = 8 526.4 and 526.5; the same code at F = 1 525.3 and 524.9. Two chunks a
//     block, only where the grid has 4096 blocks or more (this file: half the partials, 8.4 MB less
//     written and read back), wins: 503.5 and 503.9 against 511.1 and 511.4; four chunks a block
//     501.5 beside 503.5 and 496.3 beside 492.8, no better.
//   - Where the spare blocks (those that only exit) go: after every 8 working blocks 503.1 and
//     503.5, 493.8 and 493.8; last in launch order (this file) 502.1 and 502.2, 492.8 and 492.9. A
//     grid with no spare blocks (CHUNK 1024, one chunk a block, which 64 blocks at B = 1 rule out)
//     500.9: the spare blocks cost about 1 us.
//   - The start of a block: lens[b] first and then the first round's copies waits on memory twice;
//     with the first round, q and lens[b] in flight together (this file) 500.8 against 502.1 and
//     491.2 against 492.9, and a combine that waits once instead of three times 500.1. q loaded
//     after the ring's first copies 492.6 beside 492.8. A combine with 16 partials' loads in flight
//     at once: 496.8 against 502.2 and 502.5 in one run, 505.2 and 506.0 in another: its loads are
//     not what it waits on.
//   - 256-byte bulk copies (cp.async.bulk, one a key and head) in place of the lanes' cp.async:
//     595.2 against 493.1.
//   - `ns` computed once above the combine's branches, and the never-taken `k0 >= kend` exit
//     dropped: 491.25 and 491.33 against 490.37-490.50, so the file keeps them as they are.
// The ring's first rounds are committed one group a round, as the loop's copies are: committed as
// one group, at STAGES = 3 the loop's first wait would let round 0 be read before it landed (NaN
// from the padding, which the simulator shows); at STAGES = 2 the PTX is the same either way.
// measured: 490.59 us on NVIDIA H200
// measured: 733.38 us on NVIDIA H100 80GB HBM3
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
// takes F = 2 consecutive chunks and the spare half of the grid exits at once: half the partials
// to write and combine. Small grids (B = 1) keep every block.
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
  const int F = chunks_per_block(gridDim.x * gridDim.y * gridDim.z);
  int s = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  if (F > 1) {
    // The working blocks come first in launch order and the spare ones after them: interleaved, a
    // slot freed by a working block went through up to 8 blocks that only exit before its next.
    const int SF = (gridDim.x + F - 1) / F;
    const int lin = s + gridDim.x * (h + gridDim.y * b);
    if (lin >= SF * gridDim.y * gridDim.z) return;
    s = lin % SF, h = (lin / SF) % gridDim.y, b = lin / (SF * gridDim.y);
  }
  const int k0 = s * F * CHUNK;
  const int kend = min(k0 + F * CHUNK, L); // the chunks' keys, before lens[b] is known
  if (k0 >= kend) return;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int grp = lane / T, t = lane % T;
  const long long rs = (long long)Hkv * D; // elements from one key to the next
  const __nv_bfloat16* kb = k + ((long long)b * L * Hkv + h) * D + t * 8;
  const __nv_bfloat16* vb = v + ((long long)b * L * Hkv + h) * D + t * 8;
  // Each lane copies exactly the 16-byte pieces it will read (its U keys' K and V) into its own
  // slots of a STAGES-round ring in shared memory, STAGES - 1 rounds ahead: the bytes in flight
  // cost no registers, and no other thread touches the slots, so no barrier is needed.
  static_assert(U <= 4, "the ring holds 4 keys' pieces a lane a round");
  constexpr int RK = NW * KW * U; // keys per round
  auto issue = [&](int r, int lim) {
    uint4* slot = ring + (r % STAGES) * (2 * 4 * BLOCK) + threadIdx.x;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int ju = k0 + r * RK + (u * NW + w) * KW + grp;
      const bool in = ju < lim;
      const long long o = in ? ju * rs : 0;
      cp16(slot + (2 * u) * BLOCK, kb + o, in);
      cp16(slot + (2 * u + 1) * BLOCK, vb + o, in);
    }
  };
  // The first rounds go out before lens[b] is back (keys below L lie inside the cache, so the
  // copies are safe): a block's start costs one wait on memory, not two.
#pragma unroll
  for (int r = 0; r < STAGES - 1; ++r) {
    issue(r, kend);
    cp_commit();
  }
  // q rows of the group, this lane's 8 elements, scaled into base-2 logits (read
  // while lens[b] and the first copies are on their way).
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
  const int n = lens[b];
  if (k0 >= n) { // the combine reads only cdiv(lens[b], F * CHUNK) partials
    cp_wait<0>();
    return;
  }
  const int k1 = min(kend, n);
  if (k1 < k0 + (STAGES - 1) * RK) {
    // Keys past lens[b] were copied: their V may be NaN and must read as 0. Copy those rounds
    // again, zeros past k1, once the first copies have landed (the lane's own slots).
    cp_wait<0>();
#pragma unroll
    for (int r = 0; r < STAGES - 1; ++r) {
      issue(r, k1);
      cp_commit(); // a group a round, as the first copies were: the loop's waits count rounds
    }
  }
  const int nr = (k1 - k0 + RK - 1) / RK;

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

  for (int r = 0; r < nr; ++r) {
    const int base = k0 + r * RK;
    if (r + STAGES - 1 < nr) issue(r + STAGES - 1, k1);
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
  const int S = (L + CHUNK - 1) / CHUNK;
  const int F = chunks_per_block(S * Hkv * B), SF = (S + F - 1) / F;
  const long long p0 = ((long long)b * Hq + hq) * S;
  const float* ml = part + (long long)B * Hq * S * D + 2 * p0;
  if (d >= D) return;
  float mx = -INFINITY, lt = 0.f, at = 0.f;
  if (SF <= 8) {
    // Every partial slot is read at once, with lens[b] (lane i < 2 SF reads word i of the (m, l)
    // pairs, shuffles share them): one wait on memory instead of three. Slots past
    // cdiv(lens[b], F * CHUNK) were never written (garbage) and are dropped by selects.
    const int lane = d & 31;
    const float mlv = lane < 2 * SF ? ml[lane] : 0.f;
    float av[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) av[i] = i < SF ? part[(p0 + i) * D + d] : 0.f;
    const int ns = (lens[b] + F * CHUNK - 1) / (F * CHUNK);
    float mv[8], lv[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      mv[i] = __shfl_sync(0xffffffffu, mlv, 2 * i);
      lv[i] = __shfl_sync(0xffffffffu, mlv, 2 * i + 1);
      if (i < ns) mx = fmaxf(mx, mv[i]);
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const bool use = i < ns;
      const float c = use ? ex2(mv[i] - mx) : 0.f; // every partial saw at least one key
      lt += use ? lv[i] * c : 0.f;
      at += use ? av[i] * c : 0.f;
    }
  } else {
    const int ns = (lens[b] + F * CHUNK - 1) / (F * CHUNK);
    for (int s = 0; s < ns; ++s) mx = fmaxf(mx, ml[2 * s]);
    for (int s = 0; s < ns; ++s) {
      const float c = ex2(ml[2 * s] - mx); // every partial saw at least one key: m is finite
      lt += ml[2 * s + 1] * c;
      at += part[(p0 + s) * D + d] * c;
    }
  }
  out[((long long)b * Hq + hq) * D + d] = __float2bfloat16(at / lt);
}
