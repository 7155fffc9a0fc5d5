// Solution · 21 GEMM + bias + GELU (bf16 in and out) on Hopper's wgmma, with a fused epilogue
//
// What: Y[M x N] (bf16) = gelu(A[M x K] x B^T + bias), B given as [N x K] (an nn.Linear weight),
// all bf16, row-major; the sums in f32 on the tensor cores, the bias and GELU (tanh form) in f32
// registers, Y rounded to bf16 once. Puzzle 20 teaches mma.sync, the warp-level MMA every GPU
// since Ampere has; this solution takes the H200's own path, wgmma, the warpgroup MMA that
// reads both operands straight from shared memory:
//   - a block of 256 threads (two warpgroups of 4 warps) per 128 x 256 tile of Y, one block per
//     SM; warpgroup w owns rows 64 w .. 64 w + 63 and all 256 columns, and runs
//     wgmma.mma_async.m64n256k16.f32.bf16.bf16: 64 x 256 x 16 per instruction, its 64 x 256 f32
//     accumulators spread over the 128 threads (128 registers each);
//   - K in steps of BK = 64: a tile row is then 128 bytes, one row of the 128-byte swizzle
//     (16-byte chunk c of row r sits at chunk c ^ (r % 8) of its 1 KB, 8-row atom), which is the
//     layout wgmma's descriptor mode 1 reads without bank conflicts; a shared-memory descriptor
//     (start, 1 KB from one atom to the next, the mode) names each operand, and 16 of k further is
//     32 bytes further, so the four wgmma of a step differ by a constant;
//   - a ring of STAGES = 4 slots of 48 KB (A's 128 rows and B's 256), filled by cp.async.cg, 12
//     chunks of 16 bytes per thread per step, the copies' addresses worked out once; tile kt + 2 is
//     copied while tile kt is multiplied, one __syncthreads() per step. wgmma is asynchronous: a
//     step's four are committed as one group and wait_group 1 waits only for the step before, so
//     the tensor cores are never left without work while the threads wait for copies and the
//     barrier. A slot is overwritten two steps after it was read, once that wait has passed;
//   - cp.async writes shared memory through the generic proxy and wgmma reads it through the
//     async proxy: fence.proxy.async between them, or the tensor cores may read stale bytes;
//   - the swizzle is on absolute shared addresses, so the ring starts on a 1 KB boundary (the
//     start of dynamic shared memory on the H200 and in the simulator); where it does not, the
//     loop runs on STAGES - 1 slots past the next boundary instead of overrunning the buffer;
//   - edges as puzzle 20's solution: rows past M (N) copied from the last row, chunks past K
//     copied as zeros (source size 0), element by element when K % 8 != 0;
//   - the epilogue: lane (g, t) of warp q of a warpgroup holds rows 16 q + g and + 8, columns
//     8 j + 2 t and + 1, for j < 32. It adds the bias, applies GELU as x / (1 + e^-2u) (__expf,
//     __fdividef: puzzle 21's README says why this form), rounds to bf16 and parks the pairs in a
//     16 x 256 staging tile per warp in the ring's now idle memory; then each row of 256 bf16 goes
//     out in one 16-byte store per lane.
// Needs an sm_90 GPU (wgmma is an sm_90a instruction; NVRTC gets sm_90a on Hopper) or the
// simulator. On other GPUs, puzzle 20's mma.sync loop with this epilogue is the way:
// bench/perfmodel/curriculum2/21-mma-gelu-unrolled-fdividef.cu is that kernel (312 us on the H200,
// below). Run:  warpbook check 21-gemm-bias-gelu solutions/21-gemm-bias-gelu.cu
//       warpbook predict 21-gemm-bias-gelu solutions/21-gemm-bias-gelu.cu
//
// Why: at 4096^3 a GEMM is 1365 FLOP per DRAM byte, far right of the ridge: everything is feeding
// the tensor cores. mma.sync tops out at ~633-651 TFLOP/s on the H200 (`warpbook probe`), wgmma
// at ~895 with random data (up to ~966 with near-constant tiles, which switch fewer bits). The
// probe keeps mma.sync's operands in registers and still stops there: on Hopper
// the warp-level instruction itself runs at about two thirds of the tensor cores' rate, and a
// GEMM adds an ldmatrix for every 4 mma on top. A wgmma of m64n256k16 is 524288 FLOP per
// instruction per warpgroup, its operands read from shared memory with no fragment loads at all,
// so the threads are free to issue the copies. The L2 feeds it: a 128 x 256 tile reads 48 KB per
// 4.19 MFLOP step, 1.61 GB from the L2 at 4096^3 (512 tiles x 64 steps), 8 TB/s at 202 us.
// Nsight Compute on the H200 (`NCU=21 bash scripts/gpu_session.sh ncu`, one launch, 215 us under
// the profiler): tensor pipe 72% busy, L2 56% of its peak (hit rate 77%), DRAM 19%, issue slots
// 29%, warps stalled mostly on the copies (long scoreboard) and on wgmma's wait. So the tensor
// cores are the busiest unit, and the other 28% is time they wait: each tile starts with the ring
// filling (two steps of copies with nothing to multiply) and ends with the epilogue (one block per
// SM, so nothing overlaps it), and every step has a barrier. `warpbook predict` names the L2 first
// and the tensor pipe second: 207 us predicted (1.64 GB at the 8.82 TB/s probed for L2 reads). Two
// things the model needs for this kernel: a grid's first blocks share the DRAM fetch of their
// panels with the blocks beside them, and a wgmma does not hold its warp until the tensor pipe is
// free (without them it says 271 us). What it misses is the ring's depth: with 3 slots (one tile in
// flight ahead instead of two) this kernel took 281 us beside this file's 208 in one call,
// where the model says 217 (it gives the L2 no extra latency under load). What the H200 offers
// beyond this: a producer warp feeding the ring with TMA while two consumer warpgroups alternate
// tiles (one's epilogue under the other's mainloop), and clusters whose TMA multicast copies one B
// tile into two SMs for one L2 read. The simulator runs neither TMA's tensor form nor clusters, so
// this solution stops at what it can check. Shared memory: 4 x 48 KB = 196608 B, puzzle 21's
// formula at these tunables (the epilogue's 8 x 16 x 264 x 2 = 67584 B reuse it). Registers: 255,
// no spills (ptxas, sm_90a). Grid at 4096^3: 16 x 32 = 512 blocks over 132 SMs (3.9 waves).
//
// Napkin maths (H200): 137.4 GFLOP at 989 TFLOP/s (datasheet, dense bf16) = 139 us; at the
// wgmma ceiling `warpbook probe` measured (936 TFLOP/s) 147 us; at mma.sync's (633) 217 us.
// DRAM: 2 x 33.6 MB in, 33.6 MB out: 101 MB, 21 us at 4.8 TB/s.
// Measured on the H200 (`warpbook check`, side by side): this file 202.2 us, 680 TFLOP/s, 72.6% of
// the speed of light (the 936 TFLOP/s wgmma ceiling probed in the same call), gold; 107% of the
// bf16 mma.sync ceiling probed with it (633 TFLOP/s). The fastest mma.sync form
// (21-mma-gelu-unrolled-fdividef.cu) 312.0 us, 441 TFLOP/s: wgmma is 1.54x faster. In a second
// call: 207.8 us against 314.7; beside PyTorch and Triton, 209.6 us, PyTorch eager (cuBLAS's GEMM
// on wgmma, then a GELU pass) 197.9 us, Triton (the README's kernel) 258.0 us. Eight more checks of
// this file on fresh random data all passed (wgmma's f32 sums stay within the puzzle's 2e-4: bf16
// products are exact and the accumulator is f32; FP8's is not, see 33).
// measured: 202.24 us on NVIDIA H200
// measured: 207.07 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=256
// @tune WM=64
// @tune WN=64
// @tune BK=64
// @tune STAGES=4
#include <cuda_bf16.h>

