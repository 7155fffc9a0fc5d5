// fault: asm("brkpt;") in one thread: with no debugger attached it stops the kernel, as a trap does
// puzzle: 01-vector-add
// sim: runtime_fault | trap
// gpu: same
// gpu-sticky: yes
// note: the simulator names the line (@HERE) and the breakpoint; the GPU's fault names neither
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == n / 2) asm volatile("brkpt;"); /*HERE*/
  if (i < n) c[i] = a[i] + b[i];
}
