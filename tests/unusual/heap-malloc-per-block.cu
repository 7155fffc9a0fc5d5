// fault: one malloc per block, shared through a __shared__ pointer, freed at the end: well within the heap
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
// perf: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  __shared__ float* scratch;
  if (threadIdx.x == 0) scratch = (float*)malloc(blockDim.x * sizeof(float));
  __syncthreads();
  if (!scratch) return; // never: a block's scratch always fits
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  scratch[threadIdx.x] = i < n ? a[i] + b[i] : 0.0f;
  __syncthreads();
  if (i < n) c[i] = scratch[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) free(scratch);
}
