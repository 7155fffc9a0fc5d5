// fault: indexes by threadIdx.x only: right for one block
// puzzle: 01-vector-add
// sim: wrong_answer | case n=1000 | never written
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
