// fault: output rows laid out 64 apart (the largest k) instead of k apart
// puzzle: 28-topk-rows
// sim: runtime_fault | wrote vals[ | past its end | line @HERE
// gpu: wrong_answer | past the end of vals
// gpu-explained: the simulator, same case and inputs: runtime_fault | past its end | line @HERE
// note: Row 1 of the 3 x 3 case writes vals[64]: past the 9 floats, into the guard band on a GPU.
#define KMAX 64

extern "C" __global__ void topk_rows(const float* x, float* vals, int* idx, int rows, int V, int k) {
  if (threadIdx.x != 0) return;
  const float* row = x + (long long)blockIdx.x * V;
  float top_v[KMAX];
  int top_c[KMAX];
  int n = 0;
  for (int c = 0; c < V; ++c) {
    float v = row[c];
    if (n == k && !(v > top_v[k - 1])) continue;
    int p = n < k ? n++ : k - 1;
    while (p > 0 && v > top_v[p - 1]) {
      top_v[p] = top_v[p - 1];
      top_c[p] = top_c[p - 1];
      --p;
    }
    top_v[p] = v;
    top_c[p] = c;
  }
  for (int j = 0; j < k; ++j) {
    vals[blockIdx.x * KMAX + j] = top_v[j]; /*HERE*/
    idx[blockIdx.x * KMAX + j] = top_c[j];
  }
}
