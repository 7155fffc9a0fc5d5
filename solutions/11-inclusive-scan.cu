// Solution · 11 inclusive scan (single pass, decoupled look-back)
//
// What: tiles of 512 threads x 32 items = 16384 floats. scan_reduce only zeroes the workspace
// (a ticket counter and one 64-bit status word per tile); scan_sums does nothing; scan_final does
// the whole scan in one pass:
//   0. every thread asks L2 to prefetch one 128-byte line of tile blockIdx.x (the 512 lines are
//      the whole 64 KiB tile) while thread 0's ticket is in flight;
//   1. thread 0 takes a ticket (atomicAdd) so that tiles are processed in launch order;
//   2. each warp loads its 1024 consecutive elements as 8 rounds of 32 float4s (every load
//      instruction covers 512 contiguous bytes, all 8 in flight at once) and scans them round by
//      round: 4 elements in the lane, the 32 lane totals with __shfl_up_sync, plus the carry of
//      the earlier rounds;
//   3. the 16 warp totals are scanned by warp 0: the tile's total is known;
//   4. warp 0 publishes (AGGREGATE, total) in the tile's status word, then looks back over the
//      status words of the 32 preceding tiles at once, summing aggregates until a lane sees an
//      INCLUSIVE prefix; it publishes (INCLUSIVE, prefix + total) for the tiles after it;
//   5. every thread adds the tile's prefix and its warp's offset and stores its 8 float4s
//      (streaming stores, __stcs: y is not read again).
// Run:  warpbook check 11-inclusive-scan solutions/11-inclusive-scan.cu
//
// Why: a scan must read x and write y, 8 bytes per element; the classic three-pass plans move 12
// or 16. The look-back lets a tile learn its prefix from its predecessors while they are still
// working, without a second pass over memory. Flag and value share one 64-bit word, written with
// one store and read with volatile loads, so a reader never sees a flag without its value. The
// ticket makes the tile order the order in which blocks start, so a block only ever waits on
// blocks that already run: that is what makes the spin-wait safe on any GPU, whatever order the
// hardware schedules blocks in (blockIdx order is not promised). The inputs are whole numbers whose
// prefix sums stay far below 2^24, so the result is exact in any order of additions.
// (A first H200 run reported wrong answers at the timed size. The cause was the puzzle's data, not
// the ordering: randint(-8, 8) has mean -0.5, so the sums passed -2^24 and f32 rounded them; the
// inputs are now -8..8, mean 0.)
// The prefetch (step 0): the ticket is a global atomic round trip during which the block has no
// loads in flight. Tickets come out in about the order blocks start, so tile blockIdx.x is about
// to be scanned by this block or a neighbour; its DRAM reads now start during the round trip and
// the ticketed loads mostly hit L2. The ticket still decides which tile a block scans, so the
// prefetch is only a hint and correctness does not depend on it. It took the H200 median from
// 361.6 to 327.8 us in one side-by-side run.
// Tile size matters because every tile pays a ticket and a look-back before it can store.
// Measured on the H200 before the prefetch (median): 256 x 16 = 4096-float tiles 424 us, 128 x 32
// 394 us, 512 x 16 396 us, 256 x 32 368 us, 512 x 32 = 16384-float tiles 357 us; loading x with
// __ldcs cost 7%. 64 registers x 512 threads leave 2 blocks per SM, 128 KB of loads in flight per
// SM. Tried and slower, side by side: dropping the ticket (blockIdx order; 356 us, and unsafe in
// principle), publishing the aggregate before the full scan (374 us), persistent blocks looping
// over tiles (over 10 ms: the thousands of blocks that exit at once still queue behind them).
//
// Napkin maths: 1.07 GB at 4.8 TB/s = 224 us on the H200; against the 4.64 TB/s read stream the
// probe measures, 231 us. Gold is 65% of that ceiling (356 us).
// Measured on an H200: 327.8 us median (319.6 us best), 3276 GB/s, 70.8% of the measured DRAM
// ceiling: gold. torch.cumsum on the same 2^27 floats, same run: 428.7 us (ours 1.31x faster).
// measured: 324.70 us on NVIDIA H200
// measured: 393.66 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=512
// @tune ITEMS=32

#define TILE (BLOCK * ITEMS)
#define NWARPS (BLOCK / 32)
#define VECS (ITEMS / 4) // float4 rounds per thread
#if ITEMS % 4 != 0
#error "this solution loads float4s: ITEMS must be a multiple of 4"
#endif
#define FLAG_AGGREGATE 1ull
#define FLAG_INCLUSIVE 2ull

// Workspace layout, as 64-bit words: [0] ticket counter, [1 + t] status of tile t.
__device__ __forceinline__ unsigned long long pack(unsigned long long flag, float v) {
  return (flag << 32) | (unsigned long long)__float_as_uint(v);
}

extern "C" __global__ void scan_reduce(const float* __restrict__ x, float* __restrict__ sums,
                                       int n) {
  // Zero the ticket and every status word: one word per tile, and word 0 for block 0.
  unsigned long long* ws = reinterpret_cast<unsigned long long*>(sums);
  if (threadIdx.x == 0) ws[blockIdx.x + 1] = 0ull;
  if (blockIdx.x == 0 && threadIdx.x == 0) ws[0] = 0ull;
}

extern "C" __global__ void scan_sums(float* sums, int tiles) {}

