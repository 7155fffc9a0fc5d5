// Solution · 38 FlashAttention-2 backward (dq, dk, dv), bf16 in and out, f32 inside
//
// What: the gradients of o = softmax(q k^T / sqrt(D) + mask) v for every (sequence, head), D = 128,
// from q, k, v, o, dout and the forward's lse. Three kernels:
//   - attn_bwd_preprocess: delta_i = dout_i . o_i in f32 (a warp a row, 4 elements a lane, five
//     shuffles) and the row of dq_accum cleared with one 16-byte store a lane.
//   - attn_bwd: FlashAttention-2's loop order, keys outside. A block of BKV / 16 warps owns BKV
//     keys; warp w owns keys 16 w .. 16 w + 15 and keeps their dk and dv (16 x 128 f32 each, 128
//     registers a lane in all) in mma accumulator fragments for the whole loop over query tiles.
//     K and V are copied to shared memory once (cp.async, zeros past Sk); q and dout tiles of BQ
//     rows, with lse (times log2 e) and delta, stream through a double buffer, one barrier per
//     tile as in puzzle 22: wait, __syncthreads(), start tile j + 1 into the other buffer, compute
//     tile j. Rows are padded to D + 8 halves (conflict-free ldmatrix).
//     Per tile, every product is an mma.sync.m16n8k16 (bf16 in, f32 out):
//       s^T = K q^T and dp^T = V dout^T: A = the warp's K (or V) rows by ldmatrix, B = q (dout)
//         as stored [query][d], which is the "col" operand: plain ldmatrix.x4, one per 16 queries
//         feeding two mma. Transposed on purpose: the accumulator layout of s^T (keys as rows) is
//         the A layout of the next two products, so p and ds never leave the registers for them.
//       p = 2^(s log2(e) / sqrt(D) - lse log2(e)) (one FFMA and one ex2), 0 where masked: past Sq
//         or Sk, or above the causal diagonal, tested only on tiles that cross an edge or the
//         diagonal; ds = p (dp - delta). Both packed to bf16 pairs.
//       dv += p^T dout and dk += ds^T q: B = dout and q as row-major [query][d], ldmatrix.x4.trans.
//       dq += ds K: ds^T goes to shared memory as [key][query] (bf16), a barrier, and warp w takes
//         a 16-row, D / (NW / (BQ / 16))-column piece of the tile's dq: A = ds through
//         ldmatrix.trans of the transposed storage, B = K as stored (ldmatrix.trans). The piece is
//         added into dq_accum (f32) with atomics: lanes t and t ^ 1 swap halves with one shuffle
//         pair so that each holds 4 consecutive columns of one row, and add them with one
//         red.global.add.v4.f32 (RED = 4; compute capability 9.0).
//     Causal: key block k0 is first seen by query k0 - (Sk - Sq); the loop starts at its tile.
//     End: dk / sqrt(D) and dv rounded to bf16 and stored from the fragments.
//   - attn_bwd_dq: dq = dq_accum / sqrt(D) in bf16, 4 elements a thread.
// Run:  warpbook check 38-flash-attention-backward solutions/38-flash-attention-backward.cu
//       warpbook predict 38-flash-attention-backward solutions/38-flash-attention-backward.cu --gpu
//       h100-sxm
//
// Why: the five products per (query, key) pair (10 D FLOPs) are the work, 2.5 times the forward's,
// and the kernel must keep them on the tensor cores. Keys outside means dk and dv, which sum over
// queries, are reduced in registers and written once; dq, which sums over keys, takes one
// addition per element per key block: Sq D Sk / BKV per head, 1.07 G floats at the perf size with
// BKV = 128. One scalar atomic per float is what the L2's atomic units see; a 16-byte red moves
// four floats in one operation. BKV = 128 (8 warps, 256 threads) halves those additions against
// 64 and is as large as the registers allow: dk and dv 128 f32 a lane, s and dp 64 more while a
// tile is in flight. BQ = 64 keeps s^T and dp^T at 32 floats each.
// Shared memory at BKV = 128, BQ = 64: K, V 2 x 128 x 136 x 2 B, q and dout 2 x 2 x 64 x 136 x 2 B,
// ds 128 x 72 x 2 B, lse and delta 1 KB: 155 KB, one block per SM.
//
// Napkin maths at the perf size (B 4, H 16, S 4096, D 128, not causal): 10 B H S^2 D = 1.37 TFLOP;
// at the datasheet's 989 TFLOP/s 1.39 ms, at mma.sync's ~646 TFLOP/s (`warpbook probe` on our H200)
// 2.1 ms. Each warp reads q and dout twice per tile through ldmatrix (64 KB for 1.3 MFLOP: 20 FLOP
// per shared byte), and the dq atomics move 4.3 GB of f32 into the L2.
// Predicted by `warpbook predict` for the H100 SXM: 6.77 ms, 203 TFLOP/s, 0.21 of the datasheet
// (silver; 255 registers, 24 bytes of spills); for the H200: 5.98 ms, 230 TFLOP/s. The model's
// limiters: shared-memory wavefronts (ldmatrix: each of the 8 warps reads the whole q and dout
// tile), the L2 (q and dout re-read by each of the Sk / BKV key blocks, and the dq atomics), and
// the atomic units.
// What loses (predicted for the H100 SXM, the same file with one knob changed):
//   - RED = 1, one atomicAdd per float (FlashAttention-2's own form on sm80): 16.6 ms, the L2's
//     atomic units busy for most of it.
//   - RED = 2 (red.global.add.v2.f32 straight from the fragment, no shuffle): 9.94 ms.
//   - BKV = 64 (4 warps, two blocks an SM): twice the dq additions, and still 6.48 ms: the model
//     likes the second block's overlap of barriers; on a GPU that is for `warpbook tune` to say.
//     BQ = 32: 6.87 ms.
//   - What would win (FlashAttention-2's own layout): warps arranged 2 x 4 over the s tile, with
//     p and ds through shared memory, so that each warp reads a quarter of q and dout instead of
//     all of it, and dk, dv split over D so that each B fragment feeds two m tiles.
//   - dq by a second kernel with queries outside (Triton's tutorial; deterministic): s and dp
//     computed twice, 7 products per pair instead of 5, 40% more tensor-core work for no atomics.
// Measured on an H100 80GB HBM3 (`warpbook check`, scripts/puzzles_vs_torch.sh in the same run):
// 5.93 ms, 232 TFLOP/s, 24.5% of the datasheet: silver, short of the 30% gold bar. SDPA's flash
// backward took 4.74 ms (this file is 0.81x of it, short of the 1.0x bar), the Triton form 19.1 ms.
// On an NVIDIA H200 (`warpbook check` in the gpu test): 5928.94 us, 24.1% of the speed of light
// there: silver, short of the 30% gold bar.
// measured: 5928.94 us on NVIDIA H200
// measured: 5931.12 us on NVIDIA H100 80GB HBM3
// @tune BKV=64
// @tune BQ=64
// @tune RED=4

