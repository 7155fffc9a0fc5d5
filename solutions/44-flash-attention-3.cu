// Solution · 44 FlashAttention-3-style forward: TMA, warp specialisation and wgmma (bf16, D = 128)
//
// What: o = softmax(q k^T / sqrt(D) [+ causal mask]) v and lse = log(sum exp(q k^T / sqrt(D))) for
// every (sequence, head), q k v o [B, H, S, D] bf16, lse [B, H, S] f32, D = 128. Puzzle 22's
// online softmax, fed and multiplied the way Hopper's fastest attention kernels do it:
//   - one block of 384 threads (three warpgroups) per 128 query rows of one head; with the causal
//     mask the query tiles run last first (blockIdx.x reversed), so the longest start first;
//   - warpgroup 0 is the producer: setmaxnreg.dec to 24 registers, one lane (elect.sync) issues
//     every copy: the block's Q tile once (two 64-column boxes of a 3-D tensor map over
//     [B H][S][D], 128B-swizzled, zeros past S), then each 128-key tile of K and of V into a ring
//     of STAGES slots. K and V each have a `full` barrier (Q K^T starts before V lands) and an
//     `empty` one: a K slot goes back as soon as its Q K^T is done, a V slot once its P V is;
//   - warpgroups 1 and 2 are the consumers (setmaxnreg.inc to 240), 64 query rows each:
//       S = Q K^T   8 x wgmma.m64n128k16, both operands in shared memory (K-major descriptors);
//       softmax     on the 64 f32 scores a thread holds (2 rows x 32 keys): row max over the 4
//                   lanes of a quad, exp2 with log2(e)/sqrt(D) folded into one FMA; the mask
//                   only in a second copy of the code, run on the tiles that need it (the last,
//                   and the diagonal);
//       O += P V    8 x wgmma.m64n128k16 with P from registers (the scores' accumulator layout,
//                   rounded to bf16 in pairs, is the A fragment layout) and V read N-major
//                   (imm-trans-b 1) straight from the slot TMA filled: V is never transposed;
//   - two tiles in flight in each consumer: tile j + 1's Q K^T is issued, then tile j's P V, and
//     wgmma.wait_group 1 waits for the scores only: the softmax of tile j + 1 runs on the other
//     units while P V of tile j is on the tensor cores; o is rescaled after wait_group 0. P lives
//     in two register sets used in turn (the loop is unrolled by two), and the scores are read,
//     never rewritten, while a wgmma is in flight (see What loses);
//   - the end: o / l rounded to bf16, staged in the warpgroup's own half of the Q tile (XOR-
//     swizzled 16-byte chunks: the 32 lanes' 4-byte writes land on 32 banks) and stored as whole
//     256-byte rows; lse = (m + log2 l) ln 2 by one lane per row.
// Needs an sm_90 GPU (wgmma, setmaxnreg and TMA are sm_90a instructions) or the simulator.
// Run:  warpbook check 44-flash-attention-3 solutions/44-flash-attention-3.cu
//       warpbook predict 44-flash-attention-3 solutions/44-flash-attention-3.cu --gpu h100-sxm
//
// Why: puzzle 22's FlashAttention-2 kernel measures a third of the 989 TFLOP/s datasheet rate on
// an H100: mma.sync cannot go past about 650 TFLOP/s there (wgmma 913, `warpbook probe`), and
// its softmax runs between its matrix products. Per (query, key) pair the tensor cores do 512
// FLOP and the special-function units one exp2; an H100 does 1.93 T pairs a second of the first
// and 4.2 T exp2 of the second, so exponentials done in turn with the products cost 46% of their
// time. Here they overlap.
//
// Measured (H100 80GB HBM3, B 4, H 32, S 4096, D 128, not causal): 1628.6 us, 675 TFLOP/s, 68%
// of the datasheet's 989. Beside PyTorch in one run (scripts/puzzles_vs_torch.sh): 1636.7 us
// against cuDNN's attention (SDPA's choice on Hopper) 1569.7 us, 0.96x; against SDPA's
// FlashAttention-2 3022.8 us, 1.85x; the Triton form (bench/triton/kernels.py, tensor
// descriptors and warp_specialize) 2443.2 us. Causal (`warpbook run ... --size causal=1`): 974 us
// against cuDNN's 894 us (0.92x) and FlashAttention-2's 1682 us.
// Napkin maths: 1.10 TFLOP at 989 TFLOP/s = 1.11 ms; 2.15 G exp2 at 4.2 T/s = 0.51 ms of
// special-function time, under the products now; L2 to SM 8.6 GB (each 128-row query tile reads
// its head's K and V once), 5.3 TB/s at 1.63 ms.
// `warpbook predict --gpu h100-sxm` (predicted): 1472 us, 0.90x the measurement (1551 us, 0.95x,
// with the ceilings `warpbook probe` measured on that H100, as the GPU test predicts it); the
// tensor cores first, the L2's stream second.
// Registers: 168 a thread at launch, 24 x 128 + 240 x 256 after setmaxnreg; ptxas (sm_90a): no
// spills. Shared memory: Q 32 KB + 2 x 64 KB of ring + 72 B of barriers + 1 KB of slack.
//
// What loses (H100, the variants side by side in one run, each one change from this file):
//   - the softmax in turn with the products (wait for Q K^T, softmax, P V, wait): 1815.6 us,
//     causal 1.06 ms;
//   - the same two tiles in flight with K and V released together and the mask's tests on every
//     tile: 3342.6 us. Q K^T of tile j + 2 cannot load until tile j's P V is done, so each tile
//     waits for its copy;
//   - a first version that copied P from one register set to the other and rewrote the scores in
//     place: 2636.5 us. ptxas then serialises every wgmma of the kernel (`nvcc -arch=sm_90a
//     -Xptxas -v` prints C7513 / C7514: a non-wgmma instruction defines or reads a register of a
//     wgmma still in flight);
//   - ping-pong between the consumer warpgroups (named barriers, turns to issue their products):
//     1653.8 us, causal 966 us: within 2%, and no gain the scheduler did not already find;
//   - STAGES = 3 (225 KB of shared memory): 1766.1 us.
// Left: BN = 176 keys a tile (FlashAttention-3's choice at D = 128), the output through TMA
// stores, and a persistent scheduler that overlaps one tile's end with the next tile's start.
// @tune BM=128
// @tune BN=128
// @tune STAGES=2
// On an NVIDIA H200 (`warpbook check` in the gpu test): 1642.70 us, 69.5% of the speed of light
// there: gold.
// measured: 1642.70 us on NVIDIA H200
// measured: 1628.64 us on NVIDIA H100 80GB HBM3
#include <cuda.h> // CUtensorMap
#include <cuda_bf16.h>

