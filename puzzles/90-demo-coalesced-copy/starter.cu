// Demo 90 · coalesced copy: dst[i] = src[i], one float per thread.
//
// This kernel is already right: it is here to be run and changed. Thread i of the grid copies
// element i, so the 32 threads of a warp touch 32 neighbouring floats: 128 contiguous bytes,
// exactly four 32-byte sectors per load and per store. Compare it with 91-demo-strided-copy,
// which copies the same bytes with a different thread-to-element mapping.
//
//   warpbook check 90-demo-coalesced-copy puzzles/90-demo-coalesced-copy/starter.cu --backend sim
//     -> global_load_sectors / global_load_requests = 8192 / 2048 = 4
//   warpbook check 90-demo-coalesced-copy puzzles/90-demo-coalesced-copy/starter.cu
//     -> on a GPU: the time and GB/s at n = 2^26 (512 MiB moved)
//
// Things to try: `// @tune BLOCK=32` or `=1024` (does the block size matter for a copy?);
// shift every index by one (src[i + 1]) and watch sectors per request go from 4 to 5.

extern "C" __global__ void coalesced_copy(const float* src, float* dst, int n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}
