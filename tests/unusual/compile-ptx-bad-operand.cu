// fault: inline PTX gives an instruction the wrong operand type
// sim: compile_error | ptxas | learner.cu:@HERE
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i] + b[i];
    asm volatile("add.s32 %0, %0, 1;" : "+f"(x)); /*HERE*/
    c[i] = x;
  }
}
