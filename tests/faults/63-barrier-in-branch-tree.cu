// fault: a tree reduction with __syncthreads() inside `if (threadIdx.x < step)`
// puzzle: 02-row-sum
// sim: passed | __syncthreads() at line @HERE let 128 threads of block | had exited without reaching it
// gpu: passed |
// note: It passes on the H200 (threads that exited count as arrived since Volta), but the programming guide makes it undefined; compute-sanitizer's synccheck on the H200 flags divergent threads at the barrier once step < 32. The simulator passes it with a warning naming the barrier.
// @tune BLOCK=256
extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float s[BLOCK];
  const float* r = x + (long long)blockIdx.x * cols;
  float v = 0;
  for (int c = threadIdx.x; c < cols; c += BLOCK) v += r[c];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int step = BLOCK / 2; step > 0; step >>= 1) {
    if (threadIdx.x < step) {
      s[threadIdx.x] += s[threadIdx.x + step];
      __syncthreads(); /*HERE*/
    }
  }
  if (threadIdx.x == 0) y[blockIdx.x] = s[0];
}
