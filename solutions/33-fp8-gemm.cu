// Solution · 33 FP8 GEMM (e4m3 inputs, f32 accumulation, per-row and per-column scales, bf16 out)
//
// What: C[M x N] (bf16) = (A[M x K] x B[N x K]^T) * a_scale[row] * b_scale[col], A and B in fp8
// e4m3, row-major (B given as [N, K], as torch._scaled_mm's column-major second matrix). Hopper's
// FP8 wgmma, fed as puzzle 43 feeds bf16, but by cp.async instead of TMA: rows of K bytes need not
// be 16-byte aligned here (K = 29 is a case), and a tensor map cannot describe them.
//   - persistent: min(GRID, tiles) blocks of 384 threads (three warpgroups, one block an SM);
//     block b walks the 128 x 256 tiles t = b, b + gridDim.x, ... in a grouped raster (8 rows of
//     tiles column by column), so the tiles in flight share a few panels of A and B in the L2;
//   - warpgroup 0 is the producer (setmaxnreg.dec to 40 registers): its 128 threads fill a ring
//     of STAGES slots, each 128 rows of A and 256 of B by 128 bytes of k, with 16-byte cp.async
//     written straight into wgmma's 128-byte-swizzle K-major layout (chunk c of row r at
//     r x 128 + ((c ^ r % 8) << 4) from a 1 KB boundary). Past K the copies write zeros (source
//     size 0: 0 x garbage may be NaN, 0x7f being e4m3's NaN); rows past M or N repeat the last
//     row (they reach only C values never stored). Each thread then arrives on the slot's `full`
//     mbarrier with cp.async.mbarrier.arrive.noinc, which fires once its copies have landed (128
//     arrivals a phase). Where K % 16 != 0 the chunks go byte by byte through registers and
//     st.shared, then fence.proxy.async and a plain arrive;
//   - warpgroups 1 and 2 are the consumers (setmaxnreg.inc to 232), rows 0-63 and 64-127 of the
//     tile. Per slot: wait on `full`, fence the async proxy (cp.async writes, wgmma reads), then
//     for each half of the 256 columns four wgmma.m64n128k32.e4m3 (the slot's 128 of k) into a
//     temporary accumulator, the first with scale-d = 0, wait_group 0, and add the temporary into
//     the f32 accumulator: the products go into f32 every 128 of k (DeepSeek-V3's recipe). After
//     the second half the slot goes back on `empty` (one arrival a consumer warp). The adds read
//     only registers of groups already waited for, so ptxas keeps every wgmma asynchronous; the
//     other warpgroup's wgmma keep the tensor cores busy while one adds;
//   - the end: acc x a_scale[row] x b_scale[col] in f32, rounded to bf16 pairs into a staging area
//     of the warp's own (16 rows of 144 bytes: the 32 lanes' writes land on 32 banks), read back as
//     16-byte chunks, eight lanes a row: every store to C is a whole 128-byte line (element by
//     element when N % 8 != 0), guarded at M and N.
// Needs an sm_90 GPU (wgmma and setmaxnreg are sm_90a instructions) or the simulator.
// Run:  warpbook check 33-fp8-gemm solutions/33-fp8-gemm.cu
//       warpbook predict 33-fp8-gemm solutions/33-fp8-gemm.cu --gpu h100-sxm
//
// Why: at 4096^3 the kernel must do 137 GFLOP and move at least 67 MB, 2048 FLOP a byte: all
// tensor cores. mma.sync's e4m3 form is not in Hopper's machine code (ptxas unpacks it to two f16
// HMMA and 4 FADD, 351 TFLOP/s by `warpbook probe` on an H200), and unpacked by hand to f16 it
// stops at the f16 mma.sync ceiling (about 650 TFLOP/s). The datasheet's 1979 TFLOP/s is wgmma's.
// Its catch is precision: inside an FP8 wgmma the tensor cores keep about 14 bits while they sum,
// so a sum left on them for all of K drifts from f32 as K grows. Moved into f32 registers every 128
// of k, the sums stay close: the puzzle's tolerance adds 2e-4 of the case's largest |C| to atol
// (README, "The tolerance"), and on an H100 at 4096^3 this kernel passes it in every run (7 seeds;
// at 5e-5 it misses on 3-8 of 16.8 M elements). torch._scaled_mm promotes too and passes; with
// use_fast_accum=True (the sums left on the tensor cores) it misses on about 10,000 elements.
// Why 128 x 256 and two halves: a 256-column tile halves the L2 bytes per FLOP of a 128 x 128 one;
// a whole m64n256 temporary beside a 128-register accumulator would not fit in 232 registers, so
// each half-slot is summed into 64 temporaries and added before the next.
//
// Measured (H100 80GB HBM3, 4096^3): 135.8 us, 1012 TFLOP/s, 51% of the FP8 datasheet (`warpbook
// check`); beside PyTorch in one run (scripts/puzzles_vs_torch.sh) 136.3 us against
// torch._scaled_mm's 109.9 us: 0.81x; the Triton form (tl.dot with max_num_imprecise_acc=128, the
// same promotion) 162.2 us. In another run `_scaled_mm` with use_fast_accum=True took 100.1 us
// where its default took 114.8 and this kernel 137.1.
// Napkin maths: 137.4 GFLOP at 1979 TFLOP/s = 69 us; DRAM 67 MB at 3.35 TB/s = 20 us; L2 to SM
// 512 tiles x 32 slots x 48 KB = 805 MB, 5.9 TB/s at 137 us.
// `warpbook predict --gpu h100-sxm` (predicted): 120 us, L2-bound (0.89x the measurement).
// Registers: 168 a thread at launch (65536 / 384), 40 x 128 + 232 x 256 after setmaxnreg; ptxas
// (sm_90a): no spills, and no wgmma serialised (no C7513 / C7514 under `nvcc -Xptxas -v`). Shared
// memory: 4 x 48 KB of ring + 1 KB of alignment slack + 128 B of barriers + 8 x 2304 B of staging =
// 216192 B.
//
// What loses (H100, `warpbook run` side by side in one call, where this file took 137.1 us; each
// one change from this file unless said):
//   - f16 mma.sync on fragments unpacked once with cvt.rn.f16x2.e4m3x2, cp.async ring, two blocks
//     an SM (the Curriculum II design, bench/perfmodel/curriculum2/33-fp8-unpacked-f16-mma.cu):
//     287.3 us, 0.40x torch._scaled_mm; exact f32 sums;
//   - C stored from registers (4-byte bf16 pairs): 147.4 us;
//   - 128 x 128 tiles (one m64n128 group a slot), 6 stages, GRID 132: 157.1 us with C staged,
//     164.9 from registers; with two temporaries in turn (wait_group 1): 166.9;
//   - 128 x 192 tiles, 5 stages: 175.1 us;
//   - no warp specialisation, every thread copying and multiplying, the sums moved every 32 of k:
//     236 us on an H200 (bench/perfmodel/experiments/fp8-wgmma).
// On an NVIDIA H200 (`warpbook check` in the gpu test): 135.52 us, 51.2% of the speed of light
// `warpbook probe` measures there: gold.
// measured: 135.52 us on NVIDIA H200
// measured: 135.78 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=256
// @tune WM=32
// @tune WN=128
// @tune BK=128
// @tune STAGES=4
// @tune SMEM=216192
// @tune PRODUCER=1
// @tune GRID=128
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#if BM != 128 || BN != 256 || BK != 128 || PRODUCER != 1 || (BM / WM) * (BN / WN) != 8
#error                                                                                             \
    "written for 128 x 256 tiles, 128 bytes of k a slot, 8 consumer warps and a producer warpgroup"
