// fault: the kernel does nothing
// puzzle: 01-vector-add
// sim: wrong_answer | never written
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
}
