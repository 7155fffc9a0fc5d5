// Solution · 34 MoE: permute tokens by expert and run the grouped GEMM (bf16, Hopper's wgmma)
//
// What: Y[t][n] = sum_j topk_weights[t][j] * dot(X[t], W[topk_ids[t][j]][n]) with X [T][H] and
// W [E][N][H] in bf16, f32 inside, Y rounded once to bf16. Four launches:
//   moe_count    one block of 1024 threads reads topk_ids (16-byte loads, 4 in flight per thread),
//                counts the rows of each expert with shared-memory atomics, and scans the counts
//                and the row tiles per expert (cdiv(count, BM)) with warp shuffles: offsets,
//                tile starts, and a cursor per expert, in `meta`. E <= 1024.
//   moe_scatter  one thread per assignment f = t * k + j: rows[atomicAdd(&cursor[e], 1)] = f.
//                Only indices move: T k ints, never a permuted copy of X (at T = 16384, k = 8,
//                H = 7168 that copy would be 1.9 GB written and read back). The order inside an
//                expert's group depends on the atomics' order, and nothing else does: every row
//                of the GEMM is computed the same way wherever it sits in a tile.
//   moe_gemm     the grouped GEMM: blockIdx.y is a row tile in the list of all experts' tiles
//                (expert e owns tiles tiles[e] .. tiles[e + 1] - 1, found by a binary search over
//                the E + 1 tile starts); blockIdx.x a column tile. Blocks past the last tile exit.
//                It is solution 21's mainloop with a gathered A: a block of two warpgroups
//                computes a 128 x 256 tile of part (one f32 row per assignment), warpgroup w rows
//                64 w .. 64 w + 63 with wgmma.m64n256k16 bf16 -> f32 reading both operands from
//                shared memory (128 accumulator registers a thread). The block reads its 128
//                assignment numbers f from `rows` once; each thread's cp.async copies read
//                X[f / k] directly (16-byte chunks, so a gathered row costs nothing extra), and
//                rows past the group's end are zeros (source size 0: nothing is read). The B tile
//                is W[e]'s rows n0 .. n0 + 255, already K-major as wgmma wants. K in steps of 64
//                (a tile row is one 128-byte row of the swizzle wgmma's descriptors read), a ring
//                of 4 slots of 48 KB with two tiles in flight, fence.proxy.async between the
//                copies and the tensor cores' reads, one barrier a step, wait_group 1. A
//                warpgroup whose 64 rows are all past the group (a short last tile) only copies.
//                H not a multiple of 8: element-by-element copies with zeros past the edge.
//                The epilogue stores each accumulator pair (8 bytes) straight to part[f][n]: four
//                lanes fill one 32-byte sector of a row, so no sector is half-written.
//   moe_combine  one thread per 8 columns of a token: reads its k rows of part (two float4 each,
//                all 2k loads in flight), sums weight x row in f32 in order j = 0 .. k - 1,
//                rounds to bf16, one 16-byte store.
// Needs an sm_90 GPU (wgmma is an sm_90a instruction) or the simulator. On other GPUs the
// mma.sync form of this GEMM is the way: bench/perfmodel/curriculum2/34-grouped-mma.cu with BK = 64
// and STAGES = 3 (the perf-model entry 34-grouped-mma-bk64-s3), 1.68x slower on the H200 (below).
// Run:  warpbook check 34-moe-grouped-gemm solutions/34-moe-grouped-gemm.cu
//       warpbook predict 34-moe-grouped-gemm solutions/34-moe-grouped-gemm.cu
//
// Why this shape. Floating atomics into Y from the GEMM's epilogue would save the combine pass
// (part: 537 MB written, read back: ~130 us at the perf size) but make Y depend on the order the
// blocks finish in, and Y is bf16, so the k additions would have to go to an f32 copy and a
// conversion pass anyway. Writing part in f32 at the assignment's own position f keeps every
// result deterministic and the combine a plain streaming read; part in bf16 would halve that
// pass and cost a rounding per term (what PyTorch's loop does), which the large-whole-numbers
// case refuses: its terms of ~4e4 cancel, and a bf16 rounding of each is off by up to ~200
// (tried on the simulator: 20 of that case's 1024 outputs fail).
// The weight is applied in the combine, once per (token, choice, column).
// Why wgmma: the mma.sync GEMM (128 x 128 tiles, 4 warps, ldmatrix) held the H200 at 313
// TFLOP/s, with Nsight Compute naming the L2 its busiest unit (79.6%, 17.2 GB read: every tile
// reads its 128 gathered X rows and 128 W rows, 2 MB) and the tensor pipe 53% busy. A 128 x 256
// tile reads 3 MB for twice the work (13.4 GB in all), wgmma needs no ldmatrix, and the warp no
// longer waits on its own MMAs.
//
// Napkin maths (perf: T 8192, k 8, E 64, H 4096, N 2048): 65536 rows, ~1024 +- 32 per expert;
// 2 T k H N = 1.10 TFLOP: 1.11 ms at 989 TFLOP/s (datasheet), 1.23 ms at the ~895 wgmma reaches
// with random data (`warpbook probe`), 1.70 ms at mma.sync's ~646. DRAM: W 1.07 GB once (blocks
// run in the order
// (n tile, row tile), so the ~9 row tiles of an expert, 9 x 8 blocks, run within a wave or two of
// 132 and share W[e]'s 16 MB in the L2), X gathered ~8 times (each token is in 8 groups; 67 MB,
// mostly from the L2), part 537 MB written: ~1.7 GB in ~2 ms, a third of the DRAM's pace:
// compute-bound. The tiles: sum over experts of cdiv(count, 128) ~ 544 against 512 full ones:
// ~6% of the mma work is padding. The routing (count + scatter) moves 0.5 MB: a few
// microseconds, well under 1% of the time.
// Nsight Compute on the H200 (`NCU=34 bash scripts/gpu_session.sh ncu`): moe_gemm
// 1.92 ms under the profiler, the tensor pipe the busiest unit (65.2%), the L2 next (63.4% of its
// peak, hit rate 77%), DRAM 24%, issue slots 23% busy; warps wait mostly on dispatch and on
// wgmma's wait. Likely much of the tensor cores' idle third: the ring filling at each tile's
// start and the epilogue (one block an SM, so nothing overlaps them), as in solution 21.
// `warpbook predict` (predicted, not measured): 1939 us on the H200: moe_gemm 1791 us, with the
// L2 first (15.1 GB, busy 92% of the time) and the tensor pipe second (72%); moe_combine 135 us;
// the permute 12 us. It names the L2 before the tensor pipe; Nsight Compute has them level.
// Measured on the H200 (`warpbook check`, two rounds side by side): 2082.1 and 2082.3 us for all
// four launches, 528 TFLOP/s, 53.4% of the speed of light against the run's measured wgmma ceiling:
// gold. The mma.sync form beside it: 3487.5 and 3500.5 us, 31.9% (its 32.6-32.9% sits on gold's 33%
// line from run to run): wgmma is 1.68x faster. The model says 1939 us (1.07x optimistic; 1.54x on
// the mma.sync form). The PyTorch loop over experts (a host sync, a gather and a cuBLAS GEMM per
// expert) takes 8015 us and the Triton grouped GEMM of the README 2655 us (docs/vs-torch-h200.md).
// measured: 2082.19 us on NVIDIA H200
// measured: 2141.74 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=256
// @tune WARPS=8
// @tune SMEM=198656
// @tune CCOLS=2048
#include <cuda_bf16.h>

