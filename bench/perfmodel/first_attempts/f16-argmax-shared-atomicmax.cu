// First attempt · f16-argmax-shared-atomicmax · 09-argmax-rows
// What: one block per row; every thread finds the best (value, index) of its strided share, packs
// it into 64 bits ordered so that a larger value wins and, on ties, the smaller index wins, and
// folds it into one __shared__ word with atomicMax; thread 0 stores the index.
// Naive pattern: same-address shared atomics (64-bit) in place of a reduction tree.
// @tune BLOCK=256

// Maps a float to an unsigned key with the same order (negatives flipped).
__device__ unsigned int order_key(float v) {
  const unsigned int u = __float_as_uint(v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

extern "C" __global__ void argmax_rows(const float* x, int* idx, int rows, int cols) {
  __shared__ unsigned long long best;
  const float* row = x + (long long)blockIdx.x * cols;
  if (threadIdx.x == 0) best = 0ull;
  __syncthreads();
  unsigned long long mine = 0ull;
  for (int c = threadIdx.x; c < cols; c += BLOCK) {
    const unsigned long long k =
        ((unsigned long long)order_key(row[c]) << 32) | (0xffffffffu - (unsigned int)c);
    mine = k > mine ? k : mine;
  }
  atomicMax(&best, mine);
  __syncthreads();
  if (threadIdx.x == 0) idx[blockIdx.x] = (int)(0xffffffffu - (unsigned int)(best & 0xffffffffu));
}
