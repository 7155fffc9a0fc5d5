// fault: `%s` of 2000 letters with no NUL before them: read and printed to the bound (1024), no further
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  __shared__ char text[4096];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = threadIdx.x; k < 4096; k += blockDim.x) text[k] = k < 2000 ? 'A' + k % 26 : 0;
  __syncthreads();
  if (i == 0) printf("%s\n", text);
  if (i < n) c[i] = a[i] + b[i];
}