#define BK 64    // k per step: a tile row is 128 bytes, the swizzle's row
#define STAGES 4 // ring slots: two tiles in flight ahead of the one multiplied
#define THREADS (WARPS * 32)
#define ROW_BYTES 128
#define A_BYTES (BM * ROW_BYTES) // 16 KB
#define B_BYTES (BN * ROW_BYTES) // 32 KB
#define STAGE_BYTES (A_BYTES + B_BYTES)
#if BM != 128 || BN != 256 || WARPS != 8
#error "moe_gemm is written for 128 x 256 tiles and two warpgroups (WARPS = 8)"
#endif
#if SMEM < STAGES * STAGE_BYTES + 1024 + BM * 4
#error "SMEM must hold the ring, 1 KB to align it, and the tile's row list (see the @tune lines)"
#endif
#if CCOLS != 2048
#error "moe_combine gives each of its 256 threads 8 columns: CCOLS = 2048"
#endif

#define MOE_ARGS                                                                                   \
  const __nv_bfloat16 *X, const int *topk_ids, const float *topk_weights, const __nv_bfloat16 *W,  \
      int *meta, int *rows, float *part, __nv_bfloat16 *Y, int T, int k, int E, int H, int N

extern "C" __global__ void __launch_bounds__(1024) moe_count(MOE_ARGS) {
  __shared__ int cnt[1024];
  __shared__ int wsum[2][32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int e = tid; e < E; e += 1024) cnt[e] = 0;
  __syncthreads();
  const int total = T * k, n4 = total / 4;
  const int4* ids4 = reinterpret_cast<const int4*>(topk_ids); // 256-byte aligned
  for (int i = tid; i < n4; i += 4 * 1024) {
    int4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      v[u] = i + u * 1024 < n4 ? ids4[i + u * 1024] : make_int4(-1, -1, -1, -1);
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (v[u].x >= 0) {
        atomicAdd(&cnt[v[u].x], 1);
        atomicAdd(&cnt[v[u].y], 1);
        atomicAdd(&cnt[v[u].z], 1);
        atomicAdd(&cnt[v[u].w], 1);
      }
  }
  for (int f = 4 * n4 + tid; f < total; f += 1024) atomicAdd(&cnt[topk_ids[f]], 1);
  __syncthreads();
  // Exclusive scans of the counts and of the row tiles, one expert per thread.
  const int c = tid < E ? cnt[tid] : 0, m = (c + BM - 1) / BM;
  int ic = c, im = m;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int a = __shfl_up_sync(0xffffffffu, ic, d), b = __shfl_up_sync(0xffffffffu, im, d);
    if (lane >= d) ic += a, im += b;
  }
  if (lane == 31) wsum[0][warp] = ic, wsum[1][warp] = im;
  __syncthreads();
  if (warp == 0) {
    const int a0 = wsum[0][lane], b0 = wsum[1][lane];
    int a = a0, b = b0;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const int x = __shfl_up_sync(0xffffffffu, a, d), y = __shfl_up_sync(0xffffffffu, b, d);
      if (lane >= d) a += x, b += y;
    }
    wsum[0][lane] = a - a0, wsum[1][lane] = b - b0; // the warps before this one
  }
  __syncthreads();
  ic += wsum[0][warp], im += wsum[1][warp];
  int *offsets = meta, *tiles = meta + E + 1, *cursor = meta + 2 * E + 2;
  if (tid < E) offsets[tid] = cursor[tid] = ic - c, tiles[tid] = im - m;
  if (tid == E - 1) offsets[E] = ic, tiles[E] = im;
}

