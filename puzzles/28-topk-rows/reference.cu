// Reference: k passes over the row, one block per row. Pass j finds the best element among those
// that rank after the pick of pass j - 1, in the order "larger value first; between equal values,
// the lower column first". That order is total (no two columns are equal), so the k picks are the
// top k, each exactly once, already sorted. There is no arithmetic: values are compared and copied,
// so no precision is lost anywhere. Works for any power-of-two block of at most 1024 threads.

// Does (v, c) rank before (w, d)?
__device__ bool ranks_before(float v, int c, float w, int d) {
  return v > w || (v == w && c < d);
}

extern "C" __global__ void topk_rows(const float* x, float* vals, int* idx, int rows, int V,
                                     int k) {
  __shared__ float sv[1024];
  __shared__ int sc[1024];
  const int t = threadIdx.x;
  const float* row = x + (long long)blockIdx.x * V;
  float prev_v = 0;
  int prev_c = -1; // no pick yet
  for (int j = 0; j < k; ++j) {
    float best_v = 0;
    int best_c = -1; // none yet
    for (int c = t; c < V; c += blockDim.x) {
      float v = row[c];
      bool after_prev = prev_c < 0 || ranks_before(prev_v, prev_c, v, c);
      if (after_prev && (best_c < 0 || ranks_before(v, c, best_v, best_c))) best_v = v, best_c = c;
    }
    sv[t] = best_v;
    sc[t] = best_c;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (t < s && sc[t + s] >= 0 &&
          (sc[t] < 0 || ranks_before(sv[t + s], sc[t + s], sv[t], sc[t]))) {
        sv[t] = sv[t + s];
        sc[t] = sc[t + s];
      }
      __syncthreads();
    }
    prev_v = sv[0];
    prev_c = sc[0];
    if (t == 0) {
      vals[(long long)blockIdx.x * k + j] = prev_v;
      idx[(long long)blockIdx.x * k + j] = prev_c;
    }
    __syncthreads(); // everyone has read sv[0], sc[0] before the next pass writes them
  }
}
