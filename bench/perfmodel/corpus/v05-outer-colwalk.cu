// Corpus · v05-outer-colwalk · designed limiter: sectors
//
// What: out[r][k] = x[r] + y[k] with 32 x 32 blocks (BX = BY = 32, VEC = 1) whose threadIdx.x
// runs DOWN the rows of out: thread (tx, ty) of block (bx, by) writes row 32 by + tx, column
// 32 bx + ty. Every element is still written exactly once.
// Run:  warpbook check 05-outer-add bench/perfmodel/corpus/v05-outer-colwalk.cu
//
// Why it is slow: this kernel is all stores (4 B per element; x and y are 128 KiB in all and stay
// in cache), and each warp store writes 32 floats `cols` apart: 32 partial sectors in 32
// different lines per instruction, 8x the sector count of row-major stores (sim:
// global_store_sectors = 8 x ideal). Stores bypass L1, so every one of those sectors is a
// separate partial write at the L2, which must merge 8 of them before a sector is whole; at the
// timed 16384 x 16384 (1 GiB) that is 2^28 sector writes instead of 2^25. Expected: a fraction
// of the write bandwidth the row-major solution reaches (~95% of 4.8 TB/s).
// @tune BX=32
// @tune BY=32
// @tune VEC=1

extern "C" __global__ void outer_add(const float* __restrict__ x, const float* __restrict__ y,
                                     float* __restrict__ out, int rows, int cols) {
  const long long r = (long long)blockIdx.y * BY + threadIdx.x; // lanes walk down a column
  const long long k = (long long)blockIdx.x * BX + threadIdx.y;
  if (r < rows && k < cols) out[r * cols + k] = x[r] + y[k];
}
