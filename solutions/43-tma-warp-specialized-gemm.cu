// Solution · 43 A TMA-fed, warp-specialised, persistent GEMM (bf16 on wgmma)
//
// What: C[M x N] (bf16) = A[M x K] x B^T, B given as [N x K] (an nn.Linear weight), bf16 in, f32
// sums on the tensor cores, C rounded to bf16 once. Puzzle 21's wgmma mainloop, fed the way
// Hopper's libraries feed it:
//   - persistent: min(GRID, SMS, tiles) blocks of 384 threads (three warpgroups, one block an SM;
//     GRID = 128, so 4096^3's 512 tiles make exactly 4 rounds); block b walks the 128 x 256 tiles
//     t = b, b + gridDim.x, ... in a grouped raster (GROUP rows of tiles column by column), so the
//     tiles in flight share a few panels of A and B in the L2 and no block starts from an empty
//     ring after its first tile;
//   - warpgroup 0 is the producer: setmaxnreg.dec to 40 registers, one lane of warp 0 (elect.sync)
//     issues every copy, the other 127 threads return. Per k-step: wait on the slot's `empty`
//     mbarrier, mbarrier.arrive.expect_tx on its `full` barrier with the whole slot's bytes (48 KB:
//     the zeros TMA fills past M, N or K count too), then two cp.async.bulk.tensor.2d copies (a
//     64 x 128 box of A, a 64 x 256 box of B) that land 128B-swizzled and complete on `full`;
//   - warpgroups 1 and 2 are the consumers: setmaxnreg.inc to 232, rows 0-63 and 64-127 of the
//     tile, each wgmma.mma_async.m64n256k16 straight from the slot (puzzle 21's descriptors: the
//     swizzle TMA writes is the one mode 1 reads), four a k-step, committed as a group; after
//     wgmma.wait_group 1 the previous step's group has finished reading its slot, and each warp's
//     lane 0 arrives on that slot's `empty` barrier (8 arrivals a phase). No __syncthreads() after
//     the start: each side waits only on the slot it needs;
//   - the ring: STAGES = 4 slots of 48 KB (192 KB), their phases carried across tiles by one k-step
//     counter (slot it % STAGES, parity (it / STAGES) & 1; the producer waits on the opposite
//     parity, which a fresh barrier gives at once);
//   - the epilogue through shared memory: each consumer warp writes its 16 rows as bf16 pairs
//     into a staging area of its own (16 rows of 144 bytes, so the 8 x 4 lanes of a store land
//     on 32 distinct banks), 64 columns at a time, and reads them back as 16-byte chunks, eight
//     lanes a row: every store to C is a whole 128-byte line, guarded at M and N (element by
//     element when N is not a multiple of 8). While the consumers store, the producer is already
//     filling the ring for their next tile.
// Needs an sm_90 GPU (wgmma, setmaxnreg and TMA are sm_90a instructions) or the simulator.
// Run:  warpbook check 43-tma-warp-specialized-gemm solutions/43-tma-warp-specialized-gemm.cu
//       warpbook predict 43-tma-warp-specialized-gemm solutions/43-tma-warp-specialized-gemm.cu
//       --gpu h100-sxm
//
// Why: puzzle 21's kernel (207 us on an H100, 0.67 of the 989 TFLOP/s datasheet rate) has every
// thread compute addresses and issue cp.async, meets at a __syncthreads() every k-step, and starts
// each of its 512 blocks with an empty ring and ends it with an epilogue nothing overlaps. Here the
// consumers do nothing but wait on a barrier and issue wgmma, the copies cost one thread and no
// registers, and the ring stays full across tiles.
//
// Measured (H100 80GB HBM3, 4096^3): 177.6 us, 774 TFLOP/s, 78% of the wgmma ceiling `warpbook
// probe` measures there; beside cuBLAS in one run (scripts/puzzles_vs_torch.sh) 174.2 us against
// torch.matmul's 175.0: 1.00x, and Triton's persistent TMA matmul 179.2 us.
// Napkin maths: 137.4 GFLOP at 989 TFLOP/s = 139 us; DRAM 101 MB at 3.35 TB/s = 30 us. L2 to SM:
// 512 tiles x 64 k-steps x 48 KB = 1.61 GB, 9.1 TB/s at 177 us: the copy engine's stream from the
// L2 is the second limit, which is why the tile is 128 x 256.
// `warpbook predict` (predicted): 329 us on the H100 SXM, 306 us on the H200, 1.85x what the H100
// measures. The model names the L2 first: 1.64 GB at the 7.3 TB/s its H100 profile gives the L2,
// the rate `warpbook probe` measures for the copy engine there too (7.53 TB/s, half the L2 read,
// each line by one SM), where this kernel moved 9.1 TB/s with each panel read by 8 or 16 SMs at
// once (bench/perfmodel/experiments/l2-mlp: on an H200 loads of the same lines by many SMs drew
// 14.8-17.5 TB/s where the probe's stream draws 8.8). Its DRAM line counts which blocks read each
// panel by address (A by 16 blocks of a round, B by 8): 201 MB.
// Registers: 168 a thread at launch (65536 / 384), 40 x 128 + 232 x 256 = 64512 after setmaxnreg;
// ptxas (sm_90a): no spills. Shared memory: 4 x 48 KB of ring + 64 B of barriers + 8 x 2304 B of
// staging + 1 KB of alignment slack = 216128 B of the 232448 an SM offers (STAGES = 5 does not fit
// at BN = 256).
//
// What loses (H100, `warpbook tune` and side-by-side checks):
//   - puzzle 21's structure (every thread copying, a barrier per step, a block per tile): 207 us;
//   - the epilogue straight from the accumulators (each store 8 rows x 16 bytes, half of every
//     32-byte sector it touches): 196.9 us, 0.89x cuBLAS; staging it is the largest single step;
//   - a grid of all 132 SMs: 512 tiles are 3.9 rounds of 132, and the last round leaves most SMs
//     idle; 128 blocks walk exactly 4 each: 176-181 us at 132 against 175 at 128;
//   - STAGES = 3: 181-184 us (4 slots cover the L2's latency, 3 nearly);
//   - BN = 128 (m64n128k16): 2.15 GB from the L2 instead of 1.61, 214-237 us (with the epilogue
//     from registers, against 194-197 at BN = 256 there);
//   - GROUP 16 instead of 8: within 3% either way;
//   - left: ping-pong (each consumer warpgroup its own tile, alternating, so one's epilogue hides
//     under the other's mainloop) and a cluster of 2 with TMA multicast of B (one L2 read for two
//     SMs), what CUTLASS does next. The simulator runs neither clusters nor multicast.
// @tune BM=128
// @tune BN=256
// @tune BK=64
// @tune STAGES=4
// @tune GROUP=8
// @tune GRID=128
// On an NVIDIA H200 (`warpbook check` in the gpu test): 171.55 us, 85.6% of the speed of light
// `warpbook probe` measures there: gold.
// measured: 171.55 us on NVIDIA H200
// measured: 177.58 us on NVIDIA H100 80GB HBM3
#include <cuda.h> // CUtensorMap
#include <cuda_bf16.h>

