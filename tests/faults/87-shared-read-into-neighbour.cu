// fault: a neighbour sum that reads one past its shared array: the last thread reads the next array's first element
// puzzle: 01-vector-add
// sim: runtime_fault | read xs[64] at line @HERE | xs, which has 64 elements of 4 bytes | It read ys[0]
// gpu: wrong_answer,passed |
// note: On a GPU xs[64] is ys[0] (the two arrays lie side by side in the block's shared memory), so the last thread of every block silently adds the wrong value; no tool reports a fault.
// @tune BLOCK=64
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  __shared__ float xs[64];
  __shared__ float ys[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  xs[threadIdx.x] = a[i < n ? i : 0];
  ys[threadIdx.x] = b[i < n ? i : 0];
  __syncthreads();
  float next = xs[threadIdx.x + 1]; /*HERE*/
  if (i < n) c[i] = xs[threadIdx.x] + ys[threadIdx.x] + 0.0f * next;
}
