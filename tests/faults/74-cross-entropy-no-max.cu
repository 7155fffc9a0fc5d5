// fault: cross-entropy as log(sum exp(x)) without subtracting the max: exp(1e4) is Inf in f32
// puzzle: 27-cross-entropy
// sim: wrong_answer | Inf | logits up to 1e4
// gpu: same
extern "C" __global__ void cross_entropy(const float* logits, const int* target, float* loss,
                                         int rows, int V) {
  __shared__ float part[1024];
  const float* x = logits + (long long)blockIdx.x * V;
  const int t = target[blockIdx.x];
  if (t == -100) {
    if (threadIdx.x == 0) loss[blockIdx.x] = 0.0f;
    return;
  }
  float s = 0.0f;
  for (int j = threadIdx.x; j < V; j += blockDim.x) s += expf(x[j]);
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < blockDim.x; ++k) s += part[k];
    loss[blockIdx.x] = logf(s) - x[t];
  }
}
