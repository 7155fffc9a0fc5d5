// fault: printf writes bytes that are not UTF-8 (a lone continuation byte, 0xff, half a character): the attempt is still recorded
// puzzle: 01-vector-add
// sim: passed |
// gpu: same
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("bytes: \xff\xfe \x80 %c%c|%c\n", 0xc3, 0x28, 0xe2);
  if (i < n && i < 4) printf("raw input bytes: %.4s\n", (const char*)&a[i]);
  if (i < n) c[i] = a[i] + b[i];
}
