// Held-out · h14-conv1d-smem-consecutive · designed limiter: bank_conflicts
//
// What: a shared-memory tiled causal convolution, BLOCK = 128 threads, ITEMS = 8 outputs per
// thread: a block stages its 1024 inputs plus the ksize - 1 halo (and the channel's taps) in
// shared memory with coalesced loads, then thread t computes the 8 CONSECUTIVE outputs
// 8t .. 8t + 7 of the tile from shared memory, writes them to a shared output tile, and the
// block stores the tile with coalesced writes. No padding.
// Run:  warpbook check 16-conv1d bench/perfmodel/heldout/h14-conv1d-smem-consecutive.cu
//
// Why it should be bound by bank conflicts: in every shared access of the compute loop lane l
// touches word 8l + const, so lanes l, l + 4, l + 8, ... share a bank: an 8-way conflict (8
// wavefronts per request) on each of the ksize = 4 input reads per output and on the output
// write; the tap reads are broadcasts. Per 32 outputs ~4 x 8 + 4 + 8 = 44 shared wavefronts, so
// the 67 M outputs of the timed 4096 x 16384 take ~0.7 M cycles per SM (~350 us) against
// ~140 us for the 537 MB of DRAM traffic. Expected: ~35-40% of speed of light.
// @tune BLOCK=128
// @tune ITEMS=8

#define TOUT (BLOCK * ITEMS) // outputs per block
#define MAXK 64

extern "C" __global__ void conv1d(const float* x, const float* w, float* y, int channels,
                                  int length, int ksize) {
  __shared__ float xs[TOUT + MAXK - 1];
  __shared__ float ws[MAXK];
  __shared__ float ys[TOUT];
  const long long c = blockIdx.y;
  const long long t0 = (long long)blockIdx.x * TOUT;
  const float* xc = x + c * length;

  // xs[j] = x[c][t0 - (ksize - 1) + j], zero outside the sequence.
  for (int j = threadIdx.x; j < TOUT + ksize - 1; j += BLOCK) {
    const long long t = t0 - (ksize - 1) + j;
    xs[j] = (t >= 0 && t < length) ? xc[t] : 0.0f;
  }
  for (int k = threadIdx.x; k < ksize; k += BLOCK) ws[k] = w[c * ksize + k];
  __syncthreads();

  // Output t0 + o needs x[t0 + o + k - (ksize - 1)] = xs[o + k].
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int o = threadIdx.x * ITEMS + i;
    float acc = 0.0f;
    for (int k = 0; k < ksize; ++k) acc += ws[k] * xs[o + k];
    ys[o] = acc;
  }
  __syncthreads();

  float* yc = y + c * length;
  for (int j = threadIdx.x; j < TOUT; j += BLOCK)
    if (t0 + j < length) yc[t0 + j] = ys[j];
}
