// fault: reads one element past a shared array
// puzzle: 01-vector-add
// sim: runtime_fault | read shared memory | past the end
// gpu: passed,wrong_answer,runtime_fault |
// gpu-sticky: maybe
// note: A GPU reads whatever lies past the array (0 * finite is 0): not visible.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s[256];
  s[threadIdx.x] = a[i < n ? i : 0];
  __syncthreads();
  if (i < n) c[i] = a[i] + b[i] + 0.0f * s[threadIdx.x + 1]; /*HERE*/
}
