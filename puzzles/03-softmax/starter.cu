// 03 · Softmax over each row of x (rows x cols). One block per row, BLOCK threads.

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols) {
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;

  // TODO: find the row's maximum and subtract it before expf (large logits overflow otherwise)
  // TODO: the sum must cover the whole row, not only this thread's elements: reduce it across
  // the block
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(in[c]);

  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c]) / sum;
}
