// 08 · Dot product: out[0] = a[0] * b[0] + a[1] * b[1] + ... + a[n-1] * b[n-1].
//
// Two kernels run one after the other:
//   dot_partial: min(GRID, cdiv(n, BLOCK)) blocks of BLOCK threads (GRID = 1024, BLOCK = 256).
//                There may be fewer threads than elements: each thread loops with a stride of the
//                whole grid. Each block leaves ONE number, its partial sum, in partial[blockIdx.x].
//   dot_final:   1 block of BLOCK threads adds the `parts` partial sums into out[0].
// `partial` is a workspace of at least 2 * parts floats; nothing else reads it.

extern "C" __global__ void dot_partial(const float* a, const float* b, float* partial, int n) {
  float acc = 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    acc += a[i] * b[i];
  // TODO: acc is this thread's share only. Combine the acc of every thread of the block
  // (shared memory, or warp shuffles) before writing the block's partial sum.
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

extern "C" __global__ void dot_final(const float* partial, float* out, int parts) {
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int k = 0; k < parts; ++k) t += partial[k];
    out[0] = t;
  }
}
