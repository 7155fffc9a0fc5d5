// fault: a 32-bit byte offset that wraps past 2^32 only at the perf size
// puzzle: 01-vector-add
// sim: passed |
// gpu: wrong_answer | n=67108864
// perf: yes
// note: Right at every correctness size and at the simulator's sim_perf size (n = 65536): only the GPU's perf size (n = 2^26) wraps.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned off = (unsigned)i * 128u; // wraps once i >= 2^25
  if (i < n) c[off / 128u] = a[off / 128u] + b[off / 128u];
}
