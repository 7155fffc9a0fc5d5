// fault: bar.sync with a thread count that is not a multiple of 32
// sim: compile_error | ptxas | multiple of warp size | learner.cu:@HERE
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  asm volatile("bar.sync 0, 40;"); /*HERE*/
  if (i < n) c[i] = a[i] + b[i];
}
