// fault: a 32-element shared array written by 256 threads
// puzzle: 01-vector-add
// sim: runtime_fault | shared memory | the last array is s
// gpu: runtime_fault,wrong_answer,passed |
// gpu-sticky: maybe
// note: A GPU rounds the block's shared window up, so a write just past a small array may hit memory the block owns: not reliably visible.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s[32];
  s[threadIdx.x] = a[i < n ? i : 0]; /*HERE*/
  __syncthreads();
  if (i < n) c[i] = a[i] + b[i] + 0.0f * s[threadIdx.x % 32];
}
