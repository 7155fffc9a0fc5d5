// fault: one malloc larger than the whole device heap (16 MiB): it returns NULL, and the unchecked write through it faults
// puzzle: 01-vector-add
// sim: runtime_fault |
// gpu: same
// gpu-sticky: yes
// note: the simulator names the line (@HERE) and says the heap is 8 MiB by default
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) {
    float* big = (float*)malloc(16u << 20);
    big[0] = a[0]; /*HERE*/
    free(big);
  }
  if (i < n) c[i] = a[i] + b[i];
}
