// fault: an integer division by zero does not trap: it gives garbage
// puzzle: 01-vector-add
// sim: wrong_answer | are wrong
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int z = a[i < n ? i : 0] > 5.0f; // always 0
  if (i < n) c[i] = a[i] + b[i] + (float)(1000 / z);
}
