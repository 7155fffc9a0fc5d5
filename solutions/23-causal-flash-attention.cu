// Solution · 23 causal FlashAttention with GQA (FlashAttention-2 style), bf16 in/out, f32 inside
//
// What: o = softmax(q k^T / sqrt(D), keys j <= i + Sk - Sq only) v. q and o [B, Hq, Sq, D], k
// and v [B, Hkv, Sk, D], bf16; query head h reads KV head h / (Hq / Hkv). The queries are the
// last Sq of the Sk positions (new tokens over a cache): the mask is aligned bottom-right, as
// FlashAttention's; where Sq = Sk it is SDPA is_causal's top-left one too. Row r of the queries
// is key position r + off, off = Sk - Sq: every test of a row against a key adds off, once per
// warp or block, never per score.
// The kernel is solution 22's (read it first: 32 query rows a warp in two m16 tiles, the two
// warps of a row group splitting the keys of each tile and merging at the end) at BQ = 128 and
// BKV = 128: 8 warps, each 32 rows and 64 keys of every 128-key tile, Q re-read from shared memory
// for every tile (64 score registers leave no room for it), with four changes:
//   - Skip: a block of rows q0 .. q0 + 127 needs the key tiles 0 .. (q0 + 127 + off) / 128 only;
//     the ones above the diagonal are never loaded or computed: at Sq = Sk = 8192, 2080 of 4096
//     tile pairs.
//     Inside the diagonal tile a warp whose keys all lie past its rows (the second warp of rows
//     0 .. 63) skips it: its barriers only.
//   - Mask only where needed: a warp's tile whose last key passes the warp's first row (the
//     diagonal) or Sk gets -inf on key > row + off or key >= Sk, in a pass of compares branched
//     around everywhere else. Every row sees key 0, which is the first warp's of tile 0, so the
//     merge's max is finite.
//   - Balance: block x of a head takes query tile cdiv(Sq, 128) - 1 - x. Blocks are started in the
//     order of their linear index (x fastest), so each head's longest tile (64 key tiles at
//     Sq = Sk = 8192) starts first and the grid ends on one-tile blocks: the SMs run out of work
//     together.
//   - L2: the blocks of a head read the same K and V, and the Hq / Hkv query heads of a GQA group
//     are adjacent in y: they run at about the same time, and K and V come from the L2. At 128
//     rows a block, half as many K/V tile reads as at 64.
// Run:  warpbook check 23-causal-flash-attention solutions/23-causal-flash-attention.cu
//       warpbook predict 23-causal-flash-attention solutions/23-causal-flash-attention.cu
//
// Why: as in 22, the scores never leave the SM and the kernel is bound by the tensor cores and
// the shared memory that feeds them. With 32 rows a warp each K and V fragment feeds two mma (32
// FLOP per shared byte of K and V; the Q re-read adds 8 KB per warp per tile, 26 FLOP/B in all,
// against 16 with 16 rows a warp). Skipping the upper tiles halves the work; masking only the
// diagonal keeps the compares off the other tiles. Registers: o 128 and scores 64 floats per lane,
// 255 with __launch_bounds__(256, 1), no spills. Shared memory: Q 128 x (D + 8) + 2 x 2 x 128 x
// (D + 8) halves = 174080 B at D = 128 (SMEM), one block of 8 warps per SM; the merge uses
// 128 x (D + 8) x 4 = 69632 B of the K/V buffers.
//
// Napkin maths at the perf size (B 2, Hq 32, Hkv 8, S 8192, D 128): 2 B Hq S^2 D = 1.10 TFLOP of
// visible pairs; at 989 TFLOP/s 1.11 ms on the H200, at mma.sync's ~646 TFLOP/s 1.70 ms. The bytes
// (q and o 134 MB each, k and v 34 MB each) take 70 us at 4.8 TB/s. A100 80 GB (312 TFLOP/s):
// 3.5 ms; RTX 4090 (165 TFLOP/s with f32 accumulation): 6.7 ms. A kernel that computes every tile
// and masks does 2.2 TFLOP: twice these.
// Predicted by `warpbook predict` for the H200: this file 3228 us (0.90 of the H200); 16 rows a
// warp (below) 4292 us (1.04); solution 22's shape (BQ = 64, 4 warps, MT = 2, BKV = 64, Q in
// registers, about 70 bytes of spills) 3010 us (0.62: the spills' traffic is not in the model); the
// same with Q re-read 3830 us (unbranched mask). The model weighs each block by where it sits in
// the grid (docs/perf-model.md): extrapolating every block from the busiest SM's first ones, the
// longest tiles, would say 11.8 ms for the 16-rows-a-warp form instead of 4.3.
// Measured on the H200 (`warpbook check`, all in one run, median): this file 3577.1 us, 307 TFLOP/s
// of visible pairs. PyTorch's SDPA forced to its flash backend (FlashAttention-2) takes 3297.8 us:
// this file is 0.92x of it (the bar docs/vs-torch-h200.md sets: 0.8x). SDPA (is_causal, enable_gqa)
// with its default backend takes 1891 us; the Triton kernel 3413 us.
// What loses, and by how much (side by side with this file unless said):
//   - 16 rows a warp (one m tile) and all 64 keys of each tile of a 64-row block, Q in registers,
//     two barriers per tile: 4106.6 us (266 TFLOP/s of visible pairs), 0.80x of SDPA's flash
//     backend. On that form, BQ = 128 with 8 warps of 16 rows 5686 us; the K/V copy addresses
//     worked out once 4148 us against 4139: no gain there.
//   - 22's shape with Q in registers 4827.8 us, with Q re-read 4182.1 us.
// measured: 3577.12 us on NVIDIA H200
// measured: 3624.96 us on NVIDIA H100 80GB HBM3
// @tune BQ=128
// @tune SMEM=174080

