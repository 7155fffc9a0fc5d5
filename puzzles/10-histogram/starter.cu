// 10 · Byte histogram: bins[v] += the number of bytes of data equal to v, for v = 0..255.
// bins starts at zero. Launch: min(GRID, cdiv(n, BLOCK * 16)) blocks of BLOCK threads
// (GRID = 1024, BLOCK = 256), so a thread may have to handle many bytes: loop with a grid stride.

extern "C" __global__ void histogram(const unsigned char* data, unsigned int* bins, int n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    // TODO: many threads increment the same bin at the same time, and this read-add-write loses
    // their updates. Make the increment atomic.
    bins[data[i]] = bins[data[i]] + 1;
    // TODO (speed): then give each block its own histogram in shared memory, and add it to bins
    // once at the end.
  }
}
