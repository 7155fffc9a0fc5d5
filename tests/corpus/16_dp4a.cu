// int8 dot products with __dp4a: out[i] = sum over k of a[i][k] * b[k] for rows of 4*K int8 values
// packed in ints, accumulated in int32; plus the unsigned __dp2a_lo variant into out2.
extern "C" __global__ void int8_dot(const int* a, const int* b, int* out, unsigned* out2, int rows,
                                    int k4) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  int acc = 0;
  unsigned acc2 = 0;
  for (int k = 0; k < k4; ++k) {
    acc = __dp4a(a[r * k4 + k], b[k], acc);
    acc2 = __dp2a_lo((unsigned)a[r * k4 + k], (unsigned)b[k], acc2);
  }
  out[r] = acc;
  out2[r] = acc2;
}