#if BM != 128 || BN != 128 || STAGES < 1
#error "this kernel is written for 128 x 128 tiles (two consumer warpgroups of 64 rows) and D = 128"
#endif
#define BOX_Q (BM * 128)  // bytes of one 64-column box of the Q tile
#define BOX_KV (BN * 128) // ... of a K or V tile
#define Q_BYTES (2 * BOX_Q)
#define KV_BYTES (2 * BOX_KV)
#define STAGE_BYTES (2 * KV_BYTES)

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spin until the phase of parity `parity` has completed (a fresh barrier counts the phase before
// its first, parity 1, as complete).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!done);
}
// The box of the 3-D map at (d, row, head) into shared memory at dst, counted on `bar`.
__device__ __forceinline__ void tma_load(unsigned dst, const CUtensorMap* map, int d, int row,
                                         int head, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
               "l"(reinterpret_cast<unsigned long long>(map)), "r"(d), "r"(row), "r"(head), "r"(bar)
               : "memory");
}

// Shared-memory descriptors, 128B swizzle (mode 1), 1024 bytes from one 8-row atom to the next.
// K-major (Q and K: a row's 64 elements of d are its 128 bytes; a k16 step is 32 bytes further).
__device__ __forceinline__ unsigned long long desc_k(unsigned addr) {
  return (unsigned long long)((addr & 0x3ffffu) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
// N-major (V as it lies, [key][d]: n = d along a row, k = key down the rows; a k16 step is 16 rows,
// 2048 bytes; the next 64 of d are in the second box, LBO = BOX_KV further).
__device__ __forceinline__ unsigned long long desc_n(unsigned addr) {
  return (unsigned long long)((addr & 0x3ffffu) >> 4) | ((unsigned long long)(BOX_KV >> 4) << 16) |
         (64ull << 32) | (1ull << 62);
}

// The 64 f32 accumulators of an m64n128 wgmma as asm operands %0..%63, read and written.
#define ACC64                                                                                      \
  "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%"   \
  "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%"   \
  "48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"
#define ACC64_OPS                                                                                  \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),     \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),   \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),   \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),   \
      "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),   \
      "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),   \
      "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),   \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// d (64 x 128 f32) = [d +] A (64 x 16, shared) x B (128 x 16, shared)^T.
__device__ __forceinline__ void wgmma_ss(float (&d)[64], unsigned long long da,
                                         unsigned long long db, int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " ACC64
               ", %64, %65, p, 1, 1, 0, 0;\n}\n"
               : ACC64_OPS
               : "l"(da), "l"(db), "r"(accumulate));
}
// d (64 x 128 f32) += A (64 x 16, registers) x B, B read N-major from shared memory.
__device__ __forceinline__ void wgmma_rs(float (&d)[64], const unsigned* a, unsigned long long db) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " ACC64
               ", {%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
               : ACC64_OPS
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}
// An empty asm that claims to read and write each register: the compiler may not move a use of
// them across it. Placed after a wgmma.wait_group (the results are there from here on) and
// before a wgmma that reads or writes them (CUTLASS's warpgroup_fence_operand).
__device__ __forceinline__ void fence_regs(float (&r)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
__device__ __forceinline__ void fence_regs(unsigned (&r)[32]) {
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+r"(r[i])::"memory");
}
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<unsigned*>(&v);
}

