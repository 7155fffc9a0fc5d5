// fault: reading %laneid, %smid, clock64() and globaltimer
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned lane, sm;
  unsigned long long t;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  long long k = clock64();
  if (i < n) c[i] = a[i] + b[i] + 0.0f * float(lane + sm + (t & 1) + (k & 1));
}
