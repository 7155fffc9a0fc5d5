// library: device-side malloc and free
// puzzle: 02-row-sum
// like: solutions/02-row-sum.cu
//
// A row sum whose block keeps its threads' partial sums in a scratch buffer that thread 0 takes
// from the device heap with malloc and hands to the others through shared memory; a tree over the
// buffer, then thread 0 frees it. Device malloc is slow (a global allocator every block waits on)
// and the heap is 8 MB unless the host raises it: this is how it works, not how to write a fast
// row sum. A NULL from malloc (heap full) is handled by summing without the buffer.
// @tune BLOCK=256

extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float* scratch;
  if (threadIdx.x == 0) scratch = (float*)malloc(BLOCK * sizeof(float));
  __syncthreads();
  const float* r = x + (long long)blockIdx.x * cols;
  float s = 0;
  for (int c = threadIdx.x; c < cols; c += BLOCK) s += r[c];
  if (!scratch) { // no heap left: one atomic per thread instead
    if (threadIdx.x == 0) y[blockIdx.x] = 0.0f;
    __syncthreads();
    atomicAdd(&y[blockIdx.x], s);
    return;
  }
  scratch[threadIdx.x] = s;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) scratch[threadIdx.x] += scratch[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    y[blockIdx.x] = scratch[0];
    free(scratch);
  }
}