// BM = 128: two consumer warpgroups of 64 rows; BK = 64: a tile row is one 128-byte swizzle row.
#if BM != 128 || BK != 64 || (BN != 128 && BN != 256) || STAGES < 2 || GROUP < 1
#error "this kernel is written for 128 x BN tiles (BN 128 or 256), BK = 64 and 2 or more stages"
#endif
#define A_BYTES (BM * BK * 2)
#define B_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define ACC (BN / 2)  // f32 accumulators per consumer thread: 64 x BN over 128 threads
#define EPI_PITCH 144 // bytes a staged row of 64 bf16 takes: 128 + 16, so rows start on new banks
#define EPI_WARP_BYTES (16 * EPI_PITCH)

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

// mbarriers. full[s]: the producer arrives once with the stage's byte count (expect_tx) and the
// two TMA copies complete those bytes. empty[s]: each of the 8 consumer warps arrives once its
// wgmma have finished reading the slot.
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
// Spin until the phase of parity `parity` has completed (a fresh barrier counts its phase before
// the first, parity 1, as complete: the producer's first pass over the ring does not wait).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n"
                 "}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!done);
}

// One TMA copy: the box of the tensor map at element (x, y) (x along K, y along rows) into shared
// memory at dst, 128B-swizzled as the map says, its bytes counted on the mbarrier `bar`. Rows past
// M (N) and columns past K arrive as zeros.
__device__ __forceinline__ void tma_load(unsigned dst, const CUtensorMap* map, int x, int y,
                                         unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
               "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(bar)
               : "memory");
}

