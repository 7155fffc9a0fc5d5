// fault: a 128-element shared array written by 256 threads, so half the writes land in the next array
// puzzle: 01-vector-add
// sim: runtime_fault | wrote s[128] at line @HERE | s, which has 128 elements of 4 bytes | It landed in t[0]
// gpu: wrong_answer,passed |
// gpu-explained: the simulator, same case and inputs: runtime_fault | outside s | landed in t[
// note: On a GPU, s and t lie side by side in the block's shared memory, so s[128..255] is t[0..127]: no fault, only t's values change (compute-sanitizer's memcheck does not flag it either, since the bytes belong to the block). Which answer comes out depends on which warp writes last.
// @tune BLOCK=256
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  __shared__ float s[128];
  __shared__ float t[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < 128) t[threadIdx.x] = b[i < n ? i : 0];
  s[threadIdx.x] = a[i < n ? i : 0]; /*HERE*/
  __syncthreads();
  if (i < n) c[i] = s[threadIdx.x % 128] + t[threadIdx.x % 128];
}
