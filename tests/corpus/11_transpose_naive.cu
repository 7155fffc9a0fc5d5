// Naive transpose, one element per thread with a 2-D grid: out[c * rows + r] = in[r * cols + c]
// (reads coalesced, writes strided).
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}
