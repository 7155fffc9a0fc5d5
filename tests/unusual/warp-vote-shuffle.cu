// fault: warp votes and shuffles with the full mask
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool in = i < n;
  unsigned m = __ballot_sync(0xffffffffu, in);
  float x = in ? a[i] : 0.0f;
  float y = __shfl_sync(0xffffffffu, x, threadIdx.x % 32);
  if (in && __any_sync(0xffffffffu, in) && m) c[i] = y + b[i];
}
