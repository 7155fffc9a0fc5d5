// Solution · 22 FlashAttention forward (FlashAttention-2 style), bf16 in and out, f32 inside
//
// What: o = softmax(q k^T / sqrt(D)) v for every (sequence, head), q k v o [B, H, S, D] bf16,
// D = 64 or 128. One block of 4 warps per 64 query rows of one head; each warp owns 16 rows and
// never shares them, so the softmax state of a row lives in the registers of the 4 lanes that
// hold it and the block's warps meet only at the shared K and V tiles.
//   - Q: the block's 64 x D tile is copied to shared memory once (cp.async) and each warp loads its
//     16 x D slice into registers with ldmatrix.x4: the A operand of every S = Q K^T.
//   - K and V: 64-key tiles streamed through a double buffer in shared memory with cp.async
//     (16 bytes global to shared, no registers; a source size of 0 writes the zeros past S). While
//     the warps work on tile j, tile j + 1 is in flight. Rows are padded to D + 8 halves so that
//     the 8 rows one ldmatrix phase reads fall in 8 different groups of 4 banks.
//   - S = Q K^T: mma.sync.m16n8k16 bf16 -> f32. K stored [key][d] is already the "col" B operand,
//     so plain ldmatrix.x4 gives the fragments of two 8-key blocks per instruction. A warp's
//     16 x 64 tile of scores is 8 accumulator fragments, 32 floats per lane.
//   - Online softmax in registers, base 2: s * log2(e) / sqrt(D), the running max m (per row, over
//     the 4 lanes of a quad: two shuffles), p = exp2(s - m), o and the partial sums l scaled by
//     exp2(m_old - m_new) when the max moves. Keys past S get -inf (only in the last tile).
//   - O += P V: the f32 score fragments, rounded to bf16 and packed in pairs, ARE the A fragments
//     of the next mma (the C layout of m16n8k16 is the A layout of two adjacent 8-column blocks),
//     so P never touches shared memory. V stored [key][d] is the row-major B: ldmatrix.x4.trans.
//   - End: o / l (l summed over the quad), staged through the warp's own rows of the Q tile (free
//     since its fragments were loaded) and written with 16-byte stores; rows past S are skipped.
// Run:  warpbook check 22-flash-attention solutions/22-flash-attention.cu
//       warpbook predict 22-flash-attention solutions/22-flash-attention.cu
//
// Why: the naive form writes the S x S scores to memory and reads them back (softmax, then P V):
// at the perf size that is 4 x 32 x 4096^2 x 4 bytes = 8.6 GB of f32 scores each way, against
// 537 MB for q, k, v and o. Computed tile by tile with the online softmax, the scores never leave
// the SM, and the kernel is compute-bound: 1100 GFLOP at 2048 FLOP per DRAM byte. Per 64-key tile
// a warp issues 2 x 8 x D/16 mma (128 at D = 128) against 4 x D/16 ldmatrix.x4 for K and as many
// for V: 4096 FLOPs per 256 bytes of shared memory read, 16 FLOP/B, so shared memory (128 B/clk)
// alone allows about 2048 FLOP/clk/SM, near the ~2450 of mma.sync's measured ceiling. What it
// costs besides the tensor cores: per score one FMUL, one max, one FADD, one ex2 and half a cvt,
// and per tile the rescale of 64 accumulators (D = 128). K and V tiles are read by all 4 warps
// from shared memory: 64 query rows per load of K and V, so L2 serves S / 64 x (K + V) per head.
// Shared memory: Q 64 x (D + 8) + 2 x 2 x 64 x (D + 8) halves = 87040 B at D = 128 (dynamic,
// set by the SMEM tunable), two blocks per SM; registers: __launch_bounds__(128, 2) (Q fragments 32, o 64,
// scores 32 at D = 128).
//
// Napkin maths at the perf size (B 4, H 32, S 4096, D 128): 4 B H S^2 D = 1.10 TFLOP; at 989
// TFLOP/s 1.11 ms on the H200, at mma.sync's measured ~646 TFLOP/s 1.70 ms. The bytes, 537 MB,
// take 112 us at 4.8 TB/s: a tenth of the time. A100 80 GB (312 TFLOP/s bf16): 3.5 ms; RTX 4090
// (165 TFLOP/s dense bf16 with f32 accumulation): 6.7 ms.
// Predicted by `warpbook predict` for the H200: 4172 us, 264 TFLOP/s (27% of the datasheet,
// silver). It names the load/store unit (ldmatrix wavefronts and the cp.async lines: 16 rows per
// warp), the L2 (each block streams its head's K and V: S / 64 times per head, 17 GB) and issue.
// BQ = 128 (8 warps sharing each K/V tile, half the L2 bytes) predicts 5106 us: 206 registers
// allow one such block per SM, and its barriers wait on 8 warps.
// Measured on the H200 (`warpbook check`, 2026-11-25): 3704 us, 297 TFLOP/s: 46% of the
// measured mma.sync ceiling, 30% of the datasheet, silver. The K/V copy addresses worked out per
// chunk per tile instead of once took 3902 us side by side (5% slower); BQ = 128, 4646 us.
// PyTorch's SDPA took 1779 us (618 TFLOP/s, 96% of what mma.sync can do: whichever backend it
// picks there) in another run the same day: this kernel is 0.48x of it, short of issue 12's 0.8x;
// the Triton kernel of the README took 2875 us. The model said 4172 us.
// measured: 3703.84 us on NVIDIA H200
// @tune BQ=64
// @tune SMEM=87040