#endif
#define GROUP 8            // rows of tiles the raster walks column by column
#define A_TILE (128 * 128) // bytes of A a slot holds
#define B_TILE (256 * 128) // and of B
#define STAGE_BYTES (A_TILE + B_TILE)
#define EPI_PITCH 144 // bytes a staged row of 64 bf16 takes: rows start on new banks
#define EPI_WARP_BYTES (16 * EPI_PITCH)
#if SMEM < STAGES * STAGE_BYTES + 1024 + 128 + 8 * EPI_WARP_BYTES
#error                                                                                             \
    "SMEM: STAGES x 48 KB of ring, 1 KB of alignment slack, 128 B of barriers, 8 x 2304 B of staging"
#endif
#if STAGES > 8
#error "the barriers' 128 bytes hold 8 stages"
#endif

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Arrives once this thread's earlier cp.async have landed (.noinc: the arrival is one of the
// barrier's expected count).
__device__ __forceinline__ void cp_async_arrive(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
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
// K-major operand in the 128-byte swizzle (mode 1) at addr, a 1 KB boundary plus 32 bytes a k32
// step: 1024 bytes from one 8-row group to the next.
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3ffffu) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
// An empty asm that claims to read and write each register: the compiler may not move a use of
// them across it (CUTLASS's warpgroup_fence_operand).
__device__ __forceinline__ void fence_regs(float (&r)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// d (64 x 128 f32) = [d +] A (64 x 32 e4m3) x B (128 x 32 e4m3)^T, both K-major in shared memory.
template <int ACCUMULATE>
__device__ __forceinline__ void wgmma_n128(float (&d)[64], unsigned long long da,
                                           unsigned long long db) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
               "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%"
               "22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%"
               "42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%"
               "62,%63}, %64, %65, %66, 1, 1;\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                 "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
                 "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
                 "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
                 "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
                 "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
                 "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
                 "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
                 "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),
                 "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),
                 "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "l"(da), "l"(db), "n"(ACCUMULATE));
}
// One slot's 128 of k for 128 columns: four k32 wgmma (32 bytes apart: +2 in the descriptor's
// 16-byte units) into t, a fresh sum.
__device__ __forceinline__ void mma_slot(float (&t)[64], unsigned long long da,
                                         unsigned long long db) {
  fence_regs(t);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  wgmma_n128<0>(t, da, db);
  wgmma_n128<1>(t, da + 2, db + 2);
  wgmma_n128<1>(t, da + 4, db + 4);
  wgmma_n128<1>(t, da + 6, db + 6);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Tile t of the grouped raster: GROUP rows of tiles, walked column by column.
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int per_group = GROUP * tiles_n, first = (t / per_group) * GROUP;
  const int rows = min(tiles_m - first, GROUP), i = t % per_group;
  tm = first + i % rows;
  tn = i / rows;
}

