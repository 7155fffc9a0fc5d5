// 36 · Cross-entropy forward and backward, in place. For logits z[T][V] (bf16) and targets y[T]:
//   loss = mean over the rows r with y[r] != -100 of  log(sum_j exp(z[r][j])) - z[r][y[r]]
//   z[r][j] <- (softmax(z[r])[j] - [j == y[r]]) / n        n = number of rows with y[r] != -100
// and z[r][j] <- 0 on the rows that are ignored. Compute in f32; round to bf16 once, at the end.
// Three launches: xent_count (1 block of 1024), xent_rows (one block of BLOCK threads per row),
// xent_mean (1 block of 1024). `work` is yours: 2 T + 16 floats nothing checks.
#include <cuda_bf16.h>

extern "C" __global__ void xent_count(__nv_bfloat16* z, const int* y, float* loss, float* work,
                                      int T, int V) {
  // TODO: the mean's denominator is the number of rows whose target is not -100. Count them here
  // (all T of them, with every thread of the block) and leave the count in work[] for the others.
}

extern "C" __global__ void xent_rows(__nv_bfloat16* z, const int* y, float* loss, float* work,
                                     int T, int V) {
  __shared__ float sum;
  __nv_bfloat16* x = z + (long long)blockIdx.x * V;
  const int t = y[blockIdx.x];
  // TODO: a target of -100 means "ignored": loss 0, gradient 0 (and x[-100] is not in the row).
  if (threadIdx.x == 0) {
    // TODO: exp(1e4) is Inf in f32: subtract the row's max first. And one thread adding 128256
    // terms is slow (and drifts): share the row among the threads, then combine their sums.
    float s = 0.0f;
    for (int j = 0; j < V; ++j) s += expf(__bfloat162float(x[j]));
    sum = s;
    work[blockIdx.x] = logf(s) - __bfloat162float(x[t]);
  }
  __syncthreads(); // the sum is known, and x[t] read, before any logit is overwritten
  for (int j = threadIdx.x; j < V; j += blockDim.x) {
    const float p = expf(__bfloat162float(x[j])) / sum;
    x[j] = __float2bfloat16((p - (j == t ? 1.0f : 0.0f)) / T); // TODO: divide by n, not T
  }
}

extern "C" __global__ void xent_mean(__nv_bfloat16* z, const int* y, float* loss, float* work,
                                     int T, int V) {
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int r = 0; r < T; ++r) s += work[r];
    loss[0] = s / T; // TODO: the mean over the rows not ignored (and 0 if there are none)
  }
}
