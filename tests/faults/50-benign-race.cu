// fault: every thread writes a different value to s[0]; the value is then multiplied by 0
// puzzle: 01-vector-add
// sim: runtime_fault | race
// gpu: passed |
// note: A write-write race whose result does not matter: a GPU cannot see it and passes.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s[1];
  s[0] = a[i < n ? i : 0]; /*HERE*/
  __syncthreads();
  if (i < n) c[i] = a[i] + b[i] + 0.0f * s[0];
}
