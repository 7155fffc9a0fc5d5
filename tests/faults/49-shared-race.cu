// fault: reads another warp's shared element without a barrier
// puzzle: 01-vector-add
// sim: runtime_fault | race
// gpu: passed,wrong_answer |
// note: On a GPU the other warp has usually written already: the answer depends on timing.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s[256];
  int t = threadIdx.x;
  s[t] = a[i < n ? i : 0] + b[i < n ? i : 0];
  int j = i ^ 32;
  if (i < n) {
    if (j < n) c[j] = s[t ^ 32]; /*HERE*/
    else c[i] = s[t];
  }
}
