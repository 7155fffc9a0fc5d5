// Solution · 39 Marlin-style W4A16 GEMM: 4-bit codes streamed once by cp.async, decoded in
// registers with lop3 and the 0x6400 exponent, multiplied on the tensor cores (mma.sync)
//
// What: C[M x N] (f16) = A[M x K] (f16) x w, w[k][n] = f16((q - 8) s[k / 128][n]), the codes q in
// Marlin's fragment order (puzzle.toml, README): f32 sums, one rounding of C.
//   - Grid [N / 64, cdiv(M, 16)] at the perf size (NB = 1, MT = 1): block x owns 64 columns of C
//     and 16 rows; 2 warps, KS = 2, on its 64-column group. Warp ks takes rows ks, ks + 2, ks + 4
//     and ks + 6 of every group's 8 rows of B (16 k each), so the 2 warps share the group's k and
//     add their sums through shared memory at the end, in a fixed order. 448 blocks of 64 threads:
//     many small blocks an SM, each with its own ring, keep more copies in flight than a few big.
//   - A ring of STAGES = 4 slots of shared memory, one group of 128 k each (B's 8 rows of 512
//     bytes, A's 16 rows of 256 bytes, 128 scales), filled by 16-byte cp.async.cg (past
//     the L1: every byte is used once). A thread copies the same places of every group, so its
//     addresses are worked out once and a group only adds its offset; one commit per group, one
//     wait_group(STAGES - 2) and one __syncthreads per group: 3 groups in flight while one is used.
//   - A's rows past M are zero-filled (cp.async with a source size of 0, which reads nothing): an
//     mma row of A only makes the same row of C, and those rows are not stored, but zeros keep
//     whatever the slot held before (NaN, say) out of the tensor cores.
//   - Per 16 k: one ld.shared.v4 a lane (words 4 l .. 4 l + 3 of its group's 128: the B fragments
//     of all 8 n8 tiles), one ldmatrix.x4 of A (rows XOR-swizzled by row & 7: the 8 rows one
//     phase reads are 256 bytes apart and would share banks), then per word: 2 lop3 + 2 lop3 on
//     q >> 8, 2 sub.f16x2 and 2 fma.f16x2 (the exact q - 8), 4 mul.f16x2 by the column's scale
//     (one f16 rounding of each weight, as the format defines it), 2 mma.sync.m16n8k16.
//   - The scales of a group: 8 ld.shared.b16 per lane (its column in each n8 tile), each put in
//     both halves of a register once per group, not per word.
//   - Constants and the per-lane shared-memory offsets sit in registers (an opaque mov): left to
//     itself the compiler rebuilt each from the lane id inside the loop.
// Run:  warpbook check 39-marlin-w4a16-gemm solutions/39-marlin-w4a16-gemm.cu
//       warpbook predict 39-marlin-w4a16-gemm solutions/39-marlin-w4a16-gemm.cu --gpu h100-sxm
//
// Why: at M = 16, N = 28672, K = 8192 the codes are 117 MB, the scales 3.7 MB, A and C 1.2 MB:
// 122 MB, 36 us at the H100's 3.35 TB/s, and 7.5 GFLOP, 8 us at the datasheet's f16 tensor rate.
// Memory-bound by a factor of 4: the work is to stream the codes at the DRAM's pace and hide the
// rest under it. The tensor cores are there because 16 rows make 16 multiply-adds per weight,
// which the CUDA cores could not keep up with (puzzle 32 counts instructions for one); the
// fragment-order packing is there so that the codes go from one 16-byte load straight into mma
// registers, with no shuffle through shared memory. At speed of light the SMs can issue about 5
// lane-instructions a weight (235 M weights in 36 us on 132 SMs); this loop spends under 2 on the
// decode, the scales and the mma, and the rest on loads, addresses, the ring and the loop.
//
// Predicted (`warpbook predict`, the model's DRAM ceilings): NVIDIA H100 SXM 45.4 us, 87% of speed
// of light; NVIDIA H200 SXM 36.3 us, 74%. The model counts more than the 122 MB from DRAM: it
// sends part of A's rereads (every block reads all 256 KB of A) to DRAM, where a GPU keeps A in
// the L2.
//
// What loses, measured on an H100 80GB HBM3 (`warpbook tune`, one run, beside this file's 47.4 us):
//   - 128 columns a block (NB = 2) with KS = 2: 47.4 us, a tie; with KS = 4 (8 warps a block, a
//     warp per 2 of a group's 8 rows), 56.3 us: each warp waits on the ring for less work.
//   - STAGES = 3 or 6: 48.7-50.5 us (NB 1 or 2, KS = 2); 4 holds 3 groups in flight while one is
//     used, and 6 costs blocks an SM.
//   - KS = 4 with NB = 1: 53.8 us. The model (H200, `warpbook tune --backend sim`) ranked these
//     the other way, NB = 2 KS = 4 first (35.7 us against 35.8-36.7 for NB = 1): it sends part of
//     A's rereads to DRAM where the GPU keeps them in the L2.
// What loses (predicted for the H200, `warpbook tune --backend sim`):
//   - 256 columns (NB = 4): 43.5-45.2 us with KS = 2 or 4: 112 blocks leave 20 of 132 SMs idle
//     for the whole run.
//   - KS = 8 (a warp per 16-row step of each group): 40.3-60.2 us, instruction-bound: every warp
//     loads the group's 8 scales and waits on the ring for one step's work.
//   - The same loop with its shared-memory addresses written as plain expressions (generic
//     pointers, 64-bit arithmetic) and the dequant constants as literals, which the compiler
//     rebuilt inside the loop: 38.5 us, 217 k instructions an SM against 198 k.
//   - MT = 2 or 4 at M = 16: 47.8 and 108 us: mma on 16 or 48 rows of zeros, and registers (127,
//     207) that halve the blocks an SM holds. For M = 64 (four m16 tiles), MT = 4 reads the codes
//     once where MT = 1 has 4 rows of blocks read them (mostly from the L2).
//   - Not built: scaling after the mma in f32, per group (fewer f16 multiplies, but a weight
//     (q - 8) s that is never rounded to f16: another number, ~1e-3 off at K = 8192, and the
//     puzzle fails it); codes packed plainly, k-major, and shuffled through shared memory into
//     fragments (a second pass over every byte in shared memory; ldmatrix moves 16-bit elements,
//     not nibbles); the CUDA cores (16 FMAs a weight, against 5 lane-instructions of budget).
// Measured on an H100 80GB HBM3: 47.4 us, 2.58 TB/s, 80.5% of the speed of light `warpbook probe`
// measures there: gold (the model said 45.2 us). In one run of scripts/puzzles_vs_torch.sh, with
// NB = 2 KS = 4 (56.3 us), dequantise-then-torch.matmul took 4621 us and cuBLAS on the same
// weights already in f16 157.6 us (3.3x this file's time: the int4 stream's point).
// On an NVIDIA H200 (`warpbook check` in the gpu test): 47.49 us, 56.5% of the speed of light
// `warpbook probe` measures there: bronze, short of the 80% gold bar.
// measured: 47.49 us on NVIDIA H200
// measured: 47.4 us on NVIDIA H100 80GB HBM3
// @tune NB=1
// @tune KS=2
// @tune MT=1
// @tune STAGES=4
#include <cuda_fp16.h>

