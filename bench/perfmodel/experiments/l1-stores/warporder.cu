// In what order an SM's schedulers serve warps that all wait on the memory queue: when each warp
// of an SM finishes the same row walk.
//
// What: B blocks of 256 threads an SM (one wave), every warp walking the same number of lines as
// l1sets.cu does (lanes' lines 256 bytes apart, 4 bytes a step). Each warp's lane 0 notes the
// global timer and its SM when it starts and ends. If the schedulers let the warps that got the
// queue first keep it (oldest first), warps finish one after another over the whole launch; if
// they serve the waiting warps in turn, they all finish together near the end.
// Prints, per B, the spread of the warps' end times on each SM as a share of the launch (the
// median over SMs), and the share of warps done by the time the first quarter of them is.
// Run (on the GPU machine):  nvcc -O3 -arch=sm_90 -o /tmp/warporder warporder.cu && /tmp/warporder
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void walk(const float* x, float* out, unsigned long long* t0, unsigned long long* t1,
                     int* sm, int lines) {
  const long t = long(blockIdx.x) * blockDim.x + threadIdx.x,
             threads = long(gridDim.x) * blockDim.x;
  const long w = t / 32;
  if (threadIdx.x % 32 == 0) {
    t0[w] = now_ns();
    int s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    sm[w] = s;
  }
  float acc = 0;
#pragma unroll 1
  for (int j = 0; j < lines; ++j) {
    const float* p = x + ((long(j) * threads + t) * 2) * 32;
#pragma unroll 1
    for (int i = 0; i < 32; ++i) acc += p[i];
  }
  out[t] = acc;
  __syncwarp();
  if (threadIdx.x % 32 == 0) t1[w] = now_ns();
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("%s, %d SMs\n", prop.name, sms);
  const int lines = 8;
  const long most_threads = long(sms) * 8 * 256;
  float *x, *out;
  unsigned long long *t0, *t1;
  int* sm;
  cudaMalloc(&x, most_threads * lines * 2 * 128);
  cudaMalloc(&out, most_threads * 4);
  cudaMalloc(&t0, most_threads / 32 * 8);
  cudaMalloc(&t1, most_threads / 32 * 8);
  cudaMalloc(&sm, most_threads / 32 * 4);
  cudaMemset(x, 0, most_threads * lines * 2 * 128);
  for (int b : {2, 4, 6, 8}) {
    const int grid = sms * b, warps = grid * 8;
    walk<<<grid, 256>>>(x, out, t0, t1, sm, lines); // warm-up
    walk<<<grid, 256>>>(x, out, t0, t1, sm, lines);
    cudaDeviceSynchronize();
    std::vector<unsigned long long> a(warps), e(warps);
    std::vector<int> s(warps);
    cudaMemcpy(a.data(), t0, warps * 8, cudaMemcpyDeviceToHost);
    cudaMemcpy(e.data(), t1, warps * 8, cudaMemcpyDeviceToHost);
    cudaMemcpy(s.data(), sm, warps * 4, cudaMemcpyDeviceToHost);
    std::vector<double> spread, quarter;
    for (int k = 0; k < sms; ++k) {
      std::vector<unsigned long long> st, en;
      for (int w = 0; w < warps; ++w)
        if (s[w] == k) st.push_back(a[w]), en.push_back(e[w]);
      if (en.size() < 8) continue;
      std::sort(st.begin(), st.end());
      std::sort(en.begin(), en.end());
      const double span = double(en.back() - st.front());
      spread.push_back(double(en.back() - en.front()) / span);
      quarter.push_back(double(en[en.size() / 4] - st.front()) / span);
    }
    std::sort(spread.begin(), spread.end());
    std::sort(quarter.begin(), quarter.end());
    printf(
        "B=%d (%2d warps an SM): warps' end times spread over %4.1f%% of the launch; a quarter of "
        "them done at %4.1f%% of it (medians over %zu SMs)\n",
        b, b * 8, 100 * spread[spread.size() / 2], 100 * quarter[quarter.size() / 2],
        spread.size());
  }
  cudaError_t err = cudaGetLastError();
  printf("%s\n", err == cudaSuccess ? "no error" : cudaGetErrorString(err));
}