#define THREADS ((BM / WM) * (BN / WN) * 32)
#if BM != 128 || BN != 256 || BK != 64 || THREADS != 256 || STAGES < 3 || STAGES > 4
#error "this kernel is written for 128 x 256 tiles, BK = 64, two warpgroups and 3 or 4 stages"
#endif
#define ROW_BYTES 128            // one tile row: BK bf16, the 128-byte swizzle's row
#define A_BYTES (BM * ROW_BYTES) // 16 KB
#define B_BYTES (BN * ROW_BYTES) // 32 KB
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define YS (BN + 8) // a row of a warp's staging tile, in bf16

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N_> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N_) : "memory");
}

// Byte offset of 16-byte chunk c of row r in a tile of 128-byte rows, 128B-swizzled: the chunk
// index XORed with the row's place in its 8-row, 1024-byte atom. That is the layout wgmma's
// swizzle mode 1 reads, and 8 threads copying the 8 chunks of a row hit 8 different bank groups.
__device__ __forceinline__ unsigned swz(int r, int c) {
  return r * 128 + ((c ^ (r % 8)) << 4);
}

// A shared-memory matrix descriptor for a K-major, 128B-swizzled tile starting at `addr` (a
// 1024-byte boundary, plus 32 bytes per 16 of k): start >> 4, leading offset 16 bytes (unused in
// this mode), stride 1024 bytes from one 8-row atom to the next, swizzle mode 1 (bits 62-63).
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3ffffu) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