#define NT (32 * NB * KS)                       // threads a block
#define BOFF 0                                  // a slot: B's 8 rows of 512 NB bytes,
#define AOFF (4096 * NB)                        // A's 16 MT rows of 256 bytes (swizzled),
#define SOFF (4096 * NB + 4096 * MT)            // the group's 64 NB scales
#define SLOT (4096 * NB + 4096 * MT + 128 * NB) // bytes a slot (puzzle.toml's `shared`)

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
// 16 bytes global -> shared, bypassing L1; src_bytes = 0 fills the 16 bytes with zeros.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4(unsigned (&d)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(addr));
}
__device__ __forceinline__ uint4 lds128(unsigned addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
// An f16 from shared memory, in both halves of a register (an f16x2 of the one value).
template <int OFF> __device__ __forceinline__ unsigned lds16x2(unsigned addr) {
  unsigned d;
  asm volatile("{\n .reg .b16 h;\n ld.shared.b16 h, [%1+%2];\n mov.b32 %0, {h, h};\n}\n"
               : "=r"(d)
               : "r"(addr), "n"(OFF)
               : "memory");
  return d;
}
// A constant the compiler keeps in a register instead of materialising it at every use.
__device__ __forceinline__ unsigned reg(unsigned v) {
  unsigned d;
  asm volatile("mov.b32 %0, %1;\n" : "=r"(d) : "r"(v));
  return d;
}
// acc (16 x 8, f32) += a (16 x 16, f16, row) x b (16 x 8, f16, col)
__device__ __forceinline__ void mma_f16(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                        unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// (a & b) | c in one instruction: the LUT is (0xF0 & 0xCC) | 0xAA.
__device__ __forceinline__ unsigned lop3_and_or(unsigned a, unsigned b, unsigned c) {
  unsigned d;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
__device__ __forceinline__ unsigned hsub2(unsigned a, unsigned b) {
  unsigned d;
  asm("sub.rn.f16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ unsigned hmul2(unsigned a, unsigned b) {
  unsigned d;
  asm("mul.rn.f16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ unsigned hfma2(unsigned a, unsigned b, unsigned c) {
  unsigned d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// Eight codes of one word -> four f16x2 of (q - 8), exactly: the B fragments {b0, b1} of two
// n8 tiles (nibbles 0, 4 | 1, 5 | 2, 6 | 3, 7). Masked into the mantissa of 1024 (0x6400), a
// low nibble is the f16 1024 + q; subtract 1032. A high nibble lands 4 bits up: 1024 + 16 q,
// times 1/16 (0x2C00) minus 72 (0xD480) is q - 8. The second pair after one shift by 8.
struct Magic {
  unsigned lo, hi, ex, sub, mul, add; // masks, 0x6400 twice, 1032, 1/16 and -72 as f16x2
};
__device__ __forceinline__ void dequant(unsigned q, unsigned (&b)[4], const Magic& c) {
  const unsigned q8 = q >> 8;
  b[0] = hsub2(lop3_and_or(q, c.lo, c.ex), c.sub);
  b[1] = hfma2(lop3_and_or(q, c.hi, c.ex), c.mul, c.add);
  b[2] = hsub2(lop3_and_or(q8, c.lo, c.ex), c.sub);
  b[3] = hfma2(lop3_and_or(q8, c.hi, c.ex), c.mul, c.add);
}

// Byte offset of 16-byte chunk `ch` (8 f16 of k) of row `r` of A's slot: rows are 256 bytes, so
// the 8 rows one ldmatrix phase reads would share banks; XOR with the row spreads them.
__device__ __forceinline__ int swz(int r, int ch) {
  return r * 256 + ((ch ^ (r & 7)) << 4);
}

extern "C" __global__ void __launch_bounds__(NT)
    w4a16_gemm(const __half* __restrict__ A, const unsigned* __restrict__ B,
               const __half* __restrict__ s, __half* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int cg = warp % NB, ks = warp / NB; // column group of 64, slice of each group's k
  const int n0 = blockIdx.x * 64 * NB, m0 = blockIdx.y * 16 * MT;
  const int ncg = min(NB, (N - n0) / 64); // column groups of this block inside N
  const int ngrp = K / 128;
  const unsigned sbase = smem_addr(smem);

  // Group grp (k = 128 grp ..) into slot grp % STAGES: B's 8 rows (512 contiguous bytes per
  // column group), A's 16 MT rows (zeros past M) and the group's scales. A thread copies the same
  // places of every group, so its sources and destinations are worked out once, here, and a group
  // only adds its offset. Every load() commits one group of copies, empty or not.
  const int brest = tid % (NB * 32), brow = tid / (NB * 32); // B: rows brow + i KS, i < 8 / KS
  const bool bon = brest / 32 < ncg;
  const unsigned* bsrc = B + (long long)brow * 2 * N + 2 * n0 + 4 * brest;
  const unsigned bdst = BOFF + 16 * tid;
  constexpr int AP = (MT * 256 + NT - 1) / NT; // A's 16-byte chunks a thread
  const int ach = tid & 15, arow = tid >> 4;   // chunk ach of rows arow + i NT / 16
  const __half* asrc[AP];
  unsigned adst[AP];
  int abytes[AP];
#pragma unroll
  for (int i = 0; i < AP; ++i) {
    const int r = arow + i * (NT / 16);
    const bool in = r < 16 * MT && m0 + r < M;
    asrc[i] = in ? A + (long long)(m0 + r) * K + 8 * ach : A;
    abytes[i] = in ? 16 : 0;
    adst[i] = r < 16 * MT ? AOFF + swz(r, ach) : 0xffffffffu;
  }
  const bool son = tid < NB * 8 && tid / 8 < ncg;
  const __half* ssrc = s + n0 + 8 * tid;
  auto load = [&](int grp) {
    if (grp < ngrp) {
      const unsigned st = sbase + (unsigned)(grp % STAGES) * SLOT;
      if (bon) {
        const unsigned* src = bsrc + (long long)grp * 16 * N;
#pragma unroll
        for (int i = 0; i < 8 / KS; ++i)
          cp_async16(st + bdst + i * NT * 16, src + (long long)i * KS * 2 * N, 16);
      }
#pragma unroll
      for (int i = 0; i < AP; ++i)
        if (adst[i] != 0xffffffffu) cp_async16(st + adst[i], asrc[i] + 128 * grp, abytes[i]);
      if (son) cp_async16(st + SOFF + 16 * tid, ssrc + (long long)grp * N, 16);
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  };

  float acc[MT][8][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.f;

#pragma unroll
  for (int p = 0; p < STAGES - 1; ++p) load(p);

  // This lane's places in a slot: its 16 bytes of each B row, its row of A (chunk 2 kk + (lane >>
  // 4) of row lane & 15, XOR-swizzled: (2 kk) ^ ax) and its column's scale in n8 tile nt (8 nt +
  // g). Worked out once and kept in registers (reg: the compiler would recompute them in the loop).
  unsigned woff[8 / KS], aoff[8 / KS];
#pragma unroll
  for (int i = 0; i < 8 / KS; ++i) {
    const int kk = ks + i * KS;
    woff[i] = reg(BOFF + kk * NB * 512 + cg * 512 + 16 * lane);
    aoff[i] = reg(AOFF + (lane & 15) * 256 + (((2 * kk) ^ (lane >> 4) ^ (lane & 7)) << 4));
  }
  const unsigned sl = reg(SOFF + 2 * (64 * cg + (lane >> 2)));
  const Magic mc = {reg(0x000F000Fu), reg(0x00F000F0u), reg(0x64006400u),
                    reg(0x64086408u), reg(0x2C002C00u), reg(0xD480D480u)};
  unsigned rd = 0; // the slot group grp is in: grp % STAGES, times SLOT
  for (int grp = 0; grp < ngrp; ++grp) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
    __syncthreads(); // group grp has landed for every thread, and slot grp - 1 is free
    load(grp + STAGES - 1);
    if (cg < ncg) {
      const unsigned st = sbase + rd;
      const unsigned sa = st + sl;
      const unsigned s2[8] = {lds16x2<0>(sa),  lds16x2<16>(sa), lds16x2<32>(sa),
                              lds16x2<48>(sa), lds16x2<64>(sa), lds16x2<80>(sa),
                              lds16x2<96>(sa), lds16x2<112>(sa)}; // n8 tile nt's, both halves
#pragma unroll
      for (int i = 0; i < 8 / KS; ++i) {
        const uint4 wv = lds128(st + woff[i]);
        unsigned a[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) ldmatrix_x4(a[mt], st + aoff[i] + mt * 4096);
        const unsigned w[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          unsigned b[4];
          dequant(w[j], b, mc);
          // (q - 8) s rounded once to f16: the format's weight, as the reference has it
          b[0] = hmul2(b[0], s2[2 * j]);
          b[1] = hmul2(b[1], s2[2 * j]);
          b[2] = hmul2(b[2], s2[2 * j + 1]);
          b[3] = hmul2(b[3], s2[2 * j + 1]);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma_f16(acc[mt][2 * j], a[mt], b[0], b[1]);
            mma_f16(acc[mt][2 * j + 1], a[mt], b[2], b[3]);
          }
        }
      }
    }
    rd = rd + SLOT == STAGES * SLOT ? 0 : rd + SLOT;
  }
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");

  // The KS warps of a column group add their sums through shared memory, in a fixed order.
  if (KS > 1) {
    __syncthreads(); // every warp is done with the ring
    float* red = reinterpret_cast<float*>(smem) + cg * (MT * 32 * 32);
#pragma unroll 1
    for (int r = 1; r < KS; ++r) {
      if (ks == r && cg < ncg) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              float* p = red + ((mt * 8 + nt) * 4 + e) * 32 + lane;
              *p = (r == 1 ? 0.f : *p) + acc[mt][nt][e];
            }
      }
      __syncthreads();
    }
    if (ks != 0) return;
    if (cg < ncg) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[mt][nt][e] += red[((mt * 8 + nt) * 4 + e) * 32 + lane];
    }
  }
  if (cg >= ncg) return;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      const int row = m0 + 16 * mt + g, col = n0 + 64 * cg + 8 * nt + 2 * t;
      if (row < M)
        *reinterpret_cast<__half2*>(C + (long long)row * N + col) =
            __floats2half2_rn(acc[mt][nt][0], acc[mt][nt][1]);
      if (row + 8 < M)
        *reinterpret_cast<__half2*>(C + (long long)(row + 8) * N + col) =
            __floats2half2_rn(acc[mt][nt][2], acc[mt][nt][3]);
    }
}