#include <cuda_bf16.h>

#ifndef MT
#define MT 2 // m16 tiles (16 query rows each) per warp: 1 or 2
#endif
#ifndef BKV
#define BKV 128 // keys per block tile (a warp takes BKV / MT of them)
#endif
#ifndef QREG128
#define QREG128 0 // D = 128: Q in registers (1) or re-read from shared memory per tile (0)
#endif
#if MT != 1 && MT != 2
#error "MT is 1 or 2"
#endif
#define NW (BQ / 16)  // warps (the launch gives 2 * BQ threads)
#define NT (NW * 32)  // threads
#define RG (16 * MT)  // query rows per warp
#define NG (BQ / RG)  // warp groups of distinct rows; warps w and w + NG share rows, split keys
#define WK (BKV / MT) // keys per warp per tile
#define NF (WK / 8)   // 8-key score fragments per m tile
#define MINB (NT <= 128 ? 2 : 1)

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N_> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N_) : "memory");
}

__device__ __forceinline__ void ldsm_x4(unsigned* r, const void* p) {
  unsigned a = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
__device__ __forceinline__ void ldsm_x4_t(unsigned* r, const void* p) {
  unsigned a = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
// c (16 x 8, f32) += a (16 x 16, bf16) * b (16 x 8, bf16)
__device__ __forceinline__ void mma_bf16(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// 2^x in one MUFU instruction (ex2.approx, relative error ~2^-22; 2^-inf = +0).
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi); // lo in the low half: the lower column
  return *reinterpret_cast<unsigned*>(&h);
}

// One block: rows q0 .. q0 + BQ - 1 of one query head. Q and O point at that head's [Sq][D], K and
// V at its KV head's [Sk][D]; off = Sk - Sq.
template <int D>
__device__ __forceinline__ void
attend(const __nv_bfloat16* __restrict__ Q, const __nv_bfloat16* __restrict__ K,
       const __nv_bfloat16* __restrict__ V, __nv_bfloat16* __restrict__ O, int Sq, int Sk, int q0) {
  const int off = Sk - Sq;   // query row r is key position r + off
  constexpr int LD = D + 8;  // halves per shared row (padding: conflict-free ldmatrix)
  constexpr int KD = D / 16; // 16-wide slices of D: k steps of Q K^T, column pairs of P V
  constexpr int CH = D / 8;  // 16-byte chunks per row
  constexpr bool QREG = D == 64 || QREG128;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16* Qs = reinterpret_cast<__nv_bfloat16*>(smem_raw); // [BQ][LD]
  __nv_bfloat16* Ks = Qs + BQ * LD;                               // [2][BKV][LD]
  __nv_bfloat16* Vs = Ks + 2 * BKV * LD;                          // [2][BKV][LD]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, t = lane % 4;
  const int grp = warp % NG, half = warp / NG; // rows grp * RG .., keys half * WK .. of each tile

  for (int c = tid; c < BQ * CH; c += NT) {
    const int r = c / CH, col = (c % CH) * 8;
    const bool in = q0 + r < Sq;
    cp_async16(Qs + r * LD + col, in ? Q + (long long)(q0 + r) * D + col : Q, in ? 16 : 0);
  }
  cp_async_commit();
  // K and V copies: thread tid always takes chunk tid % CH of rows tid / CH + i * RP, so the
  // addresses are a fixed stride apart and only the tile's first key moves; a whole tile needs no
  // bounds. (Worked out per chunk, the index arithmetic costs issue slots the mma need.)
  constexpr int RP = NT / CH; // rows one pass of the block copies
  static_assert(NT % CH == 0 && BKV % RP == 0, "the K/V copies must split evenly");
  static_assert(NW % MT == 0 && WK % 16 == 0, "warps must pair up over rows, keys in 16s");
  const int kr = tid / CH, kcol = (tid % CH) * 8, kso = kr * LD + kcol;
  auto load_kv = [&](int kt) {
    __nv_bfloat16* Kb = Ks + (kt & 1) * BKV * LD + kso;
    __nv_bfloat16* Vb = Vs + (kt & 1) * BKV * LD + kso;
    const int key0 = kt * BKV + kr;
    const __nv_bfloat16* Kg = K + (long long)key0 * D + kcol;
    const __nv_bfloat16* Vg = V + (long long)key0 * D + kcol;
    if ((kt + 1) * BKV <= Sk) {
#pragma unroll
      for (int i = 0; i < BKV / RP; ++i) {
        cp_async16(Kb + i * RP * LD, Kg + i * RP * D, 16);
        cp_async16(Vb + i * RP * LD, Vg + i * RP * D, 16);
      }
    } else { // the last, partial tile: zeros past Sk
#pragma unroll
      for (int i = 0; i < BKV / RP; ++i) {
        const bool in = key0 + i * RP < Sk;
        cp_async16(Kb + i * RP * LD, in ? Kg + i * RP * D : K, in ? 16 : 0);
        cp_async16(Vb + i * RP * LD, in ? Vg + i * RP * D : V, in ? 16 : 0);
      }
    }
  };
  // Causal: the block's last row, min(q0 + BQ, Sq) - 1, sees keys up to its position, that row +
  // off (at most Sk - 1); the key tiles past it are never loaded nor computed (the tiles above the
  // diagonal: about half of them where Sq = Sk).
  const int nkt = (min(q0 + BQ, Sq) - 1 + off) / BKV + 1;
  load_kv(0);
  cp_async_commit();

  // Q fragments: A operands of S = Q K^T, rows grp * RG + 16 mt + (lane % 16), 16 columns a slice.
  const __nv_bfloat16* Qw = Qs + (grp * RG + lane % 16) * LD + (lane / 16) * 8;
  unsigned qa[QREG ? KD : 1][MT][4];
  cp_async_wait<1>(); // Q has landed (tile 0 may still be in flight)
  __syncthreads();
  if constexpr (QREG) {
#pragma unroll
    for (int kk = 0; kk < KD; ++kk)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) ldsm_x4(qa[kk][mt], Qw + mt * 16 * LD + kk * 16);
  }

  float oacc[MT][D / 8][4]; // o: rows 16 mt + g and + 8 of the warp, columns 8n + 2t, 8n + 2t + 1
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      oacc[mt][n][0] = oacc[mt][n][1] = oacc[mt][n][2] = oacc[mt][n][3] = 0.0f;
  float m[MT][2], l[MT][2]; // rows 16 mt + g, + 8 (l: this lane's part)
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) m[mt][0] = m[mt][1] = -INFINITY, l[mt][0] = l[mt][1] = 0.0f;
  const float sl2 = 1.4426950408889634f / sqrtf((float)D); // log2(e) / sqrt(D): base-2 scores
  const int kofs = half * WK;                              // the warp's keys within a tile
  const int r0 = q0 + grp * RG + off; // the warp's first row, as a key position

  for (int kt = 0; kt < nkt; ++kt) {
    cp_async_wait<0>();                // this thread's copies of tile kt have landed
    __syncthreads();                   // everyone's have, and everyone is done with tile kt - 1
    if (kt + 1 < nkt) load_kv(kt + 1); // so its buffer takes tile kt + 1 while kt is computed
    cp_async_commit();
    const int k0 = kt * BKV + kofs; // the warp's first key
    if (k0 < Sk &&
        k0 <= r0 + RG - 1) { // a warp whose keys are all past Sk or its rows adds nothing
      const __nv_bfloat16* Kb = Ks + (kt & 1) * BKV * LD + kofs * LD;
      const __nv_bfloat16* Vb = Vs + (kt & 1) * BKV * LD + kofs * LD;

      // S = Q K^T: RG x WK per warp; each K fragment feeds MT mma.
      float s[MT][NF][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < NF; ++j) s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < KD; ++kk) {
        unsigned qf[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          if constexpr (QREG) {
#pragma unroll
            for (int i = 0; i < 4; ++i) qf[mt][i] = qa[kk][mt][i];
          } else {
            ldsm_x4(qf[mt], Qw + mt * 16 * LD + kk * 16);
          }
        }
#pragma unroll
        for (int np = 0; np < NF / 2; ++np) { // keys np*16 .. np*16 + 15: two fragments
          unsigned b[4];
          ldsm_x4(b, Kb + (np * 16 + (lane / 16) * 8 + lane % 8) * LD + kk * 16 +
                         ((lane / 8) % 2) * 8);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma_bf16(s[mt][2 * np], qf[mt], b[0], b[1]);
            mma_bf16(s[mt][2 * np + 1], qf[mt], b[2], b[3]);
          }
        }
      }

      // Online softmax, base 2, per m tile. Keys past the row (where the warp's last key passes its
      // first row: the diagonal) and past Sk get -inf; the other tiles need no mask.
      const bool edge = k0 + WK - 1 > r0 || k0 + WK > Sk;
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        if (edge) { // a separate pass, branched around: the compares cost issue slots on every tile
                    // otherwise
          const int lim = r0 + mt * 16 + lane / 4 - k0 -
                          2 * t; // key > row: j * 8 + (e & 1) > lim + (e / 2) * 8
#pragma unroll
          for (int j = 0; j < NF; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e)
              if (j * 8 + (e & 1) > lim + (e / 2) * 8 || k0 + j * 8 + 2 * t + (e & 1) >= Sk)
                s[mt][j][e] = -INFINITY;
        }
        float mx[2] = {m[mt][0], m[mt][1]};
