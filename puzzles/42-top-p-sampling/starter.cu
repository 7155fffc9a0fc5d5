// 42 · Top-p (nucleus) sampling: for each row r of probs (rows x V, row-major, weights >= 0 that
// need not sum to 1), with p = top_p[r] and u = u[r] in [0, 1):
//   - rank the tokens "larger weight first, then lower column"; the nucleus is the shortest prefix
//     of that ranking (at least one token) whose mass reaches p * M, M the row's total;
//   - Mn is the nucleus's mass; walk the nucleus in COLUMN order adding weights, and pick the first
//     token whose running sum (itself included) exceeds x = u * Mn; if none does, the last one;
//   - write the token to token[r] and Mn to mass[r].
// One block per row, BLOCK threads (128..1024). Every partial sum of a row is exact in f32 (the
// weights are integers, or multiples of one power of two, and a row's total stays below 2^24),
// so the answer does not depend on the order you add in.
//
// This starter runs one thread per row and samples by inverse CDF, in column order, over the WHOLE
// row: it forgets the nucleus. It is right only when p = 1, and slow: 1 of BLOCK threads works.

extern "C" __global__ void top_p_sample(const float* probs, const float* top_p, const float* u,
                                        int* token, float* mass, int rows, int V) {
  if (threadIdx.x != 0) return; // TODO: the other threads; a row holds up to 128256 weights
  const int r = blockIdx.x;
  const float* row = probs + (long long)r * V;
  float M = 0;
  for (int c = 0; c < V; ++c) M += row[c];
  // TODO: p = top_p[r] is never read. Which tokens are in the nucleus, and what is its mass?
  const float x = u[r] * M;
  float run = 0;
  int pick = V - 1;
  for (int c = 0; c < V; ++c) {
    run += row[c];
    if (run > x) {
      pick = c;
      break;
    }
  }
  token[r] = pick;
  mass[r] = M;
}
