// Perf-model kernel · 22 flash attention, 16 rows a warp
//
// FA2-style mma.sync, BQ 64, 4 warps of 16 rows, all 64 keys of each tile per warp, Q in registers,
// K/V double buffer, two barriers a tile, copy addresses worked out once. Solution 22 gives each
// warp 32 rows and two warps per row group: 3486 against 3697 us.
// COPY_ADDRESS_PER_CHUNK 1 (-D, rows of the manifest) works the K/V copy addresses out per chunk
// per tile instead: 3902 against 3704 us on the H200.
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
// measured: 3703.84 us on NVIDIA H200
// @tune BQ=64
// @tune SMEM=87040

#define COPY_ADDRESS_PER_CHUNK 0
#include <cuda_bf16.h>

#define NW (BQ / 16) // warps: 16 query rows each
#define NT (NW * 32) // threads
#define BKV 64       // keys per K/V tile

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
#if COPY_ADDRESS_PER_CHUNK
#else
  // K and V copies: thread tid always takes chunk tid % CH of rows tid / CH + i * RP, so the
  // addresses are a fixed stride apart and only the tile's first key moves; a whole tile needs no
  // bounds. (Worked out per chunk, the index arithmetic costs issue slots the mma need.)
  constexpr int RP = NT / CH; // rows one pass of the block copies
  static_assert(NT % CH == 0 && BKV % RP == 0, "the K/V copies must split evenly");
  const int kr = tid / CH, kcol = (tid % CH) * 8, kso = kr * LD + kcol;
#endif
  auto load_kv = [&](int kt) {
#if COPY_ADDRESS_PER_CHUNK
    __nv_bfloat16* Kb = Ks + (kt & 1) * BKV * LD;
    __nv_bfloat16* Vb = Vs + (kt & 1) * BKV * LD;
#else
    __nv_bfloat16* Kb = Ks + (kt & 1) * BKV * LD + kso;
    __nv_bfloat16* Vb = Vs + (kt & 1) * BKV * LD + kso;
    const int key0 = kt * BKV + kr;
    const __nv_bfloat16* Kg = K + (long long)key0 * D + kcol;
    const __nv_bfloat16* Vg = V + (long long)key0 * D + kcol;
    if ((kt + 1) * BKV <= S) {
#endif
#pragma unroll
#if COPY_ADDRESS_PER_CHUNK
    for (int c = tid; c < BKV * CH; c += NT) {
      const int r = c / CH, col = (c % CH) * 8, key = kt * BKV + r;
      const bool in = key < S;
      const long long off = in ? (long long)key * D + col : 0;
      cp_async16(Kb + r * LD + col, K + off, in ? 16 : 0);
      cp_async16(Vb + r * LD + col, V + off, in ? 16 : 0);
#else
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
#endif
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
  for (int kk = 0; kk < KD; ++kk)
    ldsm_x4(qa[kk], Qs + (warp * 16 + lane % 16) * LD + kk * 16 + (lane / 16) * 8);

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
        ldsm_x4(b,
                Kb + (np * 16 + (lane / 16) * 8 + lane % 8) * LD + kk * 16 + ((lane / 8) % 2) * 8);
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
      unsigned pa[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]),
                        pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                        pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                        pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < KD; ++dp) { // columns dp*16 .. dp*16 + 15 of o: two fragments
        unsigned b[4];
        ldsm_x4_t(b, Vb + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * LD + dp * 16 +
                         (lane / 16) * 8);
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
    *reinterpret_cast<unsigned*>(Ow + g * LD + n * 8 + 2 * t) =
        pack_bf16(oacc[n][0] * inv[0], oacc[n][1] * inv[0]);
    *reinterpret_cast<unsigned*>(Ow + (g + 8) * LD + n * 8 + 2 * t) =
        pack_bf16(oacc[n][2] * inv[1], oacc[n][3] * inv[1]);
  }
  __syncwarp();
#pragma unroll
  for (int c = lane; c < 16 * CH; c += 32) {
    const int r = c / CH, col = (c % CH) * 8, row = q0 + warp * 16 + r;
    if (row < S)
      *reinterpret_cast<uint4*>(O + (long long)row * D + col) =
          *reinterpret_cast<const uint4*>(Ow + r * LD + col);
  }
}

extern "C" __global__ void __launch_bounds__(NT, 2)
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
