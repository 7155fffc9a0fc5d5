// fault: a top-k that keeps only distinct values: with fewer distinct values than k, the last slots are never written
// puzzle: 28-topk-rows
// sim: wrong_answer | elements of vals are wrong | ties
// gpu: same
// note: The ties case has 3 distinct values and k = 64: slot 1 gets the next distinct value instead of a copy, and slots 3..63 keep the checker's NaN poison (shown as unwritten), which never passes.
extern "C" __global__ void topk_rows(const float* x, float* vals, int* idx, int rows, int V, int k) {
  if (threadIdx.x != 0) return;
  const float* row = x + (long long)blockIdx.x * V;
  float* top_v = vals + (long long)blockIdx.x * k;
  int* top_c = idx + (long long)blockIdx.x * k;
  int n = 0; // sorted, distinct, in top_v[0..n)
  for (int c = 0; c < V; ++c) {
    float v = row[c];
    bool held = false;
    for (int j = 0; j < n; ++j) held = held || top_v[j] == v; // the bug: a copy is not a new value
    if (held || (n == k && v <= top_v[k - 1])) continue;
    int p = n < k ? n++ : k - 1;
    while (p > 0 && v > top_v[p - 1]) {
      top_v[p] = top_v[p - 1];
      top_c[p] = top_c[p - 1];
      --p;
    }
    top_v[p] = v;
    top_c[p] = c;
  }
}
