// fault: a shared index far beyond the block's shared memory
// puzzle: 01-vector-add
// sim: runtime_fault | shared memory | line @HERE
// gpu: runtime_fault | 
// gpu-sticky: yes
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s[32];
  s[(threadIdx.x * 4099) % 32 + (threadIdx.x == 7 ? 1 << 20 : 0)] = 1.0f; /*HERE*/
  __syncthreads();
  if (i < n) c[i] = a[i] + b[i] + 0.0f * s[threadIdx.x % 32];
}
