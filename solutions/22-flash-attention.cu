// Solution · 22 FlashAttention forward (FlashAttention-2 style), bf16 in and out, f32 inside
//
// What: o = softmax(q k^T / sqrt(D)) v for every (sequence, head), q k v o [B, H, S, D] bf16,
// D = 64 or 128. One block of 8 warps per 128 query rows of one head (BQ = 128; the launch gives
// 2 x BQ threads). Each warp owns 32 rows (two m16 tiles, MT = 2) and half of the keys of every
// 128-key tile (BKV = 128): warps w and w + 4 hold the same rows, w the keys 0 .. 63 of each tile
// and w + 4 the keys 64 .. 127, each with its own running max, sum and o; at the end the second
// hands its state to the first, which merges the two.
//   - Q: the block's 128 x D tile is copied to shared memory once (cp.async). At D = 128 each warp
//     re-reads its 32 x D slice with ldmatrix.x4 for every tile (QREG128 = 0: the 64 score
//     registers leave no room to hold it); at D = 64 it stays in registers. These are the A
//     operands of every S = Q K^T.
//   - K and V: 128-key tiles streamed through a double buffer in shared memory with cp.async
//     (16 bytes global to shared, no registers; a source size of 0 writes the zeros past S). One
//     barrier per tile: wait for tile j, __syncthreads() (everyone has it, and everyone is done
//     with tile j - 1), then start tile j + 1 into j - 1's buffer and compute j while it flies.
//     Rows are padded to D + 8 halves so that ldmatrix is free of bank conflicts.
//   - S = Q K^T: mma.sync.m16n8k16 bf16 -> f32. K stored [key][d] is already the "col" B operand,
//     so plain ldmatrix.x4 gives the fragments of two 8-key blocks per instruction, and each
//     fragment feeds two mma, one per m tile. A warp's 32 x 32 tile of scores: 32 floats per lane.
//   - Online softmax in registers, base 2: s * log2(e) / sqrt(D), the running max m (per row, over
//     the 4 lanes of a quad: two shuffles), p = exp2(s - m), o and the partial sums l scaled by
//     exp2(m_old - m_new) when the max moves. Keys past S get -inf, in a pass of compares that is
//     branched around on every tile but the last. A warp whose keys all lie past S skips the tile.
//   - O += P V: the f32 score fragments, rounded to bf16 and packed in pairs, ARE the A fragments
//     of the next mma (the C layout of m16n8k16 is the A layout of two adjacent 8-column blocks),
//     so P never touches shared memory. V stored [key][d] is the row-major B: ldmatrix.x4.trans,
//     each fragment again feeding two mma.
//   - Merge: the two warps of a row group hold their fragments in the same lane layout, so the
//     second writes its o, m and l lane by lane into the (now free) K/V buffers and the first
//     reads them back at the same places: m = max(m1, m2), o = o1 2^(m1 - m) + o2 2^(m2 - m), the
//     same for l. The first warp saw key 0, so m is finite; a warp that saw no key of a row
//     (m2 = -inf) contributes 2^-inf = 0.
//   - End: o / l (l summed over the quad), staged through the Q tile and written by the whole block
//     with 16-byte stores; rows past S are skipped.
//   - Knobs: MT (1: one m tile per warp, all 4 warps on distinct rows), BKV
//     (keys per block tile), QREG128 (0: Q re-read from shared memory for every tile at D = 128).
// Run:  warpbook check 22-flash-attention solutions/22-flash-attention.cu
//       warpbook predict 22-flash-attention solutions/22-flash-attention.cu
//
// Why: the naive form writes the S x S scores to memory and reads them back (softmax, then P V):
// at the perf size that is 4 x 32 x 4096^2 x 4 bytes = 8.6 GB of f32 scores each way, against
// 537 MB for q, k, v and o. Computed tile by tile with the online softmax, the scores never leave
// the SM, and the kernel is compute-bound: 1100 GFLOP at 2048 FLOP per DRAM byte. Inside the SM
// the tensor cores are fed by ldmatrix from shared memory (128 B/clk). With 16 rows per warp each
// K or V fragment (ldmatrix.x4, 512 B) feeds 2 mma of 4096 FLOP: 16 FLOP per shared byte, about
// 2048 FLOP/clk/SM, under mma.sync's ~2450. With 32 rows per warp it feeds 4 mma: 32 FLOP per
// byte (the Q re-read adds 8 KB per warp per tile: 26 FLOP per byte in all), and shared memory is
// no longer the wall (FlashAttention-2's head-dim-128 kernel makes the same choice: blocks of 128
// rows, 4 warps, 32 rows a warp). The launch gives 2 x BQ threads, so 32 rows a warp means two
// warps per row group: they split the keys, not the rows, and meet once at the end. Registers are
// the price: o 128 and scores 64 floats per lane at D = 128, 255 with __launch_bounds__(256, 1),
// no spills. The softmax costs per score one FMUL, one max, one FADD, one ex2 and half a cvt, and
// per 64-key step the rescale of 128 accumulators.
// Shared memory: Q 128 x (D + 8) + 2 x 2 x 128 x (D + 8) halves = 174080 B at D = 128 (dynamic,
// set by the SMEM tunable), one block of 8 warps per SM; the merge needs BQ x (D + 8) x 4 bytes,
// exactly the K/V buffers' size at BQ = BKV. L2 serves S / 128 x (K + V) per head, half of what
// 64-row blocks read.
//
// Napkin maths at the perf size (B 4, H 32, S 4096, D 128): 4 B H S^2 D = 1.10 TFLOP; at 989
// TFLOP/s 1.11 ms on the H200, at mma.sync's measured ~646 TFLOP/s 1.70 ms. The bytes, 537 MB,
// take 112 us at 4.8 TB/s: a tenth of the time. A100 80 GB (312 TFLOP/s bf16): 3.5 ms; RTX 4090
// (165 TFLOP/s dense bf16 with f32 accumulation): 6.7 ms.
// Predicted by `warpbook predict` for the H200: this file 3375 us (0.97 of the H200); 16 rows a
// warp (below) 3821 us (1.03); BQ = 64 with 4 warps, MT = 2, BKV = 64 and Q in registers (255
// registers, about 50 bytes of spills) 3038 us (0.66: the spills' traffic is not in the model); the
// same with Q re-read (243 registers) 3611 us; MT = 1 with one barrier per tile (BQ = 64, Q in
// registers) 3666 us.
// Measured on the H200 (`warpbook check`, all in one run, median): this file 3486.5 us, 315
// TFLOP/s, 49% of the mma.sync ceiling `warpbook probe` measures (646 TFLOP/s). PyTorch's SDPA
// forced to its flash backend (FlashAttention-2) takes 3102.1 us: this file is 0.89x of it (the bar
// docs/vs-torch-h200.md sets: 0.8x). SDPA with its default backend takes 1779 us (618 TFLOP/s); the
// Triton kernel of the README 2875 us.
// What loses, and by how much (side by side with this file unless said):
//   - 16 rows a warp (one m tile) and all 64 keys of each tile, Q in registers, two barriers per
//     tile: 3697.0 us (297 TFLOP/s, silver), 0.84x of SDPA's flash backend. On that form, the K/V
//     copy addresses worked out per chunk per tile instead of once 3902 us against 3704 (5%
//     slower); BQ = 128 with 8 warps of 16 rows 4646 us (206 registers, one block per SM, barriers
//     over 8 warps).
//   - BQ = 64 with Q in registers 4594.0 us: the model's favourite (3038 us), but the spills and
//     the 2-blocks-per-SM shape cost more than it thinks; BQ = 64 with Q re-read 4145.3 us; MT = 1
//     with one barrier per tile 3914.8 us.
// measured: 3486.45 us on NVIDIA H200
// measured: 3491.62 us on NVIDIA H100 80GB HBM3
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

