// fault: `%s` of a pointer a gigabyte past the input: an out-of-bounds read by printf
// puzzle: 01-vector-add
// sim: runtime_fault | outside every buffer
// gpu: same
// gpu-sticky: yes
// note: the simulator also names the line (@HERE) and says the read was printf's %s argument; the GPU's fault names no line
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("%s\n", (const char*)(a + (1 << 28))); /*HERE*/
  if (i < n) c[i] = a[i] + b[i];
}