extern "C" __global__ void __launch_bounds__(384, 1)
    fa3_forward(const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
                const __grid_constant__ CUtensorMap tmV, const __nv_bfloat16* __restrict__ q,
                const __nv_bfloat16* __restrict__ k, const __nv_bfloat16* __restrict__ v,
                __nv_bfloat16* __restrict__ o, float* __restrict__ lse, int B, int H, int S, int D,
                int causal) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The swizzle is on absolute addresses: Q and the ring start on a 1 KB boundary.
  const unsigned sbase = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const unsigned ring = sbase + Q_BYTES, bars = ring + STAGES * STAGE_BYTES;
  const unsigned q_full = bars;
  auto k_full = [&](int s) { return bars + 8u * (1 + s); };
  auto v_full = [&](int s) { return bars + 8u * (1 + STAGES + s); };
  auto k_empty = [&](int s) { return bars + 8u * (1 + 2 * STAGES + s); };
  auto v_empty = [&](int s) { return bars + 8u * (1 + 3 * STAGES + s); };

  const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32, lane = tid % 32;
  if (tid == 0) {
    mbar_init(q_full, 1);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(k_full(s), 1);
      mbar_init(v_full(s), 1);
      mbar_init(k_empty(s), 8);
      mbar_init(v_empty(s), 8);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  const int bh = blockIdx.y;
  const int qt = causal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
  const int row0 = qt * BM;
  const int key_tiles = (S + BN - 1) / BN;
  const int tiles = causal ? min(key_tiles, (row0 + BM + BN - 1) / BN) : key_tiles;

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
    unsigned elected = 0;
    if (warp == 0)
      asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
                   : "=r"(elected));
    if (!elected) return;
    mbar_arrive_expect_tx(q_full, Q_BYTES);
    tma_load(sbase, &tmQ, 0, row0, bh, q_full);
    tma_load(sbase + BOX_Q, &tmQ, 64, row0, bh, q_full);
    for (int j = 0; j < tiles; ++j) {
      const int s = j % STAGES;
      const unsigned dst = ring + s * STAGE_BYTES;
      mbar_wait(k_empty(s), ((j / STAGES) & 1) ^ 1);
      mbar_arrive_expect_tx(k_full(s), KV_BYTES); // whole boxes: the zeros past S count too
      tma_load(dst, &tmK, 0, j * BN, bh, k_full(s));
      tma_load(dst + BOX_KV, &tmK, 64, j * BN, bh, k_full(s));
      mbar_wait(v_empty(s), ((j / STAGES) & 1) ^ 1);
      mbar_arrive_expect_tx(v_full(s), KV_BYTES);
      tma_load(dst + KV_BYTES, &tmV, 0, j * BN, bh, v_full(s));
      tma_load(dst + KV_BYTES + BOX_KV, &tmV, 64, j * BN, bh, v_full(s));
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
  const int cw = wg - 1, qw = warp % 4, g = lane / 4, tq = lane % 4;
  // This thread's two rows: r_lo and r_lo + 8 (accumulator registers 4 j, 4 j + 1 and 4 j + 2,
  // 4 j + 3 of each 8-column block j).
  const int wrow = row0 + cw * 64 + qw * 16, r_lo = wrow + g, r_hi = r_lo + 8;
  const float sl2 = 1.4426950408889634f * rsqrtf((float)D); // log2(e) / sqrt(D)
  const unsigned qa = sbase + cw * 64 * 128;                // this warpgroup's 64 rows of Q

  float acc_o[64], acc_s[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc_o[i] = 0.0f;
  float m_lo = -INFINITY, m_hi = -INFINITY, l_lo = 0.0f, l_hi = 0.0f; // m in log2 units

  auto issue_qk = [&](int s) {
    const unsigned kb = ring + s * STAGE_BYTES;
    fence_regs(acc_s);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < 8; ++kk)
      wgmma_ss(acc_s, desc_k(qa + (kk / 4) * BOX_Q + 32 * (kk % 4)),
               desc_k(kb + (kk / 4) * BOX_KV + 32 * (kk % 4)), kk > 0);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  };

  // The online softmax of tile j's scores (in acc_s): the new row max m, the factor o and l must
  // be scaled by (c), l updated, and P rounded to bf16. With `edge`, keys past S and (causal) keys
  // after the row count as -inf. The scores are read, never written: they are the accumulators of
  // a wgmma, and rewriting them while another wgmma is in flight makes ptxas serialise them all.
  auto softmax_tile = [&](int j, unsigned(&p)[32], float& c_lo, float& c_hi, bool edge) {
    const int key0 = j * BN;
    auto score = [&](int jj, int e, int h) {
      const int key = key0 + 8 * jj + 2 * tq + e;
      const float x = acc_s[4 * jj + 2 * h + e];
      return edge && (key >= S || (causal && key > (h ? r_hi : r_lo))) ? -INFINITY : x;
    };
    float mx_lo = -INFINITY, mx_hi = -INFINITY;
#pragma unroll
    for (int jj = 0; jj < 16; ++jj) {
      mx_lo = fmaxf(mx_lo, fmaxf(score(jj, 0, 0), score(jj, 1, 0)));
      mx_hi = fmaxf(mx_hi, fmaxf(score(jj, 0, 1), score(jj, 1, 1)));
    }
#pragma unroll
    for (int off = 1; off < 4; off *= 2) {
      mx_lo = fmaxf(mx_lo, __shfl_xor_sync(0xffffffffu, mx_lo, off));
      mx_hi = fmaxf(mx_hi, __shfl_xor_sync(0xffffffffu, mx_hi, off));
    }
    const float mn_lo = fmaxf(m_lo, mx_lo * sl2), mn_hi = fmaxf(m_hi, mx_hi * sl2);
    // A row with no key yet keeps m = -inf: subtract 0 instead, so that exp2 gives 0, not NaN.
    const float mu_lo = mn_lo == -INFINITY ? 0.0f : mn_lo;
    const float mu_hi = mn_hi == -INFINITY ? 0.0f : mn_hi;
    c_lo = exp2f(m_lo - mu_lo), c_hi = exp2f(m_hi - mu_hi);
    float sum_lo = 0.0f, sum_hi = 0.0f;
    // P in bf16 pairs, in the order wgmma's A fragment wants them: register 2 jj + h holds row
    // lo (h = 0) or hi (h = 1) of keys 8 jj + 2 t, + 1; keys 16 kk .. 16 kk + 15 are then
    // registers 4 kk .. 4 kk + 3 (row lo, row hi, row lo 8 keys on, row hi 8 keys on).
#pragma unroll
    for (int jj = 0; jj < 16; ++jj)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float mu = h ? mu_hi : mu_lo;
        const float p0 = exp2f(fmaf(score(jj, 0, h), sl2, -mu));
        const float p1 = exp2f(fmaf(score(jj, 1, h), sl2, -mu));
        (h ? sum_hi : sum_lo) += p0 + p1;
        p[2 * jj + h] = pack_bf16(p0, p1);
      }
    l_lo = l_lo * c_lo + sum_lo, l_hi = l_hi * c_hi + sum_hi;
    m_lo = mn_lo, m_hi = mn_hi;
  };
  // Two copies: most tiles need no mask (only the last and the diagonal do), and their copy has
  // none of its tests.
  auto softmax = [&](int j, unsigned(&p)[32], float& c_lo, float& c_hi) {
    if (j * BN + BN > S || (causal && j * BN + BN - 1 > wrow))
      softmax_tile(j, p, c_lo, c_hi, true);
    else
      softmax_tile(j, p, c_lo, c_hi, false);
  };

  // Two tiles in flight in each warpgroup: while P V of tile j runs on the tensor cores, the
  // softmax of tile j + 1 runs on the other units (its scores were issued just before P V). o is
  // rescaled by tile j + 1's factor once P V of tile j has landed in it.
  unsigned pa[32], pn[32];
  float c_lo, c_hi;
  mbar_wait(q_full, 0);
  mbar_wait(k_full(0), 0);
  issue_qk(0);
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  fence_regs(acc_s);
  if (lane == 0) mbar_arrive(k_empty(0)); // Q K^T of tile 0 is done with its K
  softmax(0, pa, c_lo, c_hi);             // o is still 0: nothing to rescale
  // O += P V for tile j, P in registers, V N-major from its slot once it has landed.
  auto issue_pv = [&](int j, unsigned(&p)[32]) {
    mbar_wait(v_full(j % STAGES), (j / STAGES) & 1);
    const unsigned vb = ring + (j % STAGES) * STAGE_BYTES + KV_BYTES;
    fence_regs(acc_o);
    fence_regs(p);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) wgmma_rs(acc_o, &p[4 * kk], desc_n(vb + 2048 * kk));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  };
  // Every tile but the last: tile j + 1's scores, then tile j's P V, the softmax of j + 1 between.
  // P alternates between two register sets (no copy).
  auto step = [&](int j, unsigned(&pcur)[32], unsigned(&pnext)[32]) {
    const int s = j % STAGES;
    mbar_wait(k_full((j + 1) % STAGES), ((j + 1) / STAGES) & 1);
    issue_qk((j + 1) % STAGES);
    issue_pv(j, pcur);
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); // the scores, not P V
    fence_regs(acc_s);
    if (lane == 0) mbar_arrive(k_empty((j + 1) % STAGES)); // K of tile j + 1 is free already
    softmax(j + 1, pnext, c_lo, c_hi);
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    fence_regs(acc_o);
    fence_regs(pcur);
    if (lane == 0) mbar_arrive(v_empty(s)); // and V of tile j
