// fault: __syncthreads() in both arms of a branch: two different barriers
// puzzle: 01-vector-add
// sim: runtime_fault | deadlock
// gpu: passed,wrong_answer,runtime_fault |
// gpu-sticky: maybe
// note: Since Volta a GPU counts arrivals at barrier 0 wherever they come from, so this usually completes: undefined behaviour a GPU does not report.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float s[256];
  int t = threadIdx.x;
  if (t < 128) {
    s[t] = a[i < n ? i : 0];
    __syncthreads(); /*HERE*/
    if (i < n) c[i] = s[t] + b[i];
  } else {
    s[t] = b[i < n ? i : 0];
    __syncthreads();
    if (i < n) c[i] = a[i] + s[t];
  }
}
