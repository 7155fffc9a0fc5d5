// 28 · Top-k of each row: for each row r of x (rows x V, row-major), write the k largest values of
// the row to vals[r][0..k) in descending order, and their columns to idx[r][0..k).
// Equal values: the LOWER column ranks first, both in choosing which k and in their order.
// 1 <= k <= min(V, 64). One block per row, BLOCK threads (a power of two, 32..1024).
//
// This starter runs one thread per row and keeps a sorted list in the output itself (an insertion
// sort that drops whatever falls off the end). It is slow, and it gets ties wrong.

extern "C" __global__ void topk_rows(const float* x, float* vals, int* idx, int rows, int V, int k) {
  if (threadIdx.x != 0) return; // TODO: 255 of 256 threads idle; a row holds up to 128256 values
  const float* row = x + (long long)blockIdx.x * V;
  float* top_v = vals + (long long)blockIdx.x * k;
  int* top_c = idx + (long long)blockIdx.x * k;
  int n = 0; // entries held, sorted, in top_v[0..n)
  for (int c = 0; c < V; ++c) {
    float v = row[c];
    if (n == k && v < top_v[k - 1]) continue; // TODO: can an equal value with a higher column get in?
    int p = n < k ? n++ : k - 1;              // the slot that opens (the last one drops out)
    while (p > 0 && v >= top_v[p - 1]) {      // TODO: ties: should (v, c) pass an equal value?
      top_v[p] = top_v[p - 1];
      top_c[p] = top_c[p - 1];
      --p;
    }
    top_v[p] = v;
    top_c[p] = c;
  }
}
