// Demo 91 · strided copy: dst[i] = src[i], with neighbouring threads STRIDE floats apart.
//
// This kernel is right, and slow on purpose. It copies the same n floats as
// 90-demo-coalesced-copy, each exactly once, but it numbers them differently: it views the
// array as a (rows x stride) row-major matrix and lets consecutive threads walk DOWN a column.
// Thread t takes row t % rows and column t / rows, so the 32 threads of a warp touch 32 floats
// that are `stride` floats apart. With stride = 32 (128 bytes) every lane lands in its own
// 32-byte sector: 32 sectors per request where the coalesced copy needs 4.
//
//   warpbook check 91-demo-strided-copy puzzles/91-demo-strided-copy/starter.cu --backend sim
//     -> global_load_sectors / global_load_requests = 65536 / 2048 = 32
//   warpbook check 91-demo-strided-copy puzzles/91-demo-strided-copy/starter.cu
//     -> on a GPU: compare its GB/s with the coalesced copy's
//
// Things to try: `// @tune STRIDE=1` (the same kernel, coalesced again), then 2, 4, 8, 16:
// sectors per request go 4, 8, 16, 32, 32. Past 8 floats (one sector) the count stops rising,
// but the time does not: DRAM moves 64 bytes at a time, so at 16 and 32 each sector costs a
// transfer of its own (lesson 0003 has the measured table).
// @tune STRIDE=32

extern "C" __global__ void strided_copy(const float* src, float* dst, int n, int stride) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long rows = (n + stride - 1) / stride;
  long long row = t % rows;          // consecutive threads: consecutive rows ...
  long long col = t / rows;          // ... of the same column
  long long i = row * stride + col;  // so their addresses are `stride` floats apart
  if (col < stride && i < n) dst[i] = src[i];
}
