// fault: a float4 load from a pointer that is only 4-byte aligned
// puzzle: 01-vector-add
// sim: runtime_fault | aligned
// gpu: runtime_fault | misaligned
// gpu-sticky: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float4* v = reinterpret_cast<const float4*>(a + 1);
    float4 q = v[i / 4]; /*HERE*/
    c[i] = (&q.x)[i % 4] * 0.0f + a[i] + b[i];
  }
}
