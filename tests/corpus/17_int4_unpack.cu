// int4 unpacking: each uint32 holds eight signed 4-bit values (low nibble first); out[8*i + j] =
// float(nibble j of packed[i]) * scale (sign-extended with shifts).
extern "C" __global__ void int4_unpack(const unsigned* packed, float* out, float scale,
                                       int n_words) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_words) return;
  unsigned w = packed[i];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    int v = (int)(w << (28 - 4 * j)) >> 28;
    out[8 * i + j] = v * scale;
  }
}
