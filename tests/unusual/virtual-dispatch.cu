// fault: a virtual function called on an object built in the kernel
// sim: passed
// gpu: same
// gpu-sticky: no
struct Op {
  __device__ virtual float apply(float x, float y) const { return x * y; }
};
struct Add : Op {
  __device__ float apply(float x, float y) const override { return x + y; }
};
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  Add add;
  const Op* op = &add;
  if (i < n) c[i] = op->apply(a[i], b[i]);
}
