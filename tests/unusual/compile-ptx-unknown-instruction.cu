// fault: inline PTX names an instruction that does not exist
// sim: compile_error | ptxas | frobnicate | learner.cu:@HERE
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i] + b[i];
    asm volatile("frobnicate.f32 %0, %0;" : "+f"(x)); /*HERE*/
    c[i] = x;
  }
}