// A shared-memory matrix descriptor for a K-major, 128B-swizzled tile at `addr` (a 1024-byte
// boundary, plus 32 bytes per 16 of k): start >> 4, leading offset 16 bytes (unused in this mode),
// 1024 bytes from one 8-row atom to the next, swizzle mode 1 (bits 62-63).
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3ffffu) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
// d (64 x 256 f32, the warpgroup's accumulators) += A (64 x 16) x B (256 x 16)^T, both bf16 in
// 128B-swizzled shared memory named by descriptors.
__device__ __forceinline__ void wgmma_n256(float (&d)[128], unsigned long long da,
                                           unsigned long long db) {
  asm volatile(
      "{\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%"
      "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%"
      "48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%"
      "71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%"
      "94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%"
      "113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, 1, "
      "1, 1, 0, 0;\n"
      "}\n"
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

// d (64 x 128 f32, the warpgroup's accumulators) += A (64 x 16) x B (128 x 16)^T, both bf16 in
// 128B-swizzled shared memory named by descriptors.
__device__ __forceinline__ void wgmma_n128(float (&d)[64], unsigned long long da,
                                           unsigned long long db) {
  asm volatile(
      "{\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%"
      "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%"
      "48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, 1, 1, 1, 0, 0;\n"
      "}\n"
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

// Tile t of the grouped raster: GROUP rows of tiles are walked column by column, so the blocks
// running at once share a few panels of A and B in the L2 instead of streaming all of B per row.
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int per_group = GROUP * tiles_n;
  const int first = (t / per_group) * GROUP;
  const int rows = min(tiles_m - first, GROUP);
  const int i = t % per_group;
  tm = first + i % rows;
  tn = i / rows;
}

__device__ __forceinline__ void mma_step(float (&acc)[ACC], unsigned long long da,
                                         unsigned long long db) {
#if BN == 256
  wgmma_n256(acc, da, db);
#else
  wgmma_n128(acc, da, db);
#endif
}

extern "C" __global__ void __launch_bounds__(384, 1)
    ws_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
            const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
            __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The swizzle is on absolute addresses: the ring starts on a 1 KB boundary (the launch gives
  // 1 KB of slack for it), and the barriers sit after the ring.
  const unsigned sbase = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const unsigned bars = sbase + STAGES * STAGE_BYTES;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
  const unsigned epi = bars + 16u * STAGES; // the consumer warps' staging for C

  const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32, lane = tid % 32;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), 8);
    }
    // The barriers are used by the copy engine (the async proxy): make their init visible to it.
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int tiles = tiles_m * tiles_n, ktiles = (K + BK - 1) / BK;

  if (wg == 0) {
    // Producer: gives 128 of its registers back for the consumers; one thread issues every copy.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    unsigned elected = 0;
    if (warp == 0)
      asm volatile("{\n"
                   ".reg .pred p;\n"
                   "elect.sync _|p, 0xffffffff;\n"
                   "selp.u32 %0, 1, 0, p;\n"
                   "}\n"
                   : "=r"(elected));
    if (!elected) return;
    int it = 0; // k-steps issued so far, over all tiles: slot it % STAGES, pass it / STAGES
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int tm, tn;
      tile_coords(t, tiles_m, tiles_n, tm, tn);
      for (int kt = 0; kt < ktiles; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(empty(s), ((it / STAGES) & 1) ^ 1); // the consumers are done with the slot
        const unsigned dst = sbase + s * STAGE_BYTES;
        // The whole box counts, zeros filled past the edges included.
        mbar_arrive_expect_tx(full(s), STAGE_BYTES);
        tma_load(dst, &tmA, kt * BK, tm * BM, full(s));
        tma_load(dst + A_BYTES, &tmB, kt * BK, tn * BN, full(s));
      }
    }
    return;
  }

  // Consumers: warpgroup cw owns rows 64 cw .. 64 cw + 63 of each tile and all BN columns.
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int cw = wg - 1;
  const int q = warp % 4, g = lane / 4, tq = lane % 4;
  float acc[ACC];
  int it = 0;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    int tm, tn;
    tile_coords(t, tiles_m, tiles_n, tm, tn);
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;
    for (int kt = 0; kt < ktiles; ++kt, ++it) {
      const int s = it % STAGES;
      mbar_wait(full(s), (it / STAGES) & 1); // the slot's bytes have landed
      const unsigned sa = sbase + s * STAGE_BYTES;
      const unsigned long long da = desc(sa + cw * 64 * 128), db = desc(sa + A_BYTES);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) mma_step(acc, da + 2 * kk, db + 2 * kk);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      // The step before this one has finished reading its slot: hand it back to the producer,
      // while this step's wgmma run on.
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      if (kt > 0 && lane == 0) mbar_arrive(empty((it + STAGES - 1) % STAGES));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    if (lane == 0) mbar_arrive(empty((it + STAGES - 1) % STAGES));

    // Epilogue through a small staging area per warp, 64 columns at a time (the producer is
    // already filling the ring with the next tile). Lane (g, tq) of warp q holds rows 16 q + g and
    // + 8 of the warpgroup's 64, columns 8 j + 2 tq and + 1: acc[4 j + 2 h] and acc[4 j + 2 h + 1]
    // for row + 8 h. Written as bf16 pairs into 16 rows of 144 bytes (4 g + tq: 32 distinct banks),
    // read back as 16-byte chunks, eight lanes a row, so each store to C is a full 128-byte line.
    const unsigned stg = epi + (cw * 4 + q) * EPI_WARP_BYTES;
    const int row0 = tm * BM + cw * 64 + q * 16;
#pragma unroll
    for (int cb = 0; cb < BN / 64; ++cb) {
#pragma unroll
      for (int jj = 0; jj < 8; ++jj) {
        const int j = cb * 8 + jj;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          __nv_bfloat162 v = __floats2bfloat162_rn(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
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
        const int r = row0 + rr, c = tn * BN + cb * 64 + ch * 8;
        if (r >= M || c >= N) continue;
        __nv_bfloat16* dst = C + (long long)r * N + c;
        if ((N % 8) == 0) { // the row starts 16-byte aligned and the chunk is wholly in or out
          *reinterpret_cast<uint4*>(dst) = v;
        } else {
#pragma unroll
          for (int k = 0; k < 8; ++k) { // constant indices keep v in registers
            const unsigned w = k < 2 ? v.x : k < 4 ? v.y : k < 6 ? v.z : v.w;
            if (c + k < N) dst[k] = __ushort_as_bfloat16((unsigned short)(w >> (16 * (k & 1))));
          }
        }
      }
      __syncwarp(); // the chunk is read before the next one overwrites it
    }
  }
}
