// Inclusive prefix sum within each block of 256 (Hillis-Steele in double-buffered shared memory);
// block totals go to sums[blockIdx.x] for a second pass.
extern "C" __global__ void block_scan(const int* in, int* out, int* sums, int n) {
  __shared__ int buf[2][256];
  int t = threadIdx.x;
  int i = blockIdx.x * 256 + t;
  int cur = 0;
  buf[0][t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    int v = buf[cur][t];
    if (t >= off) v += buf[cur][t - off];
    buf[cur ^ 1][t] = v;
    cur ^= 1;
    __syncthreads();
  }
  if (i < n) out[i] = buf[cur][t];
  if (t == 255) sums[blockIdx.x] = buf[cur][t];
}