// The 16-byte chunk (row r, k .. k + 15) of X (rows x K bytes) through registers, zeros outside:
// for rows that are not 16-byte aligned.
__device__ __forceinline__ void load_chunk_bytes(unsigned char* dst, const unsigned char* X,
                                                 int rows, int K, int r, int k) {
  __align__(16) unsigned char v[16];
#pragma unroll
  for (int j = 0; j < 16; ++j) v[j] = (r < rows && k + j < K) ? X[(long long)r * K + k + j] : 0;
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

extern "C" __global__ void __launch_bounds__(384, 1)
    fp8_gemm(const __nv_fp8_e4m3* __restrict__ A8, const __nv_fp8_e4m3* __restrict__ B8,
             const float* __restrict__ a_scale, const float* __restrict__ b_scale,
             __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The swizzle is on absolute addresses: the ring starts on a 1 KB boundary.
  const unsigned raw = smem_addr(smem_raw), sbase = (raw + 1023u) & ~1023u;
  unsigned char* smem = smem_raw + (sbase - raw);
  const unsigned bars = sbase + STAGES * STAGE_BYTES, epi = bars + 128;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); };

  const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32, lane = tid % 32;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 128); // every producer thread, once a phase
      mbar_init(empty(s), 8);  // every consumer warp, once a phase
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  const int tiles_m = (M + 127) / 128, tiles_n = (N + 255) / 256;
  const int tiles = tiles_m * tiles_n, ktiles = (K + 127) / 128;

  if (wg == 0) {
    // The producer: thread tid copies chunk tid % 8 of rows tid / 8 + 16 i of each tile. A step of
    // 16 rows keeps the swizzle (r % 8), so chunk i lies 2048 i bytes after chunk 0.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    const unsigned char* A = reinterpret_cast<const unsigned char*>(A8);
    const unsigned char* B = reinterpret_cast<const unsigned char*>(B8);
    const bool aligned = K % 16 == 0;
    const int cr = tid / 8, cc = tid % 8;
    const unsigned soff = cr * 128 + ((cc ^ (cr % 8)) << 4);
    const long long step = 16ll * K; // 16 rows
    int it = 0;                      // slots filled so far: slot it % STAGES, pass it / STAGES
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int tm, tn;
      tile_coords(t, tiles_m, tiles_n, tm, tn);
      const int bm = tm * 128, bn = tn * 256;
      // This thread's first row of the tile and the matrix's last row, at k = 0: rows grow with
      // i, so min(row pointer, last row's pointer) clamps them at M - 1 (N - 1).
      const unsigned long long a0 = (unsigned long long)(A + (long long)(bm + cr) * K + cc * 16);
      const unsigned long long b0 = (unsigned long long)(B + (long long)(bn + cr) * K + cc * 16);
      const unsigned long long a_last = (unsigned long long)(A + (long long)(M - 1) * K + cc * 16);
      const unsigned long long b_last = (unsigned long long)(B + (long long)(N - 1) * K + cc * 16);
      for (int kt = 0; kt < ktiles; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(empty(s), ((it / STAGES) & 1) ^ 1); // the consumers are done with the slot
        const unsigned dst = sbase + s * STAGE_BYTES + soff;
        const int k = kt * 128 + cc * 16;
        if (aligned) {
          const bool in = k < K;
          const int bytes = in ? 16 : 0;
          unsigned long long p = a0 + kt * 128, last = a_last + kt * 128;
#pragma unroll
          for (int i = 0; i < 8; ++i, p += step)
            cp_async16(dst + i * 2048, in ? (const void*)min(p, last) : (const void*)A, bytes);
          p = b0 + kt * 128, last = b_last + kt * 128;
#pragma unroll
          for (int i = 0; i < 16; ++i, p += step)
            cp_async16(dst + A_TILE + i * 2048, in ? (const void*)min(p, last) : (const void*)B,
                       bytes);
          cp_async_arrive(full(s));
        } else {
          unsigned char* d = smem + (dst - sbase);
#pragma unroll 1
          for (int i = 0; i < 8; ++i) load_chunk_bytes(d + i * 2048, A, M, K, bm + cr + 16 * i, k);
#pragma unroll 1
          for (int i = 0; i < 16; ++i)
            load_chunk_bytes(d + A_TILE + i * 2048, B, N, K, bn + cr + 16 * i, k);
          // st.shared is the generic proxy; wgmma reads through the async one.
          asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
          mbar_arrive(full(s));
        }
      }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    return;
  }

  // The consumers: rows 64 cw .. 64 cw + 63 of each tile.
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cw = wg - 1, q = warp % 4, g = lane / 4, tq = lane % 4;
  float acc[128], tmp[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) tmp[i] = 0.0f;
  int it = 0;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    int tm, tn;
    tile_coords(t, tiles_m, tiles_n, tm, tn);
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    for (int kt = 0; kt < ktiles; ++kt, ++it) {
      const int s = it % STAGES;
      mbar_wait(full(s), (it / STAGES) & 1);
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // cp.async wrote, wgmma reads
      const unsigned slot = sbase + s * STAGE_BYTES;
      const unsigned long long da = desc(slot + cw * 64 * 128), db = desc(slot + A_TILE);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        mma_slot(tmp, da, db + ((h * 128 * 128) >> 4)); // columns 128 h .. 128 h + 127
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        fence_regs(tmp);
        if (h == 1 && lane == 0) mbar_arrive(empty(s)); // read whole: hand the slot back first
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[64 * h + i] += tmp[i];
      }
    }

    // The end. Lane (g, tq) of warp q holds rows 16 q + g (+ 8) of the warpgroup's 64 and columns
    // 8 j + 2 tq, + 1: acc[4 j + 2 h], acc[4 j + 2 h + 1] for row + 8 h (j counts 8-column blocks
    // across both halves). Scaled, rounded to bf16 pairs, staged 64 columns at a time in the
    // warp's 16 rows of 144 bytes, and read back as 16-byte chunks, eight lanes a row.
    const unsigned stg = epi + (cw * 4 + q) * EPI_WARP_BYTES;
    const int row0 = tm * 128 + cw * 64 + q * 16;
    float sa[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) sa[h] = row0 + g + 8 * h < M ? a_scale[row0 + g + 8 * h] : 0.0f;
