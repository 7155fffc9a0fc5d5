// A per-thread array indexed at run time lives in local memory: each thread fills a 16-int array,
// then out[i] = a[idx[i] & 15] + the sum of the array.
extern "C" __global__ void local_array(const int* idx, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int a[16];
  for (int k = 0; k < 16; ++k) a[k] = k * k + i;
  int s = 0;
  for (int k = 0; k < 16; ++k) s += a[(k * 7 + idx[i]) & 15];
  out[i] = a[idx[i] & 15] + s;
}
