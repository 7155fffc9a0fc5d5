// fault: a kernel that forgets blockIdx: only the first block's elements are right
// sim: wrong_answer
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
