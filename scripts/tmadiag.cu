// Which TMA boxes the GPU takes, and what a TMA store writes: 40 boxes (f32, bf16, 1-D and 2-D,
// each swizzle, inside, across and outside the tensor's edges, on 16 bytes and off), each loaded
// or stored by one thread in its own process, so that a box the GPU traps on loses only its own
// case. A load prints whether its mbarrier completed and whether its bytes match the tensor's,
// element by element with zeros outside; a store prints the bytes of the first two rows it wrote.
// docs/gpu-tests.md says what an H100 answered and which rules the simulator takes from it.
// Run on the GPU machine:
//   nvcc -O2 -arch=sm_90a scripts/tmadiag.cu -lcuda -o /tmp/tmadiag && /tmp/tmadiag
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

__device__ unsigned smem(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
struct TMap {
  CUtensorMap m;
}; // CUtensorMap is 64-byte aligned already

extern "C" __global__ void tma_load(const __grid_constant__ TMap tm, unsigned char* out, int bytes,
                                    int c0, int c1, int rank, int* status) {
  __shared__ __align__(1024) unsigned char box[16384];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)),
                 "r"(bytes)
                 : "memory");
    if (rank == 1)
      asm volatile(
          "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
          " [%0], [%1, {%2}], [%3];" ::"r"(smem(box)),
          "l"(&tm), "r"(c0), "r"(smem(&bar))
          : "memory");
    else
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
          " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem(box)),
          "l"(&tm), "r"(c0), "r"(c1), "r"(smem(&bar))
          : "memory");
  }
  unsigned ok = 0;
  for (int i = 0; i < 2000 && !ok; ++i)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3; "
                 "selp.u32 %0, 1, 0, p; }"
                 : "=r"(ok)
                 : "r"(smem(&bar)), "r"(0), "r"(100000)
                 : "memory");
  if (threadIdx.x == 0) *status = ok ? 1 : 2;
  for (int i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = box[i];
}

