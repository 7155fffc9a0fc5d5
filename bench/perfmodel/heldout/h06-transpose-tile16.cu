// Held-out · h06-transpose-tile16 · designed limiter: latency
//
// What: the shared-memory transpose with small tiles: TILE = 16, ROWS = 16, so a 16 x 16 block
// (256 threads) moves one 16 x 16 tile and every thread exactly one element. The tile is padded
// to 16 x 17 floats, so the column reads are conflict-free; a warp covers two tile rows, i.e. two
// 64-byte pieces of two lines on the load and on the store (4 sectors per request, all used).
// grid = (cols / 16, rows / 16) = 512 x 512 blocks at the timed 8192 x 8192.
// Run:  warpbook check 07-transpose bench/perfmodel/heldout/h06-transpose-tile16.cu
//
// Why it should be latency-bound: each thread has a single 4-byte load in flight, then waits at
// the barrier, then stores. With 8 resident blocks (2048 threads) per SM that is 8 KB of loads
// outstanding per SM, a third of the ~25 KB that Little's law asks for (4.8 TB/s x ~0.7 us /
// 132 SMs); blocks are short, so an SM also churns through ~2000 of them. 537 MB moved (~140 us
// at the read+write ceiling); expected ~35-45% of that rate.
// @tune TILE=16
// @tune ROWS=16

#if TILE != ROWS
#error "one element per thread: this kernel wants TILE == ROWS"
#endif

extern "C" __global__ void transpose(const float* input, float* output, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  const int c0 = blockIdx.x * TILE, r0 = blockIdx.y * TILE;
  const int tx = threadIdx.x, ty = threadIdx.y;
  if (r0 + ty < rows && c0 + tx < cols) tile[ty][tx] = input[(long long)(r0 + ty) * cols + c0 + tx];
  __syncthreads();
  // Output row c0 + ty holds input column c0 + ty; its entry r0 + tx is input[r0 + tx][c0 + ty].
  if (c0 + ty < cols && r0 + tx < rows)
    output[(long long)(c0 + ty) * rows + r0 + tx] = tile[tx][ty];
}
