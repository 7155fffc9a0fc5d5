// Warp votes: ballot[w] = __ballot_sync of (x > 0) for warp w, active[w] = __activemask() taken
// inside a branch of the even lanes, counts[w] = __popc of the ballot, all[w] = __all_sync(x > 0)
// and any[w] = __any_sync(x > 100).
extern "C" __global__ void votes(const int* x, unsigned* ballot, unsigned* active, int* counts,
                                 int* all, int* any, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int w = i / 32;
  int v = i < n ? x[i] : 0;
  unsigned b = __ballot_sync(0xffffffffu, v > 0);
  int a = __all_sync(0xffffffffu, v > 0);
  int y = __any_sync(0xffffffffu, v > 100);
  if ((threadIdx.x & 1) == 0) {
    unsigned m = __activemask();
    if ((threadIdx.x & 31) == 0) active[w] = m;
  }
  if ((threadIdx.x & 31) == 0) {
    ballot[w] = b;
    counts[w] = __popc(b);
    all[w] = a;
    any[w] = y;
  }
}
