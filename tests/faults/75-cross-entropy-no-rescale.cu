// fault: online log-sum-exp that raises the running max but forgets to rescale the sum by exp(m_old - m_new)
// puzzle: 27-cross-entropy
// sim: wrong_answer | elements of loss are wrong
// gpu: same
extern "C" __global__ void cross_entropy(const float* logits, const int* target, float* loss,
                                         int rows, int V) {
  __shared__ float bm[1024], bs[1024];
  const float* x = logits + (long long)blockIdx.x * V;
  const int t = target[blockIdx.x];
  if (t == -100) {
    if (threadIdx.x == 0) loss[blockIdx.x] = 0.0f;
    return;
  }
  float m = -INFINITY, s = 0.0f;
  for (int j = threadIdx.x; j < V; j += blockDim.x) {
    m = fmaxf(m, x[j]);
    s += expf(x[j] - m); // the terms added under an older, smaller m are now too large
  }
  bm[threadIdx.x] = m;
  bs[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < blockDim.x; ++k) { // the merge across threads is right
      float M = fmaxf(m, bm[k]);
      s = (m == M ? s : s * expf(m - M)) + (bm[k] == M ? bs[k] : bs[k] * expf(bm[k] - M));
      m = M;
    }
    loss[blockIdx.x] = (m - x[t]) + logf(s);
  }
}
