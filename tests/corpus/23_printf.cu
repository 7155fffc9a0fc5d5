// printf from a kernel: thread 0 of each block prints its block index, a float, a string and a
// 64-bit value.
extern "C" __global__ void hello(int tag) {
  if (threadIdx.x == 0)
    printf("block %d of %d: tag=%d x=%.2f %s %lld\n", blockIdx.x, gridDim.x, tag, 1.5f * blockIdx.x,
           "ok", 1LL << 40);
}
