// Reference: the definition, step by step, in double.
//   xent_count  one thread counts the rows whose target is not -100: n, kept in the workspace.
//   xent_rows   one block per row: the max, then the sum of exp(z - max) (two reads of the row),
//               lse = max + log(sum); the row's loss lse - z[target] into the workspace; then every
//               thread overwrites its logits with (exp(z - lse) - [j == target]) / n, rounded once
//               to bf16. A row whose target is -100 has loss 0 and gradient 0.
//   xent_mean   one thread adds the rows' losses and divides by n (0 when n is 0).
#include <cuda_bf16.h>

extern "C" __global__ void xent_count(__nv_bfloat16* z, const int* y, float* loss, float* work,
                                      int T, int V) {
  if (threadIdx.x != 0) return;
  int n = 0;
  for (int r = 0; r < T; ++r) n += y[r] != -100;
  reinterpret_cast<double*>(work)[T] = n;
}

extern "C" __global__ void xent_rows(__nv_bfloat16* z, const int* y, float* loss, float* work,
                                     int T, int V) {
  __shared__ double part[1024];
  __shared__ double row[2]; // lse, z[target]
  double* w = reinterpret_cast<double*>(work);
  const int r = blockIdx.x, t = y[r];
  __nv_bfloat16* x = z + (long long)r * V;
  if (t == -100) { // ignored: no loss, no gradient
    if (threadIdx.x == 0) w[r] = 0.0;
    for (int j = threadIdx.x; j < V; j += blockDim.x) x[j] = __float2bfloat16(0.0f);
    return;
  }
  double m = -INFINITY;
  for (int j = threadIdx.x; j < V; j += blockDim.x) m = fmax(m, (double)__bfloat162float(x[j]));
  part[threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < blockDim.x; ++k) m = fmax(m, part[k]);
    row[0] = m;
  }
  __syncthreads();
  m = row[0];
  double s = 0.0;
  for (int j = threadIdx.x; j < V; j += blockDim.x) s += exp((double)__bfloat162float(x[j]) - m);
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < blockDim.x; ++k) s += part[k];
    const double lse = m + log(s);
    row[0] = lse;
    row[1] = (double)__bfloat162float(x[t]);
    w[r] = lse - row[1];
  }
  __syncthreads(); // every read of the row is done before any logit is overwritten
  const double lse = row[0], n = w[T];
  for (int j = threadIdx.x; j < V; j += blockDim.x) {
    const double p = exp((double)__bfloat162float(x[j]) - lse);
    x[j] = __float2bfloat16((float)((p - (j == t ? 1.0 : 0.0)) / n));
  }
}

extern "C" __global__ void xent_mean(__nv_bfloat16* z, const int* y, float* loss, float* work,
                                     int T, int V) {
  if (threadIdx.x != 0) return;
  const double* w = reinterpret_cast<const double*>(work);
  double sum = 0.0;
  for (int r = 0; r < T; ++r) sum += w[r];
  loss[0] = w[T] > 0 ? (float)(sum / w[T]) : 0.0f;
}
