// fault: a kernel launch (<<<...>>>) inside the learner's file
// sim: compile_error | only device code
// gpu: same
// gpu-sticky: no
__global__ void child(float* c) { c[0] = 0; }
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) child<<<1, 1>>>(c);
  if (i < n) c[i] = a[i] + b[i];
}
