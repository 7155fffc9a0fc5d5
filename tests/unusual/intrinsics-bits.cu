// fault: bit intrinsics: __popc, __clz, __brev, __ffs, __byte_perm, __funnelshift_l
// sim: passed
// gpu: same
// gpu-sticky: no
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned u = unsigned(i) * 2654435761u;
    int z = __popc(u) + __clz(u) + __ffs(u) + int(__brev(u) & 1) + int(__byte_perm(u, 0, 0x0123) & 1) + int(__funnelshift_l(u, u, 3) & 1);
    c[i] = a[i] + b[i] + 0.0f * z;
  }
}
