// Do a kernel's global stores and its shared memory take room in the L1 from its loads?
//
// What: B blocks of 256 threads on each SM (one wave: 132 x B blocks, all resident at once), each
// thread walking its own run of L lines of 128 bytes, 4 bytes an iteration, as a first attempt's
// per-thread row walk does (a lane's sector is read 8 times in a row, its line 32 times). So each
// SM keeps B x 8 warps x 32 lines = B x 32 KB of lines in use; at B = 8, 256 KB, the H100's and
// H200's whole L1 with no shared memory. Three forms, each at B = 4 .. 8:
//   loads   only the walk (one store a thread at the end)
//   stores  the walk plus, every iteration, one coalesced store a warp (a new 128-byte line of a
//           second buffer each time: what a transpose's writes do)
//   shared  the walk with 8 KB of dynamic shared memory a block (the driver then carves shared
//           memory out of the L1)
// Prints each launch's time; under Nsight Compute (`run.sh`) its loads' L1 hit rate.
// Run (on the GPU machine):  nvcc -O3 -arch=sm_90 -o /tmp/l1stores l1stores.cu && /tmp/l1stores
#include <cstdio>
#include <cuda_runtime.h>

__global__ void walk(const float* x, float* y, float* out, int lines, int store) {
  extern __shared__ float pad[];
  const long t = long(blockIdx.x) * blockDim.x + threadIdx.x,
             threads = long(gridDim.x) * blockDim.x;
  const float* p = x + t * lines * 32;
  float s = 0;
#pragma unroll 1
  for (int i = 0; i < lines * 32; ++i) {
    s += p[i];
    if (store) y[long(i) * threads + t] = s; // lane t of the warp: consecutive words, one line
  }
  if (s == 12345.f) pad[threadIdx.x] = s; // keeps the shared memory allocated
  out[t] = s;
}

int main(int argc, char** argv) {
  const int lines = 16; // each thread's run: 2 KB, so each SM streams B x 8 x 32 x 16 lines
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("%s, %d SMs\n", prop.name, sms);
  const long most = long(sms) * 8 * 256 * lines * 32;
  float *x, *y, *out;
  cudaMalloc(&x, most * 4);
  cudaMalloc(&y, most * 4);
  cudaMalloc(&out, long(sms) * 8 * 256 * 4);
  cudaMemset(x, 0, most * 4);
  cudaFuncSetAttribute(walk, cudaFuncAttributeMaxDynamicSharedMemorySize, 8192);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  const char* names[3] = {"loads", "stores", "shared"};
  for (int form = 0; form < 3; ++form)
    for (int b = 4; b <= 8; ++b) {
      const int grid = sms * b, smem = form == 2 ? 8192 : 0;
      float best = 1e30f;
      for (int r = 0; r < (argc > 1 ? 1 : 5); ++r) { // "once": one launch each, for Nsight
        cudaEventRecord(e0);
        walk<<<grid, 256, smem>>>(x, y, out, lines, form == 1);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        best = ms < best ? ms : best;
      }
      printf("%s B=%d  %3d KB of lines in use an SM  %8.1f us\n", names[form], b, b * 32,
             best * 1e3);
    }
  cudaError_t err = cudaGetLastError();
  printf("%s\n", err == cudaSuccess ? "no error" : cudaGetErrorString(err));
}