extern "C" __global__ void moe_scatter(MOE_ARGS) {
  const int f = blockIdx.x * 256 + threadIdx.x;
  if (f >= T * k) return;
  rows[atomicAdd(&meta[2 * E + 2 + topk_ids[f]], 1)] = f;
}

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

// Chunk k .. k + 7 of the row at `src` (nullptr: a row outside) into shared memory at dst, element
// by element through registers, zeros past H: for H % 8 != 0, where rows are not 16-byte aligned.
__device__ __forceinline__ void load_chunk_scalar(unsigned char* dst, const __nv_bfloat16* src,
                                                  int H, int k) {
  __align__(16) unsigned short v[8];
  const unsigned short* s = reinterpret_cast<const unsigned short*>(src);
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = (src && k + j < H) ? s[k + j] : 0;
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) moe_gemm(MOE_ARGS) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const unsigned raw = smem_addr(smem_raw);
  const unsigned sbase = (raw + 1023u) & ~1023u; // the swizzle's atoms start on 1 KB boundaries
  unsigned char* ring = smem_raw + (sbase - raw);
  int* asg = reinterpret_cast<int*>(ring + STAGES * STAGE_BYTES); // each tile row's f, or -1
  const int *offsets = meta, *tiles = meta + E + 1;
  const int y = blockIdx.y;
  if (y >= tiles[E]) return; // the grid allows for a partial tile per expert; most have fewer
  int lo = 0, hi = E - 1;    // the last expert whose tiles start at or before y: a nonempty one
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (tiles[mid] <= y)
      lo = mid;
    else
      hi = mid - 1;
  }
  const int e = lo, g0 = offsets[e], rows_left = offsets[e + 1] - g0 - (y - tiles[e]) * BM;
  const int m0 = g0 + (y - tiles[e]) * BM, n0 = blockIdx.x * BN;
  const int tid = threadIdx.x, wg = tid / 128;
  for (int r = tid; r < BM; r += THREADS) asg[r] = r < rows_left ? rows[m0 + r] : -1;
  __syncthreads();

  // Copies: thread tid takes chunk tid % 8 of rows tid / 8 + 32 i (i < 4 of A, i < 8 of B): every
  // such row has the same place in its 8-row atom, so one swizzled offset serves all twelve. A's
  // rows are gathered (row f / k of X for assignment f); rows past the group and W's rows past N
  // are zeros (source size 0: nothing is read).
  const int cr = tid / 8, cc = tid % 8;
  const unsigned sa = sbase + swz(cr, cc);
  const __nv_bfloat16* pa[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int f = asg[cr + 32 * i];
    pa[i] = f >= 0 ? X + (long long)(f / k) * H : nullptr;
  }
  // W[e]'s rows n0 + cr + 32 i are 32 H apart: one pointer, and a row past N is a zero row.
  const __nv_bfloat16* pb0 = W + ((long long)e * N + n0 + cr) * H;
  auto pb = [&](int i) { return n0 + cr + 32 * i < N ? pb0 + (long long)32 * i * H : nullptr; };
  const bool vec = (H % 8) == 0;
  auto load_tile = [&](int kt, int s) {
    const int c = kt * BK + cc * 8;
    if (vec) { // a chunk lies wholly inside H or wholly past it
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const bool in = pa[i] && c < H;
        cp_async16(sa + s * STAGE_BYTES + i * 32 * ROW_BYTES, in ? pa[i] + c : X, in ? 16 : 0);
      }
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const bool in = n0 + cr + 32 * i < N && c < H;
        cp_async16(sa + s * STAGE_BYTES + A_BYTES + i * 32 * ROW_BYTES,
                   in ? pb0 + (long long)32 * i * H + c : W, in ? 16 : 0);
      }
      return;
    }
    unsigned char* st = ring + s * STAGE_BYTES;
