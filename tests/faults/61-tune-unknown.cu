// fault: @tune WARPS=4: the puzzle has no such tunable
// puzzle: 01-vector-add
// sim: compile_error | learner.cu:5:1: | this puzzle has no tunable 'WARPS' (it has BLOCK, ITEMS)
// gpu: same
// @tune WARPS=4
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