// One block: rows q0 .. q0 + BQ - 1 of one head. Q, K, V, O point at that head's [S][D].
template <int D>
__device__ __forceinline__ void
attend(const __nv_bfloat16* __restrict__ Q, const __nv_bfloat16* __restrict__ K,
       const __nv_bfloat16* __restrict__ V, __nv_bfloat16* __restrict__ O, int S, int q0) {
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
    const bool in = q0 + r < S;
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
    if ((kt + 1) * BKV <= S) {
#pragma unroll
      for (int i = 0; i < BKV / RP; ++i) {
        cp_async16(Kb + i * RP * LD, Kg + i * RP * D, 16);
        cp_async16(Vb + i * RP * LD, Vg + i * RP * D, 16);
      }
    } else { // the last, partial tile: zeros past S
#pragma unroll
      for (int i = 0; i < BKV / RP; ++i) {
        const bool in = key0 + i * RP < S;
        cp_async16(Kb + i * RP * LD, in ? Kg + i * RP * D : K, in ? 16 : 0);
        cp_async16(Vb + i * RP * LD, in ? Vg + i * RP * D : V, in ? 16 : 0);
      }
    }
  };
  const int nkt = (S + BKV - 1) / BKV;
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

  for (int kt = 0; kt < nkt; ++kt) {
    cp_async_wait<0>();                // this thread's copies of tile kt have landed
    __syncthreads();                   // everyone's have, and everyone is done with tile kt - 1
    if (kt + 1 < nkt) load_kv(kt + 1); // so its buffer takes tile kt + 1 while kt is computed
    cp_async_commit();
    const int k0 = kt * BKV + kofs; // the warp's first key
    if (k0 < S) {                   // (a warp whose keys are all past S has nothing to add)
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

      // Online softmax, base 2, per m tile. Keys past S (the last tile only) get -inf.
      const bool edge = k0 + WK > S;
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        if (edge) // a separate pass, branched around: the compares cost issue slots on every tile
                  // otherwise
#pragma unroll
          for (int j = 0; j < NF; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e)
              if (k0 + j * 8 + 2 * t + (e & 1) >= S) s[mt][j][e] = -INFINITY;
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
          const float mm = fmaxf(m[mt][i], m1); // finite: this warp saw key 0
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
    if (row < S)
      *reinterpret_cast<uint4*>(O + (long long)row * D + col) =
          *reinterpret_cast<const uint4*>(Qs + r * LD + col);
  }
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
    flash_attention(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                    const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o, int B,
                    int H, int S, int D) {
  const long long head = (long long)blockIdx.y * S * D;
  const int q0 = blockIdx.x * BQ;
  if (D == 64)
    attend<64>(q + head, k + head, v + head, o + head, S, q0);
  else
    attend<128>(q + head, k + head, v + head, o + head, S, q0);
}