extern "C" __global__ void scan_final(const float* __restrict__ x, float* __restrict__ y,
                                      float* sums, int n) {
  __shared__ unsigned int tile_s;
  __shared__ float warp_incl[NWARPS];
  __shared__ float prefix_s;
  unsigned long long* ws = reinterpret_cast<unsigned long long*>(sums);
  volatile unsigned long long* status = ws + 1;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

  // 0. Prefetch tile blockIdx.x into L2 (one 128-byte line per thread and round) while the
  //    ticket is in flight: some block is about to scan it, most often this one.
  {
    const long long pbase = (long long)blockIdx.x * TILE;
    for (int j = threadIdx.x; j < TILE / 32; j += BLOCK) {
      long long e = pbase + (long long)j * 32;
      if (e < n) asm volatile("prefetch.L2 [%0];" ::"l"(x + e));
    }
  }
  // 1. A ticket: tiles are handed out in the order blocks start.
  if (threadIdx.x == 0) tile_s = atomicAdd(reinterpret_cast<unsigned int*>(sums), 1u);
  __syncthreads();
  const unsigned int tile = tile_s;

  // 2. Warp w owns 32 * ITEMS consecutive elements of the tile, read as VECS rounds of 32 float4s:
  //    round q of lane l is the float4 at (q * 32 + l), so every load instruction covers 512
  //    contiguous bytes.
  const long long warp_base4 = ((long long)tile * TILE + (long long)warp * 32 * ITEMS) / 4;
  const long long full4 = n / 4; // float4s that lie entirely below n
  float4 v[VECS];
#pragma unroll
  for (int q = 0; q < VECS; ++q) {
    long long i4 = warp_base4 + q * 32 + lane;
    if (i4 < full4) {
      v[q] = reinterpret_cast<const float4*>(x)[i4];
    } else {
      long long e = 4 * i4;
      v[q].x = e < n ? x[e] : 0.0f;
      v[q].y = e + 1 < n ? x[e + 1] : 0.0f;
      v[q].z = e + 2 < n ? x[e + 2] : 0.0f;
      v[q].w = e + 3 < n ? x[e + 3] : 0.0f;
    }
  }

  // 3. Scan the warp's segment round by round: 4 elements in the lane, the 32 lane totals with
  //    __shfl_up_sync, plus the running total of the earlier rounds. Then the warp totals.
  float carry = 0.0f;
#pragma unroll
  for (int q = 0; q < VECS; ++q) {
    v[q].y += v[q].x;
    v[q].z += v[q].y;
    v[q].w += v[q].z;
    float incl = v[q].w;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      float t = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= d) incl += t;
    }
    float add = carry + incl - v[q].w;
    v[q].x += add, v[q].y += add, v[q].z += add, v[q].w += add;
    carry += __shfl_sync(0xffffffffu, incl, 31);
  }
  if (lane == 0) warp_incl[warp] = carry;
  __syncthreads();
  if (warp == 0) {
    float w = lane < NWARPS ? warp_incl[lane] : 0.0f;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      float t = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w += t;
    }
    if (lane < NWARPS) warp_incl[lane] = w;
  }
  __syncthreads();
  const float tile_total = warp_incl[NWARPS - 1];
  const float warp_offset = warp > 0 ? warp_incl[warp - 1] : 0.0f;

  // 4. Publish and look back (warp 0).
  if (warp == 0) {
    if (tile == 0) {
      if (lane == 0) {
        status[0] = pack(FLAG_INCLUSIVE, tile_total);
        prefix_s = 0.0f;
      }
    } else {
      if (lane == 0) status[tile] = pack(FLAG_AGGREGATE, tile_total);
      float prefix = 0.0f;
      long long pred = (long long)tile - 1 - lane; // lane k watches tile - 1 - k
      while (true) {
        unsigned long long s = pred >= 0 ? status[pred] : pack(FLAG_INCLUSIVE, 0.0f);
        while (__any_sync(0xffffffffu, (s >> 32) == 0ull)) {
          if ((s >> 32) == 0ull) s = status[pred];
        }
        unsigned int inclusive = __ballot_sync(0xffffffffu, (s >> 32) == FLAG_INCLUSIVE);
        int stop = inclusive ? __ffs(inclusive) - 1 : 32; // nearest predecessor with a full prefix
        float val = lane <= stop ? __uint_as_float((unsigned int)s) : 0.0f;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) val += __shfl_xor_sync(0xffffffffu, val, o);
        prefix += val;
        if (inclusive) break;
        pred -= 32;
      }
      if (lane == 0) {
        status[tile] = pack(FLAG_INCLUSIVE, prefix + tile_total);
        prefix_s = prefix;
      }
    }
  }
  __syncthreads();

  // 5. Add the tile's prefix and the warp's offset; store as loaded.
  const float add = prefix_s + warp_offset;
#pragma unroll
  for (int q = 0; q < VECS; ++q) {
    v[q].x += add, v[q].y += add, v[q].z += add, v[q].w += add;
    long long i4 = warp_base4 + q * 32 + lane;
    if (i4 < full4) {
      __stcs(reinterpret_cast<float4*>(y) + i4, v[q]);
    } else {
      long long e = 4 * i4;
      if (e < n) y[e] = v[q].x;
      if (e + 1 < n) y[e + 1] = v[q].y;
      if (e + 2 < n) y[e + 2] = v[q].z;
      if (e + 3 < n) y[e + 3] = v[q].w;
    }
  }
}
