// fault: goto and a switch with many cases
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) goto done;
  switch (i % 5) {
  case 0: c[i] = a[i] + b[i]; break;
  case 1: c[i] = b[i] + a[i]; break;
  case 2: c[i] = a[i] + b[i]; break;
  case 3: c[i] = (a[i] + b[i]); break;
  default: c[i] = a[i] + b[i];
  }
done:
  return;
}
