// Coalesced versus strided copy: out[i] = in[i * stride] for i < n (stride 1 is coalesced; larger
// strides touch more 32-byte sectors per request).
extern "C" __global__ void strided_copy(const float* in, float* out, int n, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[(size_t)i * stride];
}