#pragma unroll
    for (int jj = 0; jj < 16; ++jj) {
      acc_o[4 * jj] *= c_lo, acc_o[4 * jj + 1] *= c_lo;
      acc_o[4 * jj + 2] *= c_hi, acc_o[4 * jj + 3] *= c_hi;
    }
  };
  int j = 0;
  for (; j + 2 < tiles; j += 2) {
    step(j, pa, pn);
    step(j + 1, pn, pa);
  }
  if (j + 1 < tiles) {
    step(j, pa, pn);
    ++j;
#pragma unroll
    for (int i = 0; i < 32; ++i) pa[i] = pn[i];
  }
  issue_pv(j, pa); // the last tile's P V
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  fence_regs(acc_o);
  if (lane == 0) mbar_arrive(v_empty(j % STAGES));

    // The end: o / l, lse.
#pragma unroll
  for (int off = 1; off < 4; off *= 2) {
    l_lo += __shfl_xor_sync(0xffffffffu, l_lo, off);
    l_hi += __shfl_xor_sync(0xffffffffu, l_hi, off);
  }
  const float inv_lo = l_lo > 0.0f ? 1.0f / l_lo : 0.0f, inv_hi = l_hi > 0.0f ? 1.0f / l_hi : 0.0f;
  const long long head_rows = (long long)bh * S;
  if (tq == 0) {
    if (r_lo < S) lse[head_rows + r_lo] = (m_lo + log2f(l_lo)) * 0.6931471805599453f;
    if (r_hi < S) lse[head_rows + r_hi] = (m_hi + log2f(l_hi)) * 0.6931471805599453f;
  }
  // Staged in this warp's 16 rows of the warpgroup's half of the Q tile (its last reader, Q K^T,
  // has finished): row rr's 16-byte chunk c of box b at qa + b BOX_Q + rr 128 + (c ^ rr % 8) 16.
#pragma unroll
  for (int jj = 0; jj < 16; ++jj)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int rr = qw * 16 + g + 8 * h;
      const float inv = h ? inv_hi : inv_lo;
      const unsigned a = qa + (jj / 8) * BOX_Q + rr * 128 + (((jj % 8) ^ (rr % 8)) << 4) + tq * 4;
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(a),
                   "r"(pack_bf16(acc_o[4 * jj + 2 * h] * inv, acc_o[4 * jj + 2 * h + 1] * inv))
                   : "memory");
    }
  __syncwarp();
  // Read back as 16-byte chunks, 16 lanes a row: each row of o is one 256-byte store.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int idx = i * 32 + lane, rr = qw * 16 + idx / 16, ch = idx % 16;
    const unsigned a = qa + (ch / 8) * BOX_Q + rr * 128 + (((ch % 8) ^ (rr % 8)) << 4);
    uint4 val;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(val.x), "=r"(val.y), "=r"(val.z), "=r"(val.w)
                 : "r"(a)
                 : "memory");
    const int row = row0 + cw * 64 + rr;
    if (row < S) *reinterpret_cast<uint4*>(o + (head_rows + row) * 128 + ch * 8) = val;
  }
}
