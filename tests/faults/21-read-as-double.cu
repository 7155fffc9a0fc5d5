// fault: reads the float input as double: past the end for the upper half
// puzzle: 01-vector-add
// sim: runtime_fault | read a[ | past its end | a pointer cast to a wider type
// gpu: wrong_answer,runtime_fault |
// gpu-sticky: maybe
// note: On a GPU the reads past the end land in the guard band, or further on in whatever is mapped there: wrong values, or an illegal address at the larger sizes.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const double* ad = (const double*)a;
  if (i < n) c[i] = (float)ad[i] + b[i]; /*HERE*/
}
