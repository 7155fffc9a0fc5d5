// 05 · Outer add: out[r][k] = x[r] + y[k] for r < rows, k < cols (out is row-major).
//
// Launch: blockDim = (BX, BY) = (32, 8); gridDim = (cdiv(cols, BX * VEC), cdiv(rows, BY)).
// x runs along a row of out (the column k), y down the rows (r). VEC = 1 by default: one element
// per thread.

extern "C" __global__ void outer_add(const float* x, const float* y, float* out, int rows, int cols) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && k < cols) {
    // TODO: which of x and y belongs to the row, and which to the column?
    out[(long long)r * cols + k] = x[k % rows] + y[r % cols];
  }
}
