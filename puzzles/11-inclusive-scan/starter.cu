// 11 · Inclusive scan: y[i] = x[0] + x[1] + ... + x[i].
//
// The array is cut into tiles of TILE = BLOCK * ITEMS elements (256 x 1 by default); tile b is
// x[b * TILE ... (b + 1) * TILE - 1]. Three kernels run in this order:
//   scan_reduce: one block per tile.
//   scan_sums:   ONE block of BLOCK threads; `tiles` is the number of tiles.
//   scan_final:  one block per tile.
// `sums` is a float workspace of at least 2 * tiles + 64 entries that all three kernels may use.
// One plan: scan_reduce writes each tile's total to sums[b]; scan_sums turns those totals into
// the sum of all EARLIER tiles; scan_final scans its tile and adds that offset.

#define TILE (BLOCK * ITEMS)

extern "C" __global__ void scan_reduce(const float* x, float* sums, int n) {
  // TODO: sums[blockIdx.x] = the sum of this block's tile (mind the last, partial tile).
}

extern "C" __global__ void scan_sums(float* sums, int tiles) {
  // TODO: replace sums[0 .. tiles-1] by exclusive prefix sums: sums[b] = total of tiles 0..b-1.
  // There can be many more tiles than threads.
}

extern "C" __global__ void scan_final(const float* x, float* y, float* sums, int n) {
  long long base = (long long)blockIdx.x * TILE;
  for (int j = threadIdx.x; j < TILE; j += blockDim.x) {
    long long i = base + j;
    if (i >= n) break;
    // Slow but right within the tile: each element adds up its tile's elements up to itself.
    float acc = 0.0f;  // TODO: start from the total of all earlier tiles
    for (long long k = base; k <= i; ++k) acc += x[k];
    y[i] = acc;
  }
}