#include <cuda_bf16.h>

#define NW (BKV / 16) // warps: 16 keys each (the launch gives 2 * BKV threads)
#define NT (NW * 32)
#define DH 128       // the head dimension every case uses
#define LD (DH + 8)  // halves per shared row of q, dout, k, v (conflict-free ldmatrix)
#define LDS (BQ + 8) // halves per shared row of ds^T
#define MQ (BQ / 16) // m16 tiles of query rows in dq = ds k
#define DSPLIT (NW >= MQ ? NW / MQ : 1) // warps that share one m tile of dq, each a slice of D
#define DW (DH / DSPLIT)                // columns of dq one warp takes
#define LOG2E 1.4426950408889634f

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
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// Vector reductions into global f32 (sm_90): one L2 atomic operation for 2 or 4 floats.
__device__ __forceinline__ void red_v4(float* p, float a, float b, float c, float d) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(a), "f"(b), "f"(c),
               "f"(d)
               : "memory");
}
__device__ __forceinline__ void red_v2(float* p, float a, float b) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<unsigned*>(&h);
}

// delta_i = dout_i . o_i in f32, one warp a row (4 elements a lane), and row i of dq_accum zeroed.
extern "C" __global__ void __launch_bounds__(256)
    attn_bwd_preprocess(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                        const __nv_bfloat16* __restrict__ o, const __nv_bfloat16* __restrict__ dout,
                        const float* lse, __nv_bfloat16* dq, __nv_bfloat16* dk, __nv_bfloat16* dv,
                        float* __restrict__ dq_accum, float* __restrict__ delta, int B, int H,
                        int Sq, int Sk, int D, int causal) {
  const long long row = (long long)blockIdx.x * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= (long long)B * H * Sq) return;
  const uint2 ov = *reinterpret_cast<const uint2*>(o + row * DH + lane * 4);
  const uint2 dv2 = *reinterpret_cast<const uint2*>(dout + row * DH + lane * 4);
  const float2 o0 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&ov.x));
  const float2 o1 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&ov.y));
  const float2 d0 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&dv2.x));
  const float2 d1 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&dv2.y));
  float s = o0.x * d0.x + o0.y * d0.y + o1.x * d1.x + o1.y * d1.y;