#pragma unroll
    for (int cb = 0; cb < 4; ++cb) {
#pragma unroll
      for (int jj = 0; jj < 8; ++jj) {
        const int j = cb * 8 + jj, c = tn * 256 + 8 * j + 2 * tq;
        const float sb0 = c < N ? b_scale[c] : 0.0f, sb1 = c + 1 < N ? b_scale[c + 1] : 0.0f;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          __nv_bfloat162 v = __floats2bfloat162_rn(acc[4 * j + 2 * h] * sa[h] * sb0,
                                                   acc[4 * j + 2 * h + 1] * sa[h] * sb1);
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(stg + (g + 8 * h) * EPI_PITCH +
                                                         (8 * jj + 2 * tq) * 2),
                       "r"(*reinterpret_cast<unsigned*>(&v))
                       : "memory");
        }
      }
      __syncwarp();
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int rr = 4 * i + lane / 8, ch = lane % 8;
        uint4 v;
        asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "r"(stg + rr * EPI_PITCH + ch * 16)
                     : "memory");
        const int r = row0 + rr, c = tn * 256 + cb * 64 + ch * 8;
        if (r >= M || c >= N) continue;
        __nv_bfloat16* dst = C + (long long)r * N + c;
        if (N % 8 == 0) { // the row starts 16-byte aligned and the chunk lies wholly inside
          *reinterpret_cast<uint4*>(dst) = v;
        } else {
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const unsigned w = e < 2 ? v.x : e < 4 ? v.y : e < 6 ? v.z : v.w;
            if (c + e < N) dst[e] = __ushort_as_bfloat16((unsigned short)(w >> (16 * (e & 1))));
          }
        }
      }
      __syncwarp(); // every lane has read before the next 64 columns are written
    }
  }
}
