// Shuffles and matches: up[i] = __shfl_up_sync by 3, idx[i] = __shfl_sync from lane (lane * 5) %
// 32, and peers[i] = __match_any_sync mask of the lanes holding the same key (key = x % 4),
// computed with a partial mask for the upper half-warp.
extern "C" __global__ void shfl_match(const int* x, int* up, int* idx, unsigned* peers, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int v = i < n ? x[i] : 0;
  int u = __shfl_up_sync(0xffffffffu, v, 3);
  int s = __shfl_sync(0xffffffffu, v, (lane * 5) % 32);
  unsigned m;
  if (lane >= 16)
    m = __match_any_sync(0xffff0000u, v % 4);
  else
    m = __match_any_sync(0x0000ffffu, v % 4);
  if (i < n) {
    up[i] = u;
    idx[i] = s;
    peers[i] = m;
  }
}
