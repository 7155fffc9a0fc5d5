// First attempt · f12-hist-global-atomic-word · 10-histogram
// What: each thread reads 4 bytes at a time as one 32-bit word (grid-stride over words) and adds
// each byte to its bin with a global atomicAdd; a tail loop handles the last n % 4 bytes.
// Naive pattern: few-address global atomics: the skewed data sends about half of every warp's
// atomics to bin 0, and all SMs contend for the same 256 counters in the L2.
// @tune BLOCK=512
// @tune GRID=2048

extern "C" __global__ void histogram(const unsigned char* data, unsigned int* bins, int n) {
  const long long words = n / 4;
  const unsigned int* w = reinterpret_cast<const unsigned int*>(data);
  const long long tid = (long long)blockIdx.x * BLOCK + threadIdx.x;
  const long long step = (long long)gridDim.x * BLOCK;
  for (long long i = tid; i < words; i += step) {
    const unsigned int v = w[i];
    atomicAdd(&bins[v & 0xffu], 1u);
    atomicAdd(&bins[(v >> 8) & 0xffu], 1u);
    atomicAdd(&bins[(v >> 16) & 0xffu], 1u);
    atomicAdd(&bins[v >> 24], 1u);
  }
  for (long long i = words * 4 + tid; i < n; i += step) atomicAdd(&bins[data[i]], 1u);
}
