// fault: a stack array indexed past its end, into the next array on the same stack
// puzzle: 01-vector-add
// sim: runtime_fault | element 8 of a local array at line @HERE | which has 8 elements of 4 bytes | past its end
// gpu: wrong_answer,passed |
// note: Both arrays live in the thread's local memory one after the other, so u[8] is v[0] on a GPU: the write is never a fault, it changes v.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float u[8], v[8];
  for (int k = 0; k < 8; ++k) u[k] = 0.0f, v[k] = 0.0f;
  int j = i < n ? i % 9 : 0;
  u[j] = a[i < n ? i : 0]; /*HERE*/
  if (i < n) c[i] = u[i % 8] + v[(i + 3) % 8] + b[i];
}