extern "C" __global__ void tma_store(const __grid_constant__ TMap tm, const unsigned char* in,
                                     int bytes, int c0, int c1, int rank) {
  __shared__ __align__(1024) unsigned char box[16384];
  for (int i = threadIdx.x; i < bytes; i += blockDim.x) box[i] = in[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    if (rank == 1)
      asm volatile(
          "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%1}], [%2];" ::"l"(&tm),
          "r"(c0), "r"(smem(box))
          : "memory");
    else
      asm volatile(
          "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
              &tm),
          "r"(c0), "r"(c1), "r"(smem(box))
          : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

struct Case {
  const char* mode;
  int es;
  unsigned long long d0, d1, pitch;
  unsigned b0, b1;
  int swz; // 0 none, 1 32B, 2 64B, 3 128B
  int c0, c1;
};

static int run_case(const Case& c) {
  const int rank = c.d1 ? 2 : 1;
  const size_t gbytes = rank == 2 ? c.pitch * c.d1 : c.d0 * c.es;
  unsigned char *g, *buf;
  int* st;
  cudaMalloc(&g, gbytes + 4096);
  cudaMalloc(&buf, 16384);
  cudaMalloc(&st, 4);
  std::vector<unsigned char> host(gbytes);
  for (size_t i = 0; i < gbytes; ++i) host[i] = (unsigned char)(1 + (i * 37 + i / 251) % 255);
  const bool load = !strcmp(c.mode, "load");
  if (!load) memset(host.data(), 0x77, gbytes);
  cudaMemcpy(g, host.data(), gbytes, cudaMemcpyHostToDevice);
  TMap tm;
  cuuint64_t dims[2] = {c.d0, c.d1}, strides[1] = {c.pitch};
  cuuint32_t box[2] = {c.b0, c.b1}, es[2] = {1, 1};
  CUtensorMapDataType dt = c.es == 4   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                           : c.es == 2 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                       : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  CUresult e =
      cuTensorMapEncodeTiled(&tm.m, dt, rank, g, dims, strides, box, es,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CUtensorMapSwizzle(c.swz),
                             CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (e != CUDA_SUCCESS) {
    const char* s = "";
    cuGetErrorString(e, &s);
    printf("encode failed: %s", s);
    return 0;
  }
  const int bytes = int(c.b0 * (rank == 2 ? c.b1 : 1) * c.es);
  if (load) {
    tma_load<<<1, 128>>>(tm, buf, bytes, c.c0, c.c1, rank, st);
  } else {
    std::vector<unsigned char> in(bytes, 0x11);
    cudaMemcpy(buf, in.data(), bytes, cudaMemcpyHostToDevice);
    tma_store<<<1, 128>>>(tm, buf, bytes, c.c0, c.c1, rank);
  }
  cudaError_t r = cudaDeviceSynchronize();
  if (r != cudaSuccess) {
    printf("FAULT %s", cudaGetErrorName(r));
    return 0;
  }
  if (load) {
    int s = 0;
    cudaMemcpy(&s, st, 4, cudaMemcpyDeviceToHost);
    std::vector<unsigned char> out(bytes);
    cudaMemcpy(out.data(), buf, bytes, cudaMemcpyDeviceToHost);
    // Expected (no swizzle only; with a swizzle just count zero bytes).
    int zeros = 0, wrong = 0, first_wrong = -1;
    for (int i = 0; i < bytes; ++i) zeros += out[i] == 0;
    if (c.swz == 0) {
      const int rowb = int(c.b0) * c.es;
      for (int i = 0; i < bytes; ++i) {
        long long r_ = i / rowb, x = (i % rowb) / c.es + c.c0, y = r_ + (rank == 2 ? c.c1 : 0);
        bool in = x >= 0 && x < (long long)c.d0 && (rank == 1 || (y >= 0 && y < (long long)c.d1));
        unsigned char want = in ? host[(rank == 2 ? y * c.pitch : 0) + x * c.es + (i % c.es)] : 0;
        if (out[i] != want && !wrong++) first_wrong = i;
      }
    }
    printf("%s; %d zero bytes of %d%s", s == 1 ? "complete" : "NO COMPLETE_TX", zeros, bytes,
           c.swz ? ""
                 : (wrong ? (" WRONG from byte " + std::to_string(first_wrong)).c_str()
                          : " matches the per-element clip"));
  } else {
    std::vector<unsigned char> after(gbytes);
    cudaMemcpy(after.data(), g, gbytes, cudaMemcpyDeviceToHost);
    const long long rows = rank == 2 ? (long long)c.d1 : 1, pitch = rank == 2 ? c.pitch : gbytes;
    std::string w;
    int shown = 0;
    for (long long y = 0; y < rows; ++y) {
      long long lo = -1, hi = -1;
      for (long long x = 0; x < pitch; ++x)
        if (after[y * pitch + x] != 0x77) {
          if (lo < 0) lo = x;
          hi = x;
        }
      if (lo >= 0 && shown++ < 2)
        w += " row " + std::to_string(y) + ": bytes " + std::to_string(lo) + ".." +
             std::to_string(hi);
    }
    printf("%d rows written;%s", shown, w.c_str());
  }
  return 0;
}

int main() {
  const Case cases[] = {
      // f32 37 x 19, rows of 160 B, box 16 x 8, no swizzle
      {"load", 4, 37, 19, 160, 16, 8, 0, 8, 5},
      {"load", 4, 37, 19, 160, 16, 8, 0, 4, 0},
      {"load", 4, 37, 19, 160, 16, 8, 0, 1, 0},
      {"load", 4, 37, 19, 160, 16, 8, 0, 2, 2},
      {"load", 4, 37, 19, 160, 16, 8, 0, 28, 0},
      {"load", 4, 37, 19, 160, 16, 8, 0, 30, 0},
      {"load", 4, 37, 19, 160, 16, 8, 0, 32, 0},
      {"load", 4, 37, 19, 160, 16, 8, 0, 0, 15},
      {"load", 4, 37, 19, 160, 16, 8, 0, 30, 15},
      {"load", 4, 37, 19, 160, 16, 8, 0, -4, 0},
      {"load", 4, 37, 19, 160, 16, 8, 0, -5, 0},
      {"load", 4, 37, 19, 160, 16, 8, 0, 0, -3},
      {"load", 4, 37, 19, 160, 16, 8, 0, -5, -3},
      {"load", 4, 37, 19, 160, 16, 8, 0, 40, 0},
      // rows exactly 40 floats
      {"load", 4, 40, 19, 160, 16, 8, 0, 30, 0},
      {"load", 4, 40, 19, 160, 16, 8, 0, 32, 0},
      // box 32 x 8 f32 with and without the 128B swizzle
      {"load", 4, 37, 19, 160, 32, 8, 3, 30, 15},
      {"load", 4, 37, 19, 160, 32, 8, 3, 1, 0},
      {"load", 4, 37, 19, 160, 32, 8, 0, 30, 15},
      {"load", 4, 37, 19, 160, 32, 8, 0, 1, 0},
      {"load", 4, 37, 19, 160, 8, 8, 1, 1, 0},
      // bf16 100 x 30, rows of 208 B, box 64 x 16
      {"load", 2, 100, 30, 208, 64, 16, 0, 8, 2},
      {"load", 2, 100, 30, 208, 64, 16, 0, 70, 20},
      {"load", 2, 100, 30, 208, 64, 16, 0, 72, 20},
      {"load", 2, 100, 30, 208, 64, 16, 3, 70, 20},
      {"load", 2, 100, 30, 208, 64, 16, 3, 100, 30},
      // 1-D
      {"load", 4, 1000, 0, 0, 64, 1, 0, 960, 0},
      {"load", 4, 1000, 0, 0, 64, 1, 0, 961, 0},
      {"load", 4, 1000, 0, 0, 64, 1, 0, 3, 0},
      // stores
      {"store", 2, 100, 30, 208, 64, 16, 0, 8, 2},
      {"store", 2, 100, 30, 208, 64, 16, 0, 1, 2},
      {"store", 2, 100, 30, 208, 64, 16, 0, 70, 20},
      {"store", 2, 100, 30, 208, 64, 16, 0, 72, 20},
      {"store", 2, 100, 30, 256, 64, 16, 0, 70, 20},
      {"store", 2, 100, 30, 208, 64, 16, 3, 70, 20},
      {"store", 2, 70, 30, 144, 64, 16, 0, 8, 20},
      {"store", 4, 70, 19, 288, 32, 8, 0, 64, 16},
      {"store", 4, 37, 19, 160, 16, 8, 0, 30, 15},
      {"store", 4, 37, 19, 160, 16, 8, 0, 28, 15},
      {"store", 4, 37, 19, 160, 16, 8, 0, 1, 1},
  };
  for (const Case& c : cases) {
    printf("%-5s es%d %4llux%-3llu pitch %3llu box %2ux%-2u swz%d at (%4d,%3d): ", c.mode, c.es,
           c.d0, c.d1, c.pitch, c.b0, c.b1, c.swz, c.c0, c.c1);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
      alarm(20);
      run_case(c);
      printf("\n");
      fflush(stdout);
      _exit(0);
    }
    int st = 0;
    waitpid(p, &st, 0);
    if (!WIFEXITED(st)) printf("child died (signal %d)\n", WTERMSIG(st));
  }
}
