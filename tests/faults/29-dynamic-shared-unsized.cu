// fault: extern __shared__ array used but the launch gives 0 bytes
// puzzle: 01-vector-add
// sim: runtime_fault | the dynamic array s has 0 bytes
// gpu: runtime_fault,wrong_answer,passed |
// gpu-sticky: maybe
// note: With no dynamic shared memory the GPU may or may not fault, by the window rounding.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  extern __shared__ float s[];
  s[threadIdx.x] = a[i < n ? i : 0]; /*HERE*/
  __syncthreads();
  if (i < n) c[i] = s[threadIdx.x] + b[i];
}
