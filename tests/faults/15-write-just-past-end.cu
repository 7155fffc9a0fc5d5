// fault: no bounds guard: writes one element past the end
// puzzle: 01-vector-add
// sim: runtime_fault | wrote c[ | past its end | line @HERE
// gpu: wrong_answer | past the end of c
// gpu-explained: the simulator, same case and inputs: runtime_fault | past its end | line @HERE
// note: On a GPU the write lands in the guard band (mapped memory): seen by the band check, not as a fault.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) c[i] = a[i < n ? i : 0] + b[i < n ? i : 0]; /*HERE*/
}
