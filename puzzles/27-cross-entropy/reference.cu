// Reference: one block per row, in double. A block-wide max, then a block-wide sum of exp(x - m)
// (the row is read twice: the reference is plain, not fast), then
//   loss = (m - x[target]) + log(sum),   or 0 where target == -100.
extern "C" __global__ void cross_entropy(const float* logits, const int* target, float* loss,
                                         int rows, int V) {
  __shared__ double part[1024];
  const float* x = logits + (long long)blockIdx.x * V;
  const int t = target[blockIdx.x];
  if (t == -100) { // ignored row
    if (threadIdx.x == 0) loss[blockIdx.x] = 0.0f;
    return;
  }
  double m = -1e308;
  for (int j = threadIdx.x; j < V; j += blockDim.x) m = fmax(m, (double)x[j]);
  part[threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < blockDim.x; ++k) m = fmax(m, part[k]);
    part[0] = m;
  }
  __syncthreads();
  m = part[0];
  __syncthreads();
  double s = 0.0;
  for (int j = threadIdx.x; j < V; j += blockDim.x) s += exp((double)x[j] - m);
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < blockDim.x; ++k) s += part[k];
    loss[blockIdx.x] = (float)((m - (double)x[t]) + log(s));
  }
}
