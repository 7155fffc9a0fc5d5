// First attempt · f08-softmax-chunk-per-thread · 03-softmax
// What: one block per row, each thread owns a contiguous chunk of cols / BLOCK elements: its
// chunk's max, then (after thread 0 combines the maxima from shared memory) its chunk's sum, then
// its chunk's outputs.
// Naive pattern: an uncoalesced per-thread row walk: lanes read and write addresses a chunk apart,
// 32 lines per warp access, with serial combines by thread 0 between the passes.
// @tune BLOCK=128

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols) {
  __shared__ float part[BLOCK];
  __shared__ float m_all, inv_all;
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  const int chunk = (cols + BLOCK - 1) / BLOCK;
  const int begin = threadIdx.x * chunk, end = min(begin + chunk, cols);
  float m = -INFINITY;
  for (int c = begin; c < end; ++c) m = fmaxf(m, in[c]);
  part[threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = -INFINITY;
    for (int k = 0; k < BLOCK; ++k) t = fmaxf(t, part[k]);
    m_all = t;
  }
  __syncthreads();
  m = m_all;
  float s = 0.0f;
  for (int c = begin; c < end; ++c) s += expf(in[c] - m);
  __syncthreads();
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int k = 0; k < BLOCK; ++k) t += part[k];
    inv_all = 1.0f / t;
  }
  __syncthreads();
  const float inv = inv_all;
  for (int c = begin; c < end; ++c) out[c] = expf(in[c] - m) * inv;
}
