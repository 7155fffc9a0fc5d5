// Reference: the direct transpose. Reads are coalesced, writes are a whole output row apart.
extern "C" __global__ void transpose(const float* input, float* output, int rows, int cols) {
  long long c = (long long)blockIdx.x * TILE + threadIdx.x;
  for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
    long long r = (long long)blockIdx.y * TILE + j;
    if (r < rows && c < cols) output[c * rows + r] = input[r * cols + c];
  }
}
