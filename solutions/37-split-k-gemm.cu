// Solution · 37 split-K GEMM on wgmma: puzzle 21's mainloop over slices of K, f32 partials in a
// workspace, a second kernel that adds them in a fixed order and rounds once
//
// What: C[M x N] (bf16) = A[M x K] (bf16) x B^T, B given as [N x K] (bf16): C[r][c] = bf16(sum
// over k of A[r][k] * B[c][k]), products exact, sums in f32, one rounding at the end.
//   - splitk_gemm, grid [N / 128, M / 128, S]: block (x, y, z) computes the 128 x 128 tile (y, x)
//     of C over slice z of K and stores its f32 partial tile in slice z of the workspace. K is cut
//     into whole BK = 64 k-tiles, shared out as evenly as they go: slice z takes tiles
//     z T / S .. (z + 1) T / S - 1 of the T = cdiv(K, 64), so slices differ by one k-tile at most.
//     S (puzzle.toml) is WAVE / tiles: at 512 x 512 x 16384, 16 tiles and S = 8 slices of 2048,
//     128 blocks, one on each of 128 of the 132 SMs, 32 k-steps apiece.
//   - The mainloop is solution 21's: two warpgroups (256 threads; the launch's WM x WN = 64 x 32
//     only sets that count), warpgroup w owning rows 64 w .. 64 w + 63 and all 128 columns, each
//     k-step four wgmma.mma_async.m64n128k16 that read A and B straight from shared memory
//     through 128B-swizzle descriptors; a ring of STAGES = 5 slots of 32 KB filled by cp.async
//     (three tiles in flight ahead of the one multiplied), fence.proxy.async before the tensor
//     cores read what the threads copied, one __syncthreads() a step, wgmma.wait_group 1 so the
//     tensor cores always have the next step queued. Solution 21's header explains each choice.
//     Only the pointers start kb = t0 x 64 further on, and the bounds tests compare with the
//     slice's end (K for the last slice).
//   - The partial tile leaves through shared memory: each warp parks its 16 x 128 f32 (rows
//     8 words apart in the banks) and writes whole 512-byte rows, plain stores: the reduction reads
//     these bytes next and they should still be in the L2 (8 slices of 1 MB).
//   - splitk_reduce: a thread per 4 outputs adds their S partials with float4 loads, four slices'
//     loads in flight before their adds, in the order z = 0 .. S - 1, and writes 4 bf16. The fixed
//     order makes the result bit-identical from run to run: f32 addition is not associative, and
//     atomicAdd into an f32 copy of C adds the slices in whatever order they finish. CUTLASS's
//     "parallel" split-K is this (a workspace and a reduction kernel).
// Needs an sm_90 GPU (wgmma is an sm_90a instruction) or the simulator. On other GPUs, puzzle
// 20's mma.sync mainloop does the same job: bench/perfmodel/data/curriculum3-variants/src/37/
// base.cu is this puzzle solved that way (31.0-31.7 us on an H100 and an H200).
// Run:  warpbook check 37-split-k-gemm solutions/37-split-k-gemm.cu
//       warpbook predict 37-split-k-gemm solutions/37-split-k-gemm.cu --gpu h100-sxm
//
// Why: 512 x 512 x 16384 is 8.6 GFLOP over 34 MB (2 MK + 2 NK + 2 MN bytes): 252 FLOP per byte,
// just under the H100's ridge (989 TFLOP/s / 3.35 TB/s = 295). C has only 16 tiles of 128 x 128:
// one block a tile would leave 116 of 132 SMs idle, each busy one walking all of K. Cut K into
// 8 slices and 128 blocks of 2048-deep work fill the GPU; the price is the partials' round trip
// (S x M x N x 4 bytes: 8 MB written and read back) and a second launch. With one block an SM, the
// block must keep its SM's tensor cores busy alone: 8 warps of mma.sync (puzzle 20's mainloop)
// reach about two thirds of what wgmma does, and a warpgroup MMA needs no fragment loads, so the
// threads only copy. Three k-tiles in flight (5 slots) cover the L2's latency for a block that
// has no neighbour on its SM to hide it.
//
// Napkin maths: DRAM 34 MB at 3.35 TB/s = 10.2 us on an H100 (7.1 us at the H200's 4.8 TB/s), the
// speed of light; the tensor cores 8.7 us at the datasheet's 989 TFLOP/s. Each block reads
// 32 KB of A and B from the L2 per 2.1 MFLOP k-step: 128 MB through the L2 in all.
// Measured on an NVIDIA H200 (`warpbook check`, one call, the same inputs): this file 21.70 us,
// 40% of the speed of light (gold is 35%). Beside it in the same call: the same kernel at 4 slots
// 24.06 us, at 3 slots 36.03 us; 128 x 256 tiles (m64n256k16, S = 16: twice the partials) at 4
// slots 24.35 us, at 3 slots 29.86 us; puzzle 20's mma.sync mainloop in its best shape here
// (128 x 128, 4 warps of 64 x 64, 4 stages) 31.17 us. On an NVIDIA H100 80GB HBM3 (`warpbook
// check` in the gpu test, ceilings probed there): 23.50 us, 45% of the speed of light, gold; the
// mma.sync form measures 31.65 us there.
// measured: 21.70 us on NVIDIA H200
// measured: 23.50 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=128
// @tune WM=64
// @tune WN=32
// @tune BK=64
// @tune STAGES=5
// @tune WAVE=132
// @tune KMIN=256
// @tune RBLOCK=256
// @tune RPER=4
// @tune FUSED=0
#include <cuda_bf16.h>

