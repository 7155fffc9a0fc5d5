// 15 · SwiGLU: y[r][j] = silu(gate[r][j]) * up[r][j], silu(g) = g / (1 + exp(-g)).
// The input gu has rows x (2 * cols) floats: row r is [gate (cols values) | up (cols values)].
// Launch: grid (cdiv(cols, BLOCK * VEC), rows), BLOCK threads; blockIdx.y is the row. VEC = 1 by
// default: one output per thread.

extern "C" __global__ void swiglu(const float* gu, float* y, int rows, int cols) {
  long long r = blockIdx.y;
  long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (j < cols) {
    float g = gu[r * cols + j];        // TODO: a row of gu is 2 * cols wide
    float u = gu[r * cols + j + 1];    // TODO: the up value sits cols further along the same row
    float e = expf(g);
    y[r * cols + j] = g * e / (1.0f + e) * u;  // TODO: e is Inf for g > 88: rewrite without e^g
  }
}
