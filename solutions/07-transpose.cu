// Solution · 07 transpose
//
// What: a 64 x 64 tile per block of 64 x 4 = 256 threads, moved in 4 x 4 sub-blocks. Thread t owns
// one sub-block: it reads its 4 input rows as 4 float4 loads (a warp covers 2 rows x 256 bytes per
// load, all 4 loads in flight before any use), transposes the 4 x 4 block in its registers (free:
// it only renames registers), and stores the 4 resulting float4s, each a piece of one output row,
// into shared memory. After one barrier every thread reads 4 float4s along output rows and writes
// them to DRAM: again 256 contiguous bytes per half-warp. Edge tiles, and widths that are not
// multiples of 4 (rows of input or output not 16-byte aligned), take the classic scalar path:
// a padded tile[TILE][TILE + 1], one float per load and per store.
// Run:  warpbook check 07-transpose solutions/07-transpose.cu
//
// Why it is fast: 8 bytes per element, the least there is, and every warp's loads and stores cover
// whole 128-byte lines, 16 bytes per instruction. The column walk happens in registers (inside a
// 4 x 4 block) and in shared memory (between blocks), where the padding trick of the scalar
// kernel does not work for 16-byte accesses (a padded row is no longer 16-byte aligned). Instead
// the float4 column is swizzled: row r keeps float4 c at position c ^ ((r >> 2) & 7). A float4
// access is served 8 lanes at a time; those 8 lanes hit 8 different 16-byte bank groups both when
// they store (same sub-block column, rows 4q + m for q = 0..7) and when they read a row back (8
// consecutive float4s). 16 KB of shared memory and 256 threads per block: 8 blocks per SM, 128 KB
// of loads in flight per SM. Stores are streaming (__stcs): the output is never read again.
//
// Napkin maths: 537 MB at 4.8 TB/s = 112 us on the H200 (gold is 70%: 160 us). A transpose is a
// copy, and the probe's best copy measures 3.99 TB/s (83% of the datasheet, 87% of the 4.56 TB/s
// read stream that `warpbook probe` takes as the DRAM ceiling).
// Measured on the H200: 134.08 us, 4005 GB/s: 83% of the 4.8 TB/s datasheet and as fast as the
// probe's best copy (3.99 TB/s); gold. With the L2 flushed by writing instead of reading, the
// flush's dirty lines drain during the timed kernel and it takes 137.25 us
// (bench/perfmodel/experiments/l2-flush).
// measured: 134.08 us on NVIDIA H200
// measured: 182.32 us on NVIDIA H100 80GB HBM3
// @tune TILE=64
// @tune ROWS=4

#define NT (TILE * ROWS)         // threads per block
#define Q (TILE / 4)             // float4s per tile row
#define SWZ (Q >= 8 ? 7 : Q - 1) // swizzle mask: stays inside the row

__device__ __forceinline__ int swz(int r, int c4) {
  return c4 ^ ((r >> 2) & SWZ);
}

extern "C" __global__ void transpose(const float* __restrict__ input, float* __restrict__ output,
                                     int rows, int cols) {
  __shared__ __align__(16) float tile[TILE * (TILE + 1)];
  const int t = threadIdx.y * TILE + threadIdx.x;
  const long long r0 = (long long)blockIdx.y * TILE; // first input row of the tile
  const long long c0 = (long long)blockIdx.x * TILE; // first input column of the tile

  const bool fast = r0 + TILE <= rows && c0 + TILE <= cols && (rows & 3) == 0 && (cols & 3) == 0;
  if (fast) {
    float4* s4 = reinterpret_cast<float4*>(tile); // TILE rows of Q float4s, swizzled
    // Sub-block (bi, q): input rows r0 + 4bi .. +3, input columns c0 + 4q .. +3.
    for (int b = t; b < Q * Q; b += NT) {
      const int q = b % Q, bi = b / Q;
      const float* src = input + (r0 + 4 * bi) * cols + c0 + 4 * q;
      float4 a0 = *reinterpret_cast<const float4*>(src);
      float4 a1 = *reinterpret_cast<const float4*>(src + cols);
      float4 a2 = *reinterpret_cast<const float4*>(src + 2 * (long long)cols);
      float4 a3 = *reinterpret_cast<const float4*>(src + 3 * (long long)cols);
      // Output row c0 + 4q + m holds input column 4q + m: (a0.m, a1.m, a2.m, a3.m) at columns 4bi..
      s4[(4 * q + 0) * Q + swz(4 * q + 0, bi)] = make_float4(a0.x, a1.x, a2.x, a3.x);
      s4[(4 * q + 1) * Q + swz(4 * q + 1, bi)] = make_float4(a0.y, a1.y, a2.y, a3.y);
      s4[(4 * q + 2) * Q + swz(4 * q + 2, bi)] = make_float4(a0.z, a1.z, a2.z, a3.z);
      s4[(4 * q + 3) * Q + swz(4 * q + 3, bi)] = make_float4(a0.w, a1.w, a2.w, a3.w);
    }
    __syncthreads();
    for (int e = t; e < TILE * Q; e += NT) {
      const int r = e / Q, c4 = e % Q; // output row c0 + r, output columns r0 + 4 c4 ..
      __stcs(reinterpret_cast<float4*>(output + (c0 + r) * rows + r0) + c4, s4[r * Q + swz(r, c4)]);
    }
    return;
  }

  // Edge tiles and unaligned widths: the classic padded scalar tile.
  const int tx = threadIdx.x;
  if (c0 + tx < cols) {
    for (int j = threadIdx.y; j < TILE; j += ROWS)
      if (r0 + j < rows) tile[j * (TILE + 1) + tx] = input[(r0 + j) * cols + c0 + tx];
  }
  __syncthreads();
  if (r0 + tx < rows) {
    for (int j = threadIdx.y; j < TILE; j += ROWS)
      if (c0 + j < cols) output[(c0 + j) * rows + r0 + tx] = tile[tx * (TILE + 1) + j];
  }
}
