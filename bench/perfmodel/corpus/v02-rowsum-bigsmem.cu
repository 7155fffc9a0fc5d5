// Corpus · v02-rowsum-bigsmem · designed limiter: occupancy
//
// What: one 64-thread block per row; each thread adds its strided share of the row with 4 loads
// in flight per iteration (columns c, c + 64, c + 128, c + 192), then the 64 partial sums meet in
// a 48 KB static __shared__ array (12288 floats): thread t stores at stage[t * 192 + j] for a
// slot j that depends on the row, and thread 0 adds the 64 values in order.
// Run:  warpbook check 02-row-sum bench/perfmodel/corpus/v02-rowsum-bigsmem.cu
//
// Why it is slow: 48 KB of shared memory per block (plus the 1 KB the hardware reserves) lets
// at most 4 blocks share an SM's 228 KB, so an SM holds 4 x 64 = 256 threads (8 warps, 1/8 of
// its 2048). With 4 loads of 4 B in flight per thread that is 4 KB outstanding per SM where
// Little's law wants ~25 KB; the same code with a small stage array would run 2048 threads and 32
// KB in flight, enough for DRAM. Expected: ~15-20% of the DRAM ceiling, limited by resident warps.
// @tune BLOCK=64

#define STAGE 12288 // floats: 48 KB, the most a static __shared__ array may hold
#define SLOTS (STAGE / BLOCK)

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float stage[STAGE];
  const float* row = x + (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  float s = 0.0f;
  int c = t;
  for (; c + 3 * BLOCK < cols; c += 4 * BLOCK) {
    const float a0 = row[c], a1 = row[c + BLOCK], a2 = row[c + 2 * BLOCK], a3 = row[c + 3 * BLOCK];
    s += (a0 + a1) + (a2 + a3);
  }
  for (; c < cols; c += BLOCK) s += row[c];
  const int j = blockIdx.x % SLOTS; // a run-time slot: the whole array stays allocated
  stage[t * SLOTS + j] = s;
  __syncthreads();
  if (t == 0) {
    float total = 0.0f;
    for (int k = 0; k < BLOCK; ++k) total += stage[k * SLOTS + j];
    y[blockIdx.x] = total;
  }
}
