// fault: a byte 0xFF in a comment: NVRTC takes it for the end of the file
// sim: compile_error | 0xFF | learner.cu:@HERE
// gpu: same
// gpu-sticky: no
// ÿþ /*HERE*/
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
