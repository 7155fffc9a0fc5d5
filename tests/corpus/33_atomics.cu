// Every integer atomic on global memory from many blocks: r[0] += 1, r[1] = min, r[2] = max,
// r[3] = atomicInc wrap at 1000, r[4] = atomicDec wrap at 1000, r[5] |= bit, r[6] &= ~bit,
// r[7] ^= x, r[8] = atomicExch (any value), and a 64-bit add in big[0], float sub in fl[0].
extern "C" __global__ void atomics(const int* x, int* r, unsigned long long* big, float* fl,
                                   int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = x[i];
  atomicAdd(&r[0], 1);
  atomicMin(&r[1], v);
  atomicMax(&r[2], v);
  atomicInc((unsigned*)&r[3], 999u);
  atomicDec((unsigned*)&r[4], 999u);
  atomicOr(&r[5], 1 << (i & 31));
  atomicAnd(&r[6], ~(1 << (i & 15)));
  atomicXor(&r[7], v);
  atomicExch(&r[8], v);
  atomicAdd(&big[0], (unsigned long long)(v & 0xffff) << 20);
  atomicAdd(&fl[0], -0.5f);
}
