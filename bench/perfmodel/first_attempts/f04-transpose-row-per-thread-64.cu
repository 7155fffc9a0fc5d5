// First attempt · f04-transpose-row-per-thread-64 · 07-transpose
// What: a 64-thread block per 64 x 64 tile; thread x walks input row x of the tile across its 64
// columns, writing each element to the output column.
// Naive pattern: one row per thread: every load of a warp touches 32 input rows, 4 useful bytes
// of each line; the writes are coalesced.
// @tune TILE=64
// @tune ROWS=1

extern "C" __global__ void transpose(const float* input, float* output, int rows, int cols) {
  const long long r = (long long)blockIdx.y * TILE + threadIdx.x;
  if (r >= rows) return;
  for (int j = 0; j < TILE; ++j) {
    const long long c = (long long)blockIdx.x * TILE + j;
    if (c < cols) output[c * rows + r] = input[r * cols + c];
  }
}
