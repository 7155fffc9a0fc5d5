// Corpus · v04-matadd-colwalk · designed limiter: sectors
//
// What: c = a + b on a rows x cols matrix with 32 x 32 blocks (BX = BY = 32, VEC = 1) whose
// threadIdx.x runs DOWN the rows: thread (tx, ty) of block (bx, by) handles row 32 by + tx,
// column 32 bx + ty. Each block still covers one 32 x 32 tile, so every element is done once.
// Run:  warpbook check 04-matrix-add-2d bench/perfmodel/corpus/v04-matadd-colwalk.cu
//
// Why it is slow: the 32 lanes of a warp touch 32 different rows, `cols` floats apart: every load
// and store instruction touches 32 sectors (and 32 cache lines) for 128 useful bytes, 8x the 4
// sectors of the row-major mapping (sim: global_load_sectors = 8 x ideal, stores likewise). The
// 31 other floats of each 128-byte line are used by the block's other 31 warps, so loads mostly
// hit L1 and DRAM traffic stays near 12 B per element; stores are not cached in L1 and reach L2
// as 32 partial-sector writes per instruction. What saturates is the L1/L2 sector and tag
// throughput: 2^26 / 32 x 3 instructions x 32 sectors over 132 SMs ~ 1.5 M sector-slots per SM.
// Expected: well under half of the DRAM rate.
// @tune BX=32
// @tune BY=32
// @tune VEC=1

extern "C" __global__ void matrix_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int rows, int cols) {
  const long long row = (long long)blockIdx.y * BY + threadIdx.x; // lanes walk down a column
  const long long col = (long long)blockIdx.x * BX + threadIdx.y;
  if (row < rows && col < cols) {
    const long long i = row * cols + col;
    c[i] = a[i] + b[i];
  }
}
