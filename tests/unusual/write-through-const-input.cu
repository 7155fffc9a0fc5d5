// fault: a kernel that writes its result into an input buffer instead of the output
// sim: wrong_answer
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) const_cast<float*>(a)[i] = a[i] + b[i];
}