#include <cuda_bf16.h>

#define NW (BQ / 16)     // warps: 16 query rows each
#define NT (NW * 32)     // threads
#define BKV 64           // keys per K/V tile

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
__device__ __forceinline__ void attend(const __nv_bfloat16* __restrict__ Q, const __nv_bfloat16* __restrict__ K,
                                       const __nv_bfloat16* __restrict__ V, __nv_bfloat16* __restrict__ O,
                                       int S, int q0) {
  constexpr int LD = D + 8;  // halves per shared row (padding: conflict-free ldmatrix)
  constexpr int KD = D / 16; // 16-wide slices of D: k steps of Q K^T, column pairs of P V
  constexpr int CH = D / 8;  // 16-byte chunks per row
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16* Qs = reinterpret_cast<__nv_bfloat16*>(smem_raw); // [BQ][LD]
  __nv_bfloat16* Ks = Qs + BQ * LD;                               // [2][BKV][LD]
  __nv_bfloat16* Vs = Ks + 2 * BKV * LD;                          // [2][BKV][LD]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, t = lane % 4;

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

  // The warp's 16 rows of Q as A fragments, one per 16 columns of D.
  cp_async_wait<1>(); // Q has landed (tile 0 may still be in flight)
  __syncthreads();
  unsigned qa[KD][4];
#pragma unroll
  for (int kk = 0; kk < KD; ++kk) ldsm_x4(qa[kk], Qs + (warp * 16 + lane % 16) * LD + kk * 16 + (lane / 16) * 8);

  float oacc[D / 8][4]; // o: rows g and g + 8 of the warp, columns 8n + 2t, 8n + 2t + 1
#pragma unroll
  for (int n = 0; n < D / 8; ++n) oacc[n][0] = oacc[n][1] = oacc[n][2] = oacc[n][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f}; // rows g, g + 8 (l: this lane's part)
  const float sl2 = 1.4426950408889634f / sqrtf((float)D);  // log2(e) / sqrt(D): base-2 scores

  for (int kt = 0; kt < nkt; ++kt) {
    if (kt + 1 < nkt) load_kv(kt + 1); // into the buffer tile kt - 1 used
    cp_async_commit();                 // (an empty group at the end keeps the count right)
    cp_async_wait<1>();                // this thread's copies of tile kt have landed
    __syncthreads();                   // everyone's have
    const __nv_bfloat16* Kb = Ks + (kt & 1) * BKV * LD;
    const __nv_bfloat16* Vb = Vs + (kt & 1) * BKV * LD;

    // S = Q K^T: 16 x 64 per warp, 8 fragments of 8 keys.
    float s[8][4];
#pragma unroll
    for (int j = 0; j < 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < KD; ++kk)
#pragma unroll
      for (int np = 0; np < 4; ++np) { // keys np*16 .. np*16 + 15: two fragments
        unsigned b[4];
        ldsm_x4(b, Kb + (np * 16 + (lane / 16) * 8 + lane % 8) * LD + kk * 16 + ((lane / 8) % 2) * 8);
        mma_bf16(s[2 * np], qa[kk], b[0], b[1]);
        mma_bf16(s[2 * np + 1], qa[kk], b[2], b[3]);
      }

    // Online softmax, base 2. Keys past S (the last tile only) get -inf.
    const bool edge = (kt + 1) * BKV > S;
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[j][e] * sl2;
        if (edge && kt * BKV + j * 8 + 2 * t + (e & 1) >= S) x = -INFINITY;
        s[j][e] = x;
        mx[e / 2] = fmaxf(mx[e / 2], x);
      }
    float base[2], alpha[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1)); // the 4 lanes of a row
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
      base[i] = mx[i] == -INFINITY ? 0.0f : mx[i]; // a row with no key yet: keep exp2(-inf) = 0
      alpha[i] = ex2(m[i] - base[i]);              // 0 on the first tile
      m[i] = mx[i];
      l[i] *= alpha[i];
    }
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float p = ex2(s[j][e] - base[e / 2]);
        s[j][e] = p;
        l[e / 2] += p; // the unrounded weight
      }
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      oacc[n][0] *= alpha[0];
      oacc[n][1] *= alpha[0];
      oacc[n][2] *= alpha[1];
      oacc[n][3] *= alpha[1];
    }

    // O += P V: P straight from the score registers (bf16 pairs), V through ldmatrix.trans.