#pragma unroll
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) delta[row] = s;
  *reinterpret_cast<float4*>(dq_accum + row * DH + lane * 4) = make_float4(0.f, 0.f, 0.f, 0.f);
}

extern "C" __global__ void __launch_bounds__(NT, 1)
    attn_bwd(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
             const __nv_bfloat16* __restrict__ v, const __nv_bfloat16* o,
             const __nv_bfloat16* __restrict__ dout, const float* __restrict__ lse,
             __nv_bfloat16* dq, __nv_bfloat16* __restrict__ dk, __nv_bfloat16* __restrict__ dv,
             float* dq_accum, const float* __restrict__ delta_g, int B, int H, int Sq, int Sk,
             int D, int causal) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16* Ks = reinterpret_cast<__nv_bfloat16*>(smem_raw); // [BKV][LD]
  __nv_bfloat16* Vs = Ks + BKV * LD;                              // [BKV][LD]
  __nv_bfloat16* Qs = Vs + BKV * LD;                              // [2][BQ][LD]
  __nv_bfloat16* Os = Qs + 2 * BQ * LD;                           // [2][BQ][LD]: dout
  __nv_bfloat16* Ss = Os + 2 * BQ * LD;                           // [BKV][LDS]: ds^T
  float* Ls = reinterpret_cast<float*>(Ss + BKV * LDS);           // [2][BQ]: lse log2(e)
  float* Es = Ls + 2 * BQ;                                        // [2][BQ]: delta

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const long long hq = (long long)blockIdx.y * Sq, hk = (long long)blockIdx.y * Sk;
  const __nv_bfloat16 *Q = q + hq * DH, *dO = dout + hq * DH;
  const __nv_bfloat16 *K = k + hk * DH, *V = v + hk * DH;
  const float *L = lse + hq, *E = delta_g + hq;
  float* dQa = dq_accum + hq * DH;
  const int k0 = blockIdx.x * BKV;
  const float scale = rsqrtf((float)DH), sl2 = scale * LOG2E;
  constexpr int CH = DH / 8; // 16-byte chunks per row

  // K and V of the block's keys, once; zeros past Sk.
  for (int c = tid; c < BKV * CH; c += NT) {
    const int r = c / CH, col = (c % CH) * 8;
    const bool in = k0 + r < Sk;
    const long long go = in ? (long long)(k0 + r) * DH + col : 0;
    cp_async16(Ks + r * LD + col, K + go, in ? 16 : 0);
    cp_async16(Vs + r * LD + col, V + go, in ? 16 : 0);
  }
  auto load_q = [&](int qt, int buf) {
    const int q0 = qt * BQ;
    for (int c = tid; c < BQ * CH; c += NT) {
      const int r = c / CH, col = (c % CH) * 8;
      const bool in = q0 + r < Sq;
      const long long go = in ? (long long)(q0 + r) * DH + col : 0;
      cp_async16(Qs + (buf * BQ + r) * LD + col, Q + go, in ? 16 : 0);
      cp_async16(Os + (buf * BQ + r) * LD + col, dO + go, in ? 16 : 0);
    }
    for (int r = tid; r < BQ; r += NT) {
      const bool in = q0 + r < Sq;
      Ls[buf * BQ + r] = in ? L[q0 + r] * LOG2E : 0.0f;
      Es[buf * BQ + r] = in ? E[q0 + r] : 0.0f;
    }
  };
  // Causal: the first query that sees key k0 is k0 - (Sk - Sq); the tiles before it see none.
  const int qt0 = causal ? max(0, k0 - (Sk - Sq)) / BQ : 0;
  const int nqt = (Sq + BQ - 1) / BQ;
  if (qt0 < nqt) load_q(qt0, 0);
  cp_async_commit();

  float dka[DH / 8][4], dva[DH / 8][4]; // rows g, g + 8 of the warp's keys, columns 8n + 2t, +1
