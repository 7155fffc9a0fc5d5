// Integer bit operations on u32 inputs: out[8*i + ...] = popc, clz, brev, ffs, bfe (bits 3..10),
// byte_perm (prmt), mulhi, funnel shift (shf) and a 64-bit multiply-high into wide[i].
extern "C" __global__ void bit_ops(const unsigned* x, const unsigned* y, unsigned* out,
                                   unsigned long long* wide, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = x[i], b = y[i];
  out[8 * i + 0] = __popc(a);
  out[8 * i + 1] = __clz(a);
  out[8 * i + 2] = __brev(a);
  out[8 * i + 3] = __ffs(a);
  out[8 * i + 4] = (a >> 3) & 0xff;
  out[8 * i + 5] = __byte_perm(a, b, 0x5140);
  out[8 * i + 6] = __umulhi(a, b);
  out[8 * i + 7] = __funnelshift_l(a, b, b & 31);
  wide[i] = __umul64hi((unsigned long long)a * b + 12345ull, 0x9e3779b97f4a7c15ull) ^
            ((unsigned long long)a << 32 | b);
}