#pragma unroll
    for (int i = 0; i < 4; ++i) load_chunk_scalar(st + swz(cr + 32 * i, cc), pa[i], H, c);
#pragma unroll
    for (int i = 0; i < 8; ++i) load_chunk_scalar(st + A_BYTES + swz(cr + 32 * i, cc), pb(i), H, c);
  };

  // The mainloop of solution 21: tile kt + 2 copied while tile kt is multiplied, one barrier a
  // step, a step's four wgmma one group, wait_group 1 waiting only for the step before. A
  // warpgroup whose 64 rows are all past the group (a short last tile) only copies.
  constexpr int P = STAGES - 2;
  const bool busy = wg * 64 < rows_left;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  const unsigned long long da0 = desc(sbase + wg * 64 * ROW_BYTES), db0 = desc(sbase + A_BYTES);
  const int ktiles = (H + BK - 1) / BK;
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
    if (next < ktiles) load_tile(next, next % STAGES);
    cp_async_commit(); // even when empty: the group count stays right
    if (!busy) continue;
    const unsigned long long off = (unsigned long long)((kt % STAGES) * STAGE_BYTES) >> 4;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) wgmma_256(acc, da0 + off + 2 * kk, db0 + off + 2 * kk);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); // tile kt - 1's are done
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  cp_async_wait<0>();
  if (!busy) return;

  // Epilogue: lane (g, t) of warp q (of 4) in warpgroup wg holds rows 16 q + g and + 8 of the
  // warpgroup's 64, columns 8 j + 2 t and + 1 for j < 32 (acc[4 j + 2 h], acc[4 j + 2 h + 1] for
  // row g + 8 h). Each pair goes straight to part[f][n]: four lanes fill one 32-byte sector.
  const int q = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
  const bool pair = (N % 2) == 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int f = asg[wg * 64 + q * 16 + g + 8 * h];
    if (f < 0) continue;
    float* out = part + (long long)f * N;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const int n = n0 + 8 * j + 2 * t;
      if (pair && n < N) {
        *reinterpret_cast<float2*>(out + n) =
            make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
      } else {
        if (n < N) out[n] = acc[4 * j + 2 * h];
        if (n + 1 < N) out[n + 1] = acc[4 * j + 2 * h + 1];
      }
    }
  }
}

extern "C" __global__ void moe_combine(MOE_ARGS) {
  const int t = blockIdx.y, n = blockIdx.x * CCOLS + threadIdx.x * 8;
  if (n >= N) return;
  const float* p = part + (long long)t * k * N;
  const float* w = topk_weights + (long long)t * k;
  float y[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if ((N % 8) == 0) { // 8 columns wholly inside, 32-byte aligned rows
    for (int j0 = 0; j0 < k; j0 += 8) {
      float4 v[8][2];
      float wj[8];
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (j0 + j < k) {
          const float4* q = reinterpret_cast<const float4*>(p + (long long)(j0 + j) * N + n);
          v[j][0] = q[0], v[j][1] = q[1], wj[j] = w[j0 + j];
        }
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (j0 + j < k) {
          y[0] += wj[j] * v[j][0].x, y[1] += wj[j] * v[j][0].y, y[2] += wj[j] * v[j][0].z;
          y[3] += wj[j] * v[j][0].w, y[4] += wj[j] * v[j][1].x, y[5] += wj[j] * v[j][1].y;
          y[6] += wj[j] * v[j][1].z, y[7] += wj[j] * v[j][1].w;
        }
    }
    __align__(16) __nv_bfloat16 o[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) o[c] = __float2bfloat16(y[c]);
    *reinterpret_cast<uint4*>(Y + (long long)t * N + n) = *reinterpret_cast<const uint4*>(o);
  } else {
    for (int c = 0; c < 8 && n + c < N; ++c) {
      float s = 0.0f;
      for (int j = 0; j < k; ++j) s += w[j] * p[(long long)j * N + n + c];
      Y[(long long)t * N + n + c] = __float2bfloat16(s);
    }
  }
}