#define THREADS ((BM / WM) * (BN / WN) * 32)
#if BM != 128 || BK != 64 || THREADS != 256 || (BN != 128 && BN != 256) || STAGES < 3
#error "this kernel is written for 128 x 128 or 128 x 256 tiles, BK = 64, two warpgroups, 3+ stages"
#endif
#define NACC (BN / 2) // accumulators a thread: 64 x BN f32 over a warpgroup's 128
#define ROW_BYTES 128 // one tile row: BK bf16, the 128-byte swizzle's row
#define A_BYTES (BM * ROW_BYTES)
#define B_BYTES (BN * ROW_BYTES)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define PS (BN + 8) // a row of a warp's f32 staging tile: rows 8 words apart in the banks

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
__device__ __forceinline__ unsigned swz(int r, int c) {
  return r * 128 + ((c ^ (r % 8)) << 4);
}
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3ffffu) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
// d (64 x 128 f32, the warpgroup's accumulators) += A (64 x 16, bf16) x B (128 x 16, bf16)^T,
// both K-major in shared memory (descriptors da, db).
__device__ __forceinline__ void wgmma_tile(float (&d)[64], unsigned long long da,
                                           unsigned long long db) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%"
      "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%"
      "48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, 1, 1, 1, 0, 0;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "l"(da), "l"(db));
}
// d (64 x 256 f32, the warpgroup's accumulators) += A (64 x 16, bf16) x B (256 x 16, bf16)^T,
// both K-major in shared memory (descriptors da, db).
__device__ __forceinline__ void wgmma_tile256(float (&d)[128], unsigned long long da,
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

template <int NR>
__device__ __forceinline__ void mma_step(float (&d)[NR], unsigned long long da,
                                         unsigned long long db) {
  if constexpr (NR == 64)
    wgmma_tile(d, da, db);
  else
    wgmma_tile256(d, da, db);
}

__device__ __forceinline__ void load_chunk_scalar(unsigned char* dst, const __nv_bfloat16* X,
                                                  int rows, int ld, int klim, int r, int k) {
  __align__(16) unsigned short v[8];
  const unsigned short* Xs = reinterpret_cast<const unsigned short*>(X);
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = (r < rows && k + j < klim) ? Xs[(long long)r * ld + k + j] : 0;
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

// The k-loop over the slice's k-tiles [t0, t1) on a ring of NS slots.
template <int NS>
__device__ __forceinline__ void mainloop(float (&acc)[NACC], unsigned sbase, unsigned char* smem,
                                         const __nv_bfloat16* __restrict__ A,
                                         const __nv_bfloat16* __restrict__ B, int M, int N, int K,
                                         int bm, int bn, int t0, int t1) {
  constexpr int P = NS - 2;
  const int tid = threadIdx.x, wg = tid / 128;
  const bool vec = (K % 8) == 0;
  const int kb = t0 * BK, kend = min(K, t1 * BK);
  const int cr = tid / 8, cc = tid % 8;
  const unsigned sa = sbase + swz(cr, cc);
  const __nv_bfloat16* pa[4];
  const __nv_bfloat16* pb[BN / 32];
#pragma unroll
  for (int i = 0; i < 4; ++i) pa[i] = A + (long long)min(bm + cr + 32 * i, M - 1) * K + kb + cc * 8;
#pragma unroll
  for (int i = 0; i < BN / 32; ++i)
    pb[i] = B + (long long)min(bn + cr + 32 * i, N - 1) * K + kb + cc * 8;
  auto load_tile = [&](int kt, int s) {
    const int k0 = kt * BK;
    if (vec) {
      const bool in = kb + k0 + cc * 8 < kend;
#pragma unroll
      for (int i = 0; i < 4; ++i)
        cp_async16(sa + s * STAGE_BYTES + i * 32 * ROW_BYTES, in ? pa[i] + k0 : A, in ? 16 : 0);
#pragma unroll
      for (int i = 0; i < BN / 32; ++i)
        cp_async16(sa + s * STAGE_BYTES + A_BYTES + i * 32 * ROW_BYTES, in ? pb[i] + k0 : B,
                   in ? 16 : 0);
      return;
    }
    unsigned char* st = smem + s * STAGE_BYTES;
#pragma unroll
    for (int i = 0; i < 4; ++i)
      load_chunk_scalar(st + swz(cr + 32 * i, cc), A, M, K, kend, bm + cr + 32 * i,
                        kb + k0 + cc * 8);
#pragma unroll
    for (int i = 0; i < BN / 32; ++i)
      load_chunk_scalar(st + A_BYTES + swz(cr + 32 * i, cc), B, N, K, kend, bn + cr + 32 * i,
                        kb + k0 + cc * 8);
  };

  const unsigned long long da0 = desc(sbase + wg * 64 * ROW_BYTES), db0 = desc(sbase + A_BYTES);
  const int ktiles = t1 - t0;
#pragma unroll
  for (int s = 0; s < P; ++s) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<P - 1>();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    const int next = kt + P;
    if (next < ktiles) load_tile(next, next % NS);
    cp_async_commit();
    const unsigned long long off = (unsigned long long)((kt % NS) * STAGE_BYTES) >> 4;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) mma_step(acc, da0 + off + 2 * kk, db0 + off + 2 * kk);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  cp_async_wait<0>();
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    splitk_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                float* __restrict__ part, unsigned* __restrict__ tickets,
                __nv_bfloat16* __restrict__ C, int M, int N, int K, int S) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const unsigned raw = smem_addr(smem_raw);
  const unsigned sbase = (raw + 1023u) & ~1023u;
  unsigned char* smem = smem_raw + (sbase - raw);
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int ktotal = (K + BK - 1) / BK;
  const int t0 = (int)((long long)blockIdx.z * ktotal / S),
            t1 = (int)((long long)(blockIdx.z + 1) * ktotal / S);

  float acc[NACC];
#pragma unroll
  for (int i = 0; i < NACC; ++i) acc[i] = 0.0f;
  if (sbase == raw) {
    mainloop<STAGES>(acc, sbase, smem, A, B, M, N, K, bm, bn, t0, t1);
  } else {
#if STAGES > 3
    mainloop<STAGES - 1>(acc, sbase, smem, A, B, M, N, K, bm, bn, t0, t1);
#else
    __trap(); // two slots past the boundary would leave nothing in flight
#endif
  }
  __syncthreads(); // the ring is idle: its memory becomes the staging area

  // Lane (g, t) of warp q of warpgroup wg holds rows 16 q + g and + 8 of the warpgroup's 64,
  // columns 8 j + 2 t and + 1: acc[4 j + 2 h], acc[4 j + 2 h + 1].
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int r0 = bm + (warp / 4) * 64 + (warp % 4) * 16;
  if (r0 >= M) return;
  float* Ps = reinterpret_cast<float*>(smem_raw) + warp * 16 * PS;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      *reinterpret_cast<float2*>(Ps + (g + 8 * h) * PS + 8 * j + 2 * t) =
          make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
  __syncwarp();
  float* Cp = part + (long long)blockIdx.z * M * N;
  const bool quad = (N % 4) == 0;
#pragma unroll 4
  for (int r = 0; r < 16; ++r) {
    if (r0 + r >= M) break;
#pragma unroll
    for (int c2 = 0; c2 < BN / 128; ++c2) {
      const int c = bn + 128 * c2 + 4 * lane;
      const float4 v = *reinterpret_cast<const float4*>(Ps + r * PS + 128 * c2 + 4 * lane);
      float* out = Cp + (long long)(r0 + r) * N + c;
      if (quad && c + 3 < N) {
        *reinterpret_cast<float4*>(out) = v;
      } else {
        if (c < N) out[0] = v.x;
        if (c + 1 < N) out[1] = v.y;
        if (c + 2 < N) out[2] = v.z;
        if (c + 3 < N) out[3] = v.w;
      }
    }
  }
}

