// fault: new/delete of 16 floats per thread: the cases fit the 8 MiB device heap, the perf size does not (a GPU runs over a thousand such blocks at once), new returns NULL and the write through it faults
// puzzle: 01-vector-add
// sim: runtime_fault |
// gpu: same
// gpu-sticky: yes
// perf: yes
// note: the simulator says the heap was full and names the line (@HERE); the GPU reports an illegal address
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float* t = new float[16];
  for (int k = 0; k < 16; ++k) t[k] = a[i] * float(k); /*HERE*/
  c[i] = t[1] + b[i];
  delete[] t;
}
