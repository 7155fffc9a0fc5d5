// 04 · Matrix add: c = a + b, where a, b and c are rows x cols matrices stored row-major
// (element (r, k) lives at index r * cols + k).
//
// Launch: a 2-D grid. blockDim = (BX, BY) = (32, 8) by default;
//         gridDim  = (cdiv(cols, BX * VEC), cdiv(rows, BY)). x runs along a row, y down the rows.
// With the default VEC = 1 each thread owns exactly one element. (VEC is a tunable: with
// `// @tune VEC=4` each thread owns 4 neighbouring columns and the grid is 4 times narrower.)

extern "C" __global__ void matrix_add(const float* a, const float* b, float* c, int rows, int cols) {
  int col = threadIdx.x;  // TODO: this is the column inside one block only: add the block's offset
  int row = threadIdx.y;  // TODO: same for the row
  if (row < rows && col < cols) {
    long long i = (long long)row * cols + col;
    c[i] = a[i] + b[i];
  }
}
