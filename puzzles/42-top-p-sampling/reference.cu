// Reference: one block per row, straight from the definition. The nucleus is found by walking the
// row's distinct weights from the largest down, one pass over the row each: a pass finds the
// largest weight below the previous level and how many tokens carry it. The walk stops at the
// first level w whose tokens bring the mass taken so far to p * M: the nucleus is every token
// above w and the first q tokens equal to w (lower columns first), q as small as reaches p * M.
// Then one thread walks the row in column order and picks the token. Every sum here is exact (the
// weights are such that any partial sum is an f32 integer multiple of their unit), so the order
// of the sums changes nothing. Works for any block of 32 to 1024 threads.

// Block-wide sum of one float per thread (exact here: any order gives the same sum).
__device__ float block_sum(float v, float* sh) {
  const int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  if (t == 0) {
    float s = 0;
    for (int i = 0; i < blockDim.x; ++i) s += sh[i];
    sh[1024] = s;
  }
  __syncthreads();
  const float s = sh[1024];
  __syncthreads(); // everyone has read it before sh is used again
  return s;
}

extern "C" __global__ void top_p_sample(const float* probs, const float* top_p, const float* u,
                                        int* token, float* mass, int rows, int V) {
  __shared__ float sh[1025];
  __shared__ float lvl[1024];
  __shared__ float cnt[1024];
  const int t = threadIdx.x, r = blockIdx.x;
  const float* row = probs + (long long)r * V;

  float part = 0;
  for (int c = t; c < V; c += blockDim.x) part += row[c];
  const float M = block_sum(part, sh);
  const float target = top_p[r] * M;

  // Walk the levels from the top: `taken` is the mass of every token above `below`.
  float below = INFINITY, taken = 0, w = 0;
  for (;;) {
    float m = -1, n = 0; // this thread's largest weight below `below`, and its count
    for (int c = t; c < V; c += blockDim.x) {
      const float v = row[c];
      if (v < below) {
        if (v > m)
          m = v, n = 1;
        else if (v == m)
          n += 1;
      }
    }
    lvl[t] = m;
    cnt[t] = n;
    __syncthreads();
    if (t == 0) {
      float bm = -1, bn = 0;
      for (int i = 0; i < blockDim.x; ++i) {
        if (lvl[i] > bm)
          bm = lvl[i], bn = cnt[i];
        else if (lvl[i] == bm)
          bn += cnt[i];
      }
      sh[0] = bm;
      sh[1] = bn;
    }
    __syncthreads();
    w = sh[0];
    const float n_w = sh[1];
    __syncthreads();
    // Weights are >= 0 and the mass of the whole row reaches p * M, so a level always ends it.
    if (taken + n_w * w >= target) break;
    taken += n_w * w;
    below = w;
  }

  if (t == 0) {
    float q = 1; // the fewest tokens of weight w that reach the target (at least one token)
    while (taken + q * w < target) q += 1;
    const float Mn = taken + q * w;
    const float x = u[r] * Mn;
    float run = 0, ties = 0;
    int pick = -1, last = -1;
    for (int c = 0; c < V; ++c) {
      const float v = row[c];
      bool in = v > w;
      if (v == w) in = ties++ < q; // the first q of the equal ones, in column order
      if (!in) continue;
      last = c;
      run += v;
      if (run > x) {
        pick = c;
        break;
      }
    }
    token[r] = pick >= 0 ? pick : last;
    mass[r] = Mn;
  }
}