#pragma unroll
        for (int j = 0; j < NF; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float x = s[mt][j][e] * sl2;
            s[mt][j][e] = x;
            mx[e / 2] = fmaxf(mx[e / 2], x);
          }
        float base[2], alpha[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1)); // the 4 lanes of a row
          mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
          base[i] = mx[i] == -INFINITY ? 0.0f : mx[i]; // a row with no key yet: keep exp2(-inf) = 0
          alpha[i] = ex2(m[mt][i] - base[i]);          // 0 on the first tile
          m[mt][i] = mx[i];
          l[mt][i] *= alpha[i];
        }
#pragma unroll
        for (int j = 0; j < NF; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float p = ex2(s[mt][j][e] - base[e / 2]);
            s[mt][j][e] = p;
            l[mt][e / 2] += p; // the unrounded weight
          }
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
          oacc[mt][n][0] *= alpha[0];
          oacc[mt][n][1] *= alpha[0];
          oacc[mt][n][2] *= alpha[1];
          oacc[mt][n][3] *= alpha[1];
        }
      }

      // O += P V: P straight from the score registers (bf16 pairs); each V fragment feeds MT mma.
#pragma unroll
      for (int kk = 0; kk < WK / 16; ++kk) {
        unsigned pa[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          pa[mt][0] = pack_bf16(s[mt][2 * kk][0], s[mt][2 * kk][1]);
          pa[mt][1] = pack_bf16(s[mt][2 * kk][2], s[mt][2 * kk][3]);
          pa[mt][2] = pack_bf16(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
          pa[mt][3] = pack_bf16(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
        }
#pragma unroll
        for (int dp = 0; dp < KD; ++dp) { // columns dp*16 .. dp*16 + 15 of o: two fragments
          unsigned b[4];
          ldsm_x4_t(b, Vb + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * LD + dp * 16 +
                           (lane / 16) * 8);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma_bf16(oacc[mt][2 * dp], pa[mt], b[0], b[1]);
            mma_bf16(oacc[mt][2 * dp + 1], pa[mt], b[2], b[3]);
          }
        }
      }
    }
  }
  __syncthreads(); // everyone is done with the last tile: the K/V buffers are free

  // The two warps of a row group saw different keys: the second (half 1) hands its m, l and o to
  // the first through the K/V buffers (free now), lane by lane in its own fragment order, which is
  // the first warp's too. The first rescales both to the larger max and adds.
  if constexpr (MT > 1) {
    static_assert(BQ * (D + 8) * 4 <= 8 * BKV * LD, "the merge must fit in the K/V buffers");
    constexpr int XF = MT * (D / 8) * 4 + 4 * MT; // floats one lane hands over
    float* X = reinterpret_cast<float*>(Ks) + grp * XF * 32 + lane;
    if (half == 1) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int n = 0; n < D / 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) X[((mt * (D / 8) + n) * 4 + e) * 32] = oacc[mt][n][e];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          X[(MT * (D / 8) * 4 + mt * 4 + i) * 32] = m[mt][i];
          X[(MT * (D / 8) * 4 + mt * 4 + 2 + i) * 32] = l[mt][i];
        }
      }
    }
    __syncthreads();
    if (half == 0) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        float a0[2], a1[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const float m1 = X[(MT * (D / 8) * 4 + mt * 4 + i) * 32],
                      l1 = X[(MT * (D / 8) * 4 + mt * 4 + 2 + i) * 32];
          const float mm = fmaxf(m[mt][i], m1); // finite: this warp saw key 0, which every row sees
          a0[i] = ex2(m[mt][i] - mm);
          a1[i] = ex2(m1 - mm); // 0 if the other warp saw no key of this row
          l[mt][i] = l[mt][i] * a0[i] + l1 * a1[i];
        }