#pragma unroll
    for (int kk = 0; kk < BKV / 16; ++kk) {
      unsigned pa[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]), pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                        pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                        pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < KD; ++dp) { // columns dp*16 .. dp*16 + 15 of o: two fragments
        unsigned b[4];
        ldsm_x4_t(b, Vb + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * LD + dp * 16 + (lane / 16) * 8);
        mma_bf16(oacc[2 * dp], pa, b[0], b[1]);
        mma_bf16(oacc[2 * dp + 1], pa, b[2], b[3]);
      }
    }
    __syncthreads(); // everyone is done with this buffer before the next iteration refills it
  }

  // o / l, through the warp's own 16 rows of the Q tile, then 16-byte stores.
  float inv[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
    inv[i] = 1.0f / l[i];
  }
  __nv_bfloat16* Ow = Qs + warp * 16 * LD;
  const int g = lane / 4;
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    *reinterpret_cast<unsigned*>(Ow + g * LD + n * 8 + 2 * t) = pack_bf16(oacc[n][0] * inv[0], oacc[n][1] * inv[0]);
    *reinterpret_cast<unsigned*>(Ow + (g + 8) * LD + n * 8 + 2 * t) =
        pack_bf16(oacc[n][2] * inv[1], oacc[n][3] * inv[1]);
  }
  __syncwarp();
#pragma unroll
  for (int c = lane; c < 16 * CH; c += 32) {
    const int r = c / CH, col = (c % CH) * 8, row = q0 + warp * 16 + r;
    if (row < S)
      *reinterpret_cast<uint4*>(O + (long long)row * D + col) = *reinterpret_cast<const uint4*>(Ow + r * LD + col);
  }
}

extern "C" __global__ void __launch_bounds__(NT, 2)
    flash_attention(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                    const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o, int B, int H, int S,
                    int D) {
  const long long head = (long long)blockIdx.y * S * D;
  const int q0 = blockIdx.x * BQ;
  if (D == 64)
    attend<64>(q + head, k + head, v + head, o + head, S, q0);
  else
    attend<128>(q + head, k + head, v + head, o + head, S, q0);
}
