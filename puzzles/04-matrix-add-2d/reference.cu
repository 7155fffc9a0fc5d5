// Reference: one thread per (row, column), VEC columns per thread, the sum formed in double and
// rounded once (which equals the float sum: the add is exactly rounded either way).
extern "C" __global__ void matrix_add(const float* a, const float* b, float* c, int rows, int cols) {
  long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y;
  long long col0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  if (row >= rows) return;
  for (long long col = col0; col < col0 + VEC && col < cols; ++col) {
    long long i = row * cols + col;
    c[i] = (float)((double)a[i] + (double)b[i]);
  }
}
