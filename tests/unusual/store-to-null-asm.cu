// fault: inline PTX stores to address 0
// sim: runtime_fault
// gpu: same
// gpu-sticky: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) asm volatile("st.global.u32 [%0], 1;" :: "l"(0ull));
  if (i < n) c[i] = a[i] + b[i];
}
