// 07 · Transpose: output (cols x rows) = the transpose of input (rows x cols), both row-major.
//     output[c][r] = input[r][c]
// Launch: one block per TILE x TILE tile of the input (TILE = 32), TILE x ROWS threads (32 x 8),
// so each thread handles TILE / ROWS = 4 elements of its tile. TILE is a compile-time constant.

extern "C" __global__ void transpose(const float* input, float* output, int rows, int cols) {
  long long c = (long long)blockIdx.x * TILE + threadIdx.x;
  for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
    long long r = (long long)blockIdx.y * TILE + j;
    if (r < rows && c < cols) {
      // TODO: element (r, c) of input belongs at (c, r) of output, a matrix with `rows` columns.
      // This copies instead.
      output[r * cols + c] = input[r * cols + c];
    }
  }
}
