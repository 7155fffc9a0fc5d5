// 27 · Fused cross-entropy: for each row r of logits[rows][V],
//   loss[r] = log(sum_j exp(logits[r][j])) - logits[r][target[r]],   or 0 if target[r] == -100.
// One block of BLOCK threads per row. V is up to 128256 (the Llama-3 vocabulary).

extern "C" __global__ void cross_entropy(const float* logits, const int* target, float* loss,
                                         int rows, int V) {
  __shared__ float part[1024];
  const float* x = logits + (long long)blockIdx.x * V;
  const int t = target[blockIdx.x];
  // TODO: target -100 means "ignore": the loss is 0 (and x[-100] is outside the row).

  // TODO: exp(1e4) is Inf in f32: subtract the row's max first. Better still, keep a running max
  // and a sum rescaled whenever the max grows (online log-sum-exp), so the row is read once.
  float s = 0.0f;
  for (int j = threadIdx.x; j < V; j += blockDim.x) s += expf(x[j]);
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) { // TODO: a tree, or warp shuffles, instead of one thread adding them all
    for (int k = 1; k < blockDim.x; ++k) s += part[k];
    loss[blockIdx.x] = logf(s) - x[t];
  }
}