#pragma unroll
  for (int n = 0; n < DH / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) dka[n][e] = dva[n][e] = 0.0f;

  const int kw = warp * 16; // the warp's keys within the block
  for (int qt = qt0; qt < nqt; ++qt) {
    const int buf = (qt - qt0) & 1, q0 = qt * BQ;
    cp_async_wait<0>();
    __syncthreads(); // tile qt is in; everyone is done with tile qt - 1 and with ds
    if (qt + 1 < nqt) load_q(qt + 1, buf ^ 1);
    cp_async_commit();
    const __nv_bfloat16* Qb = Qs + buf * BQ * LD;
    const __nv_bfloat16* Ob = Os + buf * BQ * LD;
    const float* Lb = Ls + buf * BQ;
    const float* Eb = Es + buf * BQ;

    // s^T = K Q^T and dp^T = V dout^T: the warp's 16 keys by BQ queries.
    float s[BQ / 8][4], dp[BQ / 8][4];
#pragma unroll
    for (int n = 0; n < BQ / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] = dp[n][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < DH / 16; ++kk) {
      unsigned ka[4], va[4];
      ldsm_x4(ka, Ks + (kw + lane % 16) * LD + kk * 16 + (lane / 16) * 8);
      ldsm_x4(va, Vs + (kw + lane % 16) * LD + kk * 16 + (lane / 16) * 8);
#pragma unroll
      for (int np = 0; np < BQ / 16; ++np) {
        const int off =
            (np * 16 + (lane / 16) * 8 + lane % 8) * LD + kk * 16 + ((lane / 8) % 2) * 8;
        unsigned b[4];
        ldsm_x4(b, Qb + off);
        mma_bf16(s[2 * np], ka, b[0], b[1]);
        mma_bf16(s[2 * np + 1], ka, b[2], b[3]);
        ldsm_x4(b, Ob + off);
        mma_bf16(dp[2 * np], va, b[0], b[1]);
        mma_bf16(dp[2 * np + 1], va, b[2], b[3]);
      }
    }

    // p = 2^(s log2(e) / sqrt(D) - lse log2(e)), 0 where masked; ds = p (dp - delta).
    const bool edge = q0 + BQ > Sq || k0 + BKV > Sk || (causal && k0 + BKV - 1 > q0 + Sk - Sq);
#pragma unroll
    for (int n = 0; n < BQ / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int qi = n * 8 + 2 * t + (e & 1);
        float p = ex2(fmaf(s[n][e], sl2, -Lb[qi]));
        if (edge) {
          const int key = k0 + kw + g + 8 * (e / 2), qg = q0 + qi;
          if (qg >= Sq || key >= Sk || (causal && key > qg + Sk - Sq)) p = 0.0f;
        }
        s[n][e] = p;
        dp[n][e] = p * (dp[n][e] - Eb[qi]);
      }

    // ds^T to shared memory (bf16) for dq; p and ds as A fragments straight from the registers.
    unsigned pa[BQ / 16][4], da[BQ / 16][4];
#pragma unroll
    for (int kk = 0; kk < BQ / 16; ++kk) {
      pa[kk][0] = pack_bf16(s[2 * kk][0], s[2 * kk][1]);
      pa[kk][1] = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
      pa[kk][2] = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      pa[kk][3] = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
      da[kk][0] = pack_bf16(dp[2 * kk][0], dp[2 * kk][1]);
      da[kk][1] = pack_bf16(dp[2 * kk][2], dp[2 * kk][3]);
      da[kk][2] = pack_bf16(dp[2 * kk + 1][0], dp[2 * kk + 1][1]);
      da[kk][3] = pack_bf16(dp[2 * kk + 1][2], dp[2 * kk + 1][3]);
      __nv_bfloat16* Sw = Ss + (kw + g) * LDS + kk * 16 + 2 * t;
      *reinterpret_cast<unsigned*>(Sw) = da[kk][0];
      *reinterpret_cast<unsigned*>(Sw + 8 * LDS) = da[kk][1];
      *reinterpret_cast<unsigned*>(Sw + 8) = da[kk][2];
      *reinterpret_cast<unsigned*>(Sw + 8 * LDS + 8) = da[kk][3];
    }

    // dv += p^T dout and dk += ds^T q: B operands are dout and q as stored, [query][d].
#pragma unroll
    for (int kk = 0; kk < BQ / 16; ++kk)
#pragma unroll
      for (int dpi = 0; dpi < DH / 16; ++dpi) {
        const int off =
            (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * LD + dpi * 16 + (lane / 16) * 8;
        unsigned b[4];
        ldsm_x4_t(b, Ob + off);
        mma_bf16(dva[2 * dpi], pa[kk], b[0], b[1]);
        mma_bf16(dva[2 * dpi + 1], pa[kk], b[2], b[3]);
        ldsm_x4_t(b, Qb + off);
        mma_bf16(dka[2 * dpi], da[kk], b[0], b[1]);
        mma_bf16(dka[2 * dpi + 1], da[kk], b[2], b[3]);
      }
    __syncthreads(); // all of ds^T is in shared memory

    // dq (BQ x D) += ds K over the block's keys: warp w takes m tile w % MQ, columns
    // (w / MQ) DW .. + DW - 1, and adds its sums into dq_accum (every key block adds to them).
    for (int u = warp; u < MQ * DSPLIT; u += NW) {
      const int m0 = (u % MQ) * 16, c0 = (u / MQ) * DW;
      float acc[DW / 8][4];
#pragma unroll
      for (int n = 0; n < DW / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < BKV / 16; ++kk) {
        unsigned a[4];
        ldsm_x4_t(a, Ss + (kk * 16 + (lane / 16) * 8 + lane % 8) * LDS + m0 + ((lane / 8) % 2) * 8);
#pragma unroll
        for (int dpi = 0; dpi < DW / 16; ++dpi) {
          unsigned b[4];
          ldsm_x4_t(b, Ks + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * LD + c0 + dpi * 16 +
                           (lane / 16) * 8);
          mma_bf16(acc[2 * dpi], a, b[0], b[1]);
          mma_bf16(acc[2 * dpi + 1], a, b[2], b[3]);
        }
      }
      const int r0 = q0 + m0 + g;
#pragma unroll
      for (int n = 0; n < DW / 8; ++n) {
        const int col = c0 + n * 8 + 2 * t;
#if RED == 4
        // Lanes t and t ^ 1 swap halves: the even one then holds 4 consecutive floats of row g,
        // the odd one 4 of row g + 8, and each adds them with one 16-byte red.
        const bool ev = (t & 1) == 0;
        const float x0 = __shfl_xor_sync(0xffffffffu, ev ? acc[n][2] : acc[n][0], 1);
        const float x1 = __shfl_xor_sync(0xffffffffu, ev ? acc[n][3] : acc[n][1], 1);
        const int r = ev ? r0 : r0 + 8;
        if (r < Sq) {
          float* a = dQa + (long long)r * DH + (ev ? col : col - 2);
          if (ev)
            red_v4(a, acc[n][0], acc[n][1], x0, x1);
          else
            red_v4(a, x0, x1, acc[n][2], acc[n][3]);
        }
#elif RED == 2
        if (r0 < Sq) red_v2(dQa + (long long)r0 * DH + col, acc[n][0], acc[n][1]);
        if (r0 + 8 < Sq) red_v2(dQa + (long long)(r0 + 8) * DH + col, acc[n][2], acc[n][3]);
#else
        if (r0 < Sq) {
          atomicAdd(dQa + (long long)r0 * DH + col, acc[n][0]);
          atomicAdd(dQa + (long long)r0 * DH + col + 1, acc[n][1]);
        }
        if (r0 + 8 < Sq) {
          atomicAdd(dQa + (long long)(r0 + 8) * DH + col, acc[n][2]);
          atomicAdd(dQa + (long long)(r0 + 8) * DH + col + 1, acc[n][3]);
        }
#endif
      }
    }
  }

  // dk (times 1 / sqrt(D)) and dv, rounded to bf16, straight from the fragments.
  const int r0 = k0 + kw + g;
#pragma unroll
  for (int n = 0; n < DH / 8; ++n) {
    const int col = n * 8 + 2 * t;
    if (r0 < Sk) {
      *reinterpret_cast<unsigned*>(dk + (hk + r0) * DH + col) =
          pack_bf16(dka[n][0] * scale, dka[n][1] * scale);
      *reinterpret_cast<unsigned*>(dv + (hk + r0) * DH + col) = pack_bf16(dva[n][0], dva[n][1]);
    }
    if (r0 + 8 < Sk) {
      *reinterpret_cast<unsigned*>(dk + (hk + r0 + 8) * DH + col) =
          pack_bf16(dka[n][2] * scale, dka[n][3] * scale);
      *reinterpret_cast<unsigned*>(dv + (hk + r0 + 8) * DH + col) = pack_bf16(dva[n][2], dva[n][3]);
    }
  }
}

// dq = dq_accum / sqrt(D), 4 elements a thread (B H Sq D is a multiple of 128).
extern "C" __global__ void __launch_bounds__(256)
    attn_bwd_dq(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                const __nv_bfloat16* o, const __nv_bfloat16* dout, const float* lse,
                __nv_bfloat16* __restrict__ dq, __nv_bfloat16* dk, __nv_bfloat16* dv,
                const float* __restrict__ dq_accum, float* delta, int B, int H, int Sq, int Sk,
                int D, int causal) {
  const long long i = ((long long)blockIdx.x * 256 + threadIdx.x) * 4;
  if (i >= (long long)B * H * Sq * DH) return;
  const float scale = rsqrtf((float)DH);
  const float4 a = *reinterpret_cast<const float4*>(dq_accum + i);
  uint2 r;
  r.x = pack_bf16(a.x * scale, a.y * scale);
  r.y = pack_bf16(a.z * scale, a.w * scale);
  *reinterpret_cast<uint2*>(dq + i) = r;
}
