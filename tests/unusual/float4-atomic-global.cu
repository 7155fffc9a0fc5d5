// fault: atomicAdd on a float4 in global memory (compute capability 9.0 has it)
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i % 4 == 0 && i + 3 < n) { // four elements at once, the output zeroed and then added to
    float4* c4 = reinterpret_cast<float4*>(c + i);
    *c4 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    atomicAdd(c4, make_float4(a[i] + b[i], a[i + 1] + b[i + 1], a[i + 2] + b[i + 2],
                              a[i + 3] + b[i + 3]));
  } else if (i < n && i >= n / 4 * 4) {
    c[i] = a[i] + b[i];
  }
}