// d (64 x 256 f32, the warpgroup's accumulators) += A (64 x 16, bf16) x B (256 x 16, bf16)^T.
__device__ __forceinline__ void wgmma_256(float (&d)[128], unsigned long long da,
                                          unsigned long long db) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%"
      "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%"
      "48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%"
      "71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%"
      "94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%"
      "113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, 1, "
      "1, 1, 0, 0;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db));
}

// Chunk (r, k .. k+7) of X (`rows` x K, row-major, K % 8 != 0: rows not 16-byte aligned) into
// shared memory at dst through registers, element by element, zeros outside X.
__device__ __forceinline__ void load_chunk_scalar(unsigned char* dst, const __nv_bfloat16* X,
                                                  int rows, int K, int r, int k) {
  __align__(16) unsigned short v[8];
  const unsigned short* Xs = reinterpret_cast<const unsigned short*>(X);
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = (r < rows && k + j < K) ? Xs[(long long)r * K + k + j] : 0;
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

// The tanh form of GELU, as x * sigmoid(2u): 0.5 x (1 + tanh(u)) = x / (1 + e^-2u). No
// cancellation in the negative tail, and no NaN at large |x|: e^-2u is 0 or inf, giving x or -0.
__device__ __forceinline__ float gelu(float x) {
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return __fdividef(x, 1.0f + __expf(-2.0f * u));
}

// The k-loop over a ring of NS slots (NS = STAGES, or one fewer when the dynamic shared memory
// does not start on a 1024-byte boundary): tile kt + NS - 2 is copied while tile kt is multiplied.
template <int NS>
__device__ __forceinline__ void mainloop(float (&acc)[128], unsigned sbase, unsigned char* smem,
                                         const __nv_bfloat16* __restrict__ A,
                                         const __nv_bfloat16* __restrict__ B, int M, int N, int K,
                                         int bm, int bn) {
  constexpr int P = NS - 2; // tiles in flight ahead of the one multiplied
  const int tid = threadIdx.x, wg = tid / 128;
  const bool vec = (K % 8) == 0;
  // Copies: thread tid takes chunk tid % 8 of rows tid / 8 + 32 i (i < 4 of A, i < 8 of B):
  // every such row has the same place in its atom, so one swizzled offset serves all twelve.
  // Rows past M (N) are copied from the last row: they reach only rows (columns) of Y that are
  // never stored.
  const int cr = tid / 8, cc = tid % 8;
  const unsigned sa = sbase + swz(cr, cc);
  const __nv_bfloat16* pa[4];
  const __nv_bfloat16* pb[8];
#pragma unroll
  for (int i = 0; i < 4; ++i) pa[i] = A + (long long)min(bm + cr + 32 * i, M - 1) * K + cc * 8;
#pragma unroll
  for (int i = 0; i < 8; ++i) pb[i] = B + (long long)min(bn + cr + 32 * i, N - 1) * K + cc * 8;
  auto load_tile = [&](int kt, int s) {
    const int k0 = kt * BK;
    if (vec) { // a chunk lies wholly inside K or wholly past it; past it, zeros (source size 0)
      const bool in = k0 + cc * 8 < K;
#pragma unroll
      for (int i = 0; i < 4; ++i)
        cp_async16(sa + s * STAGE_BYTES + i * 32 * ROW_BYTES, in ? pa[i] + k0 : A, in ? 16 : 0);
#pragma unroll
      for (int i = 0; i < 8; ++i)
        cp_async16(sa + s * STAGE_BYTES + A_BYTES + i * 32 * ROW_BYTES, in ? pb[i] + k0 : B,
                   in ? 16 : 0);
      return;
    }
    unsigned char* st = smem + s * STAGE_BYTES;
#pragma unroll
    for (int i = 0; i < 4; ++i)
      load_chunk_scalar(st + swz(cr + 32 * i, cc), A, M, K, bm + cr + 32 * i, k0 + cc * 8);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      load_chunk_scalar(st + A_BYTES + swz(cr + 32 * i, cc), B, N, K, bn + cr + 32 * i,
                        k0 + cc * 8);
  };

  const unsigned long long da0 = desc(sbase + wg * 64 * ROW_BYTES), db0 = desc(sbase + A_BYTES);
  const int ktiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < P; ++s) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<P - 1>(); // this thread's copies of tile kt have landed
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // seen by wgmma's reads
    __syncthreads();         // everyone's have; and everyone's wgmma of tile kt - 2 are done
    const int next = kt + P; // into the slot of tile kt - 2
    if (next < ktiles) load_tile(next, next % NS);
    cp_async_commit(); // even when empty: the group count stays right
    const unsigned long long off = (unsigned long long)((kt % NS) * STAGE_BYTES) >> 4;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) wgmma_256(acc, da0 + off + 2 * kk, db0 + off + 2 * kk);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); // tile kt - 1's are done
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  cp_async_wait<0>();
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_bias_gelu(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                   const __nv_bfloat16* __restrict__ bias, __nv_bfloat16* __restrict__ Y, int M,
                   int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const unsigned raw = smem_addr(smem_raw);
  const unsigned sbase = (raw + 1023u) & ~1023u; // the swizzle's atoms start on 1 KB boundaries
  unsigned char* smem = smem_raw + (sbase - raw);
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  if (sbase == raw) {
    mainloop<STAGES>(acc, sbase, smem, A, B, M, N, K, bm, bn);
  } else {
#if STAGES > 3
    mainloop<STAGES - 1>(acc, sbase, smem, A, B, M, N, K, bm, bn);
#else
    __trap(); // two slots past the boundary would leave nothing in flight
#endif
  }
  __syncthreads(); // the ring is idle: its memory becomes the epilogue's staging area

  // Epilogue. Lane (g, t) of warp q (of 4) in warpgroup wg holds rows 16 q + g and + 8 of the
  // warpgroup's 64, columns 8 j + 2 t and + 1 for j < 32: acc[4 j], acc[4 j + 1] and
  // acc[4 j + 2], acc[4 j + 3]. Add the bias, apply GELU, round to bf16, park the pair in the
  // warp's 16 x 256 staging tile (rows of YS bf16: the 8 rows g of one store fall 4 banks apart).
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int r0 = bm + (warp / 4) * 64 + (warp % 4) * 16; // the warp's first row of Y
  if (r0 >= M) return;
  __nv_bfloat16* Ys = reinterpret_cast<__nv_bfloat16*>(smem_raw) + warp * 16 * YS;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int c = bn + 8 * j + 2 * t;
    const float b0 = c < N ? __bfloat162float(bias[c]) : 0.0f;
    const float b1 = c + 1 < N ? __bfloat162float(bias[c + 1]) : 0.0f;
#pragma unroll
    for (int h = 0; h < 2; ++h)
      *reinterpret_cast<__nv_bfloat162*>(Ys + (g + 8 * h) * YS + 8 * j + 2 * t) =
          __floats2bfloat162_rn(gelu(acc[4 * j + 2 * h] + b0), gelu(acc[4 * j + 2 * h + 1] + b1));
  }
  __syncwarp();
  // Then out, a row at a time: 32 lanes x 16 bytes = the row's 256 bf16 in one store.
#pragma unroll 4
  for (int r = 0; r < 16; ++r) {
    if (r0 + r >= M) break;
    const int c = bn + 8 * lane;
    __nv_bfloat16* out = Y + (long long)(r0 + r) * N + c;
    const __nv_bfloat16* in = Ys + r * YS + 8 * lane;
    if ((N % 8) == 0) {
      if (c < N) *reinterpret_cast<uint4*>(out) = *reinterpret_cast<const uint4*>(in);
    } else {
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (c + q < N) out[q] = in[q];
    }
  }
}
