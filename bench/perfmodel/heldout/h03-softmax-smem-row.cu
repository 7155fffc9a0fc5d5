// Held-out · h03-softmax-smem-row · designed limiter: dram
//
// What: one 512-thread block per row. The row is read once from global memory into a 32 KB
// static shared-memory buffer (coalesced scalar loads) while each thread tracks its maximum;
// a block max (shuffles + 16 warp values in shared memory); then exp(x - max) is written back
// over the buffer while each thread adds its terms; a block sum; and finally y = e / sum is
// stored from shared memory. Rows of up to 8192 floats (every case and the timed size).
// Run:  warpbook check 03-softmax bench/perfmodel/heldout/h03-softmax-smem-row.cu
//
// Why it should be DRAM-bound: global traffic is the minimum, 4 B read + 4 B written per
// element: 537 MB at the timed 8192 x 8192 (~140 us at the measured read+write ceiling). The
// three passes over the row run out of shared memory: 4 shared accesses and one expf (~10
// instructions) per element, ~20 us of issue. 32 KB of shared memory plus 512 threads give 4
// blocks (2048 threads) per SM; the staging loop keeps a few 4-byte loads per thread in flight,
// ~30 KB per SM, about what Little's law asks for. Two barriers per reduction, four in all, per
// 8192-element row are cheap.
// @tune BLOCK=512

#define MAX_COLS 8192

__device__ float block_reduce(float v, bool is_max, float* buf) {
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, u) : v + u;
  }
  __syncthreads(); // buf may still be read by the previous reduction
  if ((threadIdx.x & 31) == 0) buf[threadIdx.x >> 5] = v;
  __syncthreads();
  v = buf[0];
  for (int w = 1; w < BLOCK / 32; ++w) v = is_max ? fmaxf(v, buf[w]) : v + buf[w];
  return v;
}

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols) {
  __shared__ float s[MAX_COLS];
  __shared__ float buf[32];
  if (cols > MAX_COLS) __trap();
  const float* in = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;

  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += BLOCK) {
    float v = in[c];
    s[c] = v;
    m = fmaxf(m, v);
  }
  m = block_reduce(m, true, buf);

  // Each thread reads back only the elements it wrote: no barrier needed before this loop.
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += BLOCK) {
    float e = expf(s[c] - m);
    s[c] = e;
    sum += e;
  }
  sum = block_reduce(sum, false, buf);

  const float inv = 1.0f / sum;
  for (int c = threadIdx.x; c < cols; c += BLOCK) out[c] = s[c] * inv;
}
