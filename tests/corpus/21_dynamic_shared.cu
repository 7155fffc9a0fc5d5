// Dynamic shared memory (extern __shared__): each block reverses its chunk of blockDim.x ints via a
// shared buffer sized at launch.
extern "C" __global__ void reverse_chunks(const int* in, int* out, int n) {
  extern __shared__ int buf[];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  if (i < n) buf[t] = in[i];
  __syncthreads();
  int src = blockDim.x - 1 - t;
  int j = blockIdx.x * blockDim.x + src;
  if (i < n && j < n) out[i] = buf[src];
}