// The combine: thread i adds the S partials of outputs RPER i .. RPER i + RPER - 1 in the order
// z = 0 .. S - 1 (one order, so the same bits every run) and rounds each sum once, to bf16. The
// partials were written a moment ago and are still in the L2. When M x N is a multiple of RPER
// every slice's run of RPER floats is aligned, and one vector load takes it.
#if RPER == 8 || RPER == 4
#define RVEC 4
typedef float4 rvec_t;
#elif RPER == 2
#define RVEC 2
typedef float2 rvec_t;
#else
#define RVEC 1
typedef float rvec_t;
#endif

extern "C" __global__ void __launch_bounds__(RBLOCK)
    splitk_reduce(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                  float* __restrict__ part, unsigned* __restrict__ tickets,
                  __nv_bfloat16* __restrict__ C, int M, int N, int K, int S) {
  const long long total = (long long)M * N,
                  i = (long long)RPER * (blockIdx.x * RBLOCK + threadIdx.x);
  if (i >= total) return;
  if (total % RPER == 0) {
    float s[RPER];
#pragma unroll
    for (int j = 0; j < RPER; ++j) s[j] = 0.0f;
    // Several slices' loads issued before their adds: more bytes in flight per thread.
    constexpr int U = RPER >= 4 ? 4 : 8 / RPER;
    int z = 0;
    for (; z + U <= S; z += U) {
      rvec_t v[U][RPER / RVEC];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int q = 0; q < RPER / RVEC; ++q)
          v[u][q] = *reinterpret_cast<const rvec_t*>(part + (z + u) * total + i + q * RVEC);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < RPER; ++j) s[j] += reinterpret_cast<const float*>(v[u])[j];
    }
    for (; z < S; ++z)
#pragma unroll
      for (int q = 0; q < RPER / RVEC; ++q) {
        const rvec_t v = *reinterpret_cast<const rvec_t*>(part + z * total + i + q * RVEC);
#pragma unroll
        for (int j = 0; j < RVEC; ++j) s[q * RVEC + j] += reinterpret_cast<const float*>(&v)[j];
      }
#pragma unroll
    for (int j = 0; j + 1 < RPER; j += 2)
      *reinterpret_cast<__nv_bfloat162*>(C + i + j) = __floats2bfloat162_rn(s[j], s[j + 1]);
    if (RPER == 1) C[i] = __float2bfloat16(s[0]);
    return;
  }
  for (long long e = i; e < min(total, i + RPER); ++e) {
    float s = 0.0f;
    for (int z = 0; z < S; ++z) s += part[z * total + e];
    C[e] = __float2bfloat16(s);
  }
}
