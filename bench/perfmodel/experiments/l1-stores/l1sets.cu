// Which lines of global memory share an L1 set: the L1's hit rate against the distance between
// the lines that a warp's lanes walk at once.
//
// What: B blocks of 256 threads on each SM (one wave), each thread walking 4 lines of 128 bytes in
// turn, 4 bytes an iteration (a lane's sector read 8 times in a row, its line 32 times). The 32
// lanes of a warp walk lines S lines apart (S = 1: consecutive lines, as a row sum with a
// 128-byte chunk a thread; S = 2: a 256-byte chunk, a softmax with 64 floats a thread; S = 64:
// rows of 8 KB, a transpose's row per thread). Each SM keeps B x 32 KB of lines in use at once
// whatever S is, so where the hit rate falls with S at a fixed B, the lines land in fewer sets.
// Run (on the GPU machine):  bash run.sh (this program under Nsight Compute: the hit rates)
#include <cstdio>
#include <cuda_runtime.h>

__global__ void walk(const float* x, float* out, int lines, int stride) {
  const long t = long(blockIdx.x) * blockDim.x + threadIdx.x,
             threads = long(gridDim.x) * blockDim.x;
  float s = 0;
#pragma unroll 1
  for (int j = 0; j < lines; ++j) {
    const float* p = x + ((long(j) * threads + t) * stride) * 32; // lane t: line t * S, then on
#pragma unroll 1
    for (int i = 0; i < 32; ++i) s += p[i];
  }
  out[t] = s;
}

int main() {
  const int lines = 4;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("%s, %d SMs\n", prop.name, sms);
  const int strides[] = {1, 2, 4, 8, 16, 32, 64};
  const long most = long(sms) * 8 * 256 * lines * 64 * 32; // floats, at S = 64
  float *x, *out;
  if (cudaMalloc(&x, most * 4) != cudaSuccess) return printf("no memory\n"), 1;
  cudaMalloc(&out, long(sms) * 8 * 256 * 4);
  cudaMemset(x, 0, most * 4);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int b : {4, 6, 8})
    for (int s : strides) {
      float ms = 0;
      cudaEventRecord(e0);
      walk<<<sms * b, 256>>>(x, out, lines, s);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      cudaEventElapsedTime(&ms, e0, e1);
      printf("B=%d S=%2d  %3d KB of lines in use an SM, lanes %5d B apart  %8.1f us\n", b, s,
             b * 32, s * 128, ms * 1e3);
    }
  cudaError_t err = cudaGetLastError();
  printf("%s\n", err == cudaSuccess ? "no error" : cudaGetErrorString(err));
}
