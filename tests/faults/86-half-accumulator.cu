// fault: a row sum whose per-thread partial sums are kept in __half: each add rounds to 11 bits
// puzzle: 02-row-sum
// sim: wrong_answer | near miss | accumulated rounding | a tree | a wider accumulator
// gpu: wrong_answer | near miss | accumulated rounding
// note: Nothing is out of place: every element is close to its value, only too far for the tolerance. Summing in float fixes it.
#include <cuda_fp16.h>
extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
  __shared__ float part[BLOCK];
  const float* row = x + (long long)blockIdx.x * cols;
  __half acc = __float2half(0.0f);
  for (int c = threadIdx.x; c < cols; c += BLOCK) acc = __hadd(acc, __float2half(row[c])); /*HERE*/
  part[threadIdx.x] = __half2float(acc);
  __syncthreads();
  for (int step = BLOCK / 2; step > 0; step >>= 1) {
    if (threadIdx.x < step) part[threadIdx.x] += part[threadIdx.x + step];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = part[0];
}