#pragma unroll
        for (int n = 0; n < D / 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            oacc[mt][n][e] =
                oacc[mt][n][e] * a0[e / 2] + X[((mt * (D / 8) + n) * 4 + e) * 32] * a1[e / 2];
      }
    }
  }

  // o / l, through the warp's own rows of the Q tile, then 16-byte stores by the whole block.
  if (half == 0) {
    const int g = lane / 4;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      float inv[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        float lt = l[mt][i];
        lt += __shfl_xor_sync(0xffffffffu, lt, 1);
        lt += __shfl_xor_sync(0xffffffffu, lt, 2);
        inv[i] = 1.0f / lt;
      }
      __nv_bfloat16* Ow = Qs + (grp * RG + mt * 16) * LD;
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        *reinterpret_cast<unsigned*>(Ow + g * LD + n * 8 + 2 * t) =
            pack_bf16(oacc[mt][n][0] * inv[0], oacc[mt][n][1] * inv[0]);
        *reinterpret_cast<unsigned*>(Ow + (g + 8) * LD + n * 8 + 2 * t) =
            pack_bf16(oacc[mt][n][2] * inv[1], oacc[mt][n][3] * inv[1]);
      }
    }
  }
  __syncthreads();
  for (int c = tid; c < BQ * CH; c += NT) {
    const int r = c / CH, col = (c % CH) * 8, row = q0 + r;
    if (row < Sq)
      *reinterpret_cast<uint4*>(O + (long long)row * D + col) =
          *reinterpret_cast<const uint4*>(Qs + r * LD + col);
  }
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
    causal_flash_attention(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                           const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o,
                           int B, int Hq, int Hkv, int Sq, int Sk, int D) {
  const int b = blockIdx.y / Hq, h = blockIdx.y % Hq,
            hkv = h / (Hq / Hkv); // GQA: groups of Hq / Hkv
  const long long qhead = ((long long)b * Hq + h) * Sq * D,
                  kvhead = ((long long)b * Hkv + hkv) * Sk * D;
  // The longest query tiles first: blocks start in the order of their linear index (x fastest),
  // so x = 0 is the head's last query tile, which has the most key tiles, and its short tiles come
  // last: the final wave of the grid is short blocks, which fill the gaps the long ones leave.
  const int q0 = (gridDim.x - 1 - blockIdx.x) * BQ;
  if (D == 64)
    attend<64>(q + qhead, k + kvhead, v + kvhead, o + qhead, Sq, Sk, q0);
  else
    attend<128>(q + qhead, k + kvhead, v + kvhead, o + qhead, Sq, Sk, q0);
}
