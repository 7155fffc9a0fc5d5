// fault: a write through a pointer set to nullptr, which NVRTC compiles into a trap
// puzzle: 01-vector-add
// sim: runtime_fault | trap at line @HERE | has no __trap(), assert or asm, so the compiler put this trap there | through a null
// gpu: runtime_fault | trap
// gpu-explained: so the compiler put this trap there | line @HERE
// gpu-sticky: yes
// note: the GPU's trap carries no line; the simulator names it and says why the trap is there
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  float* p = nullptr;
  *p = a[0] + b[0]; /*HERE*/
}
