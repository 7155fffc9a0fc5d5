// fault: cub::DeviceReduce (a host-side algorithm) called from a kernel
// sim: compile_error | device-wide | cub::BlockReduce
// gpu: same
// gpu-sticky: no
#include <cub/cub.cuh>
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, a, c, n);
}
