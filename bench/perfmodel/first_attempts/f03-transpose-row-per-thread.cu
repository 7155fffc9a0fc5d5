// First attempt · f03-transpose-row-per-thread · 07-transpose
// What: a 32-thread block per 32 x 32 tile; thread x copies input row (tile row x) one element at a
// time into output column, walking the tile's 32 columns.
// Naive pattern: one row per thread. Each step the warp reads 32 floats from 32 different input
// rows (32 lines, 4 useful bytes each) and writes 32 consecutive floats of one output row.
// @tune TILE=32
// @tune ROWS=1

extern "C" __global__ void transpose(const float* input, float* output, int rows, int cols) {
  const long long r = (long long)blockIdx.y * TILE + threadIdx.x;
  if (r >= rows) return;
  for (int j = 0; j < TILE; ++j) {
    const long long c = (long long)blockIdx.x * TILE + j;
    if (c < cols) output[c * rows + r] = input[r * cols + c];
  }
}
