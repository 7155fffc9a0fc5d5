// Puzzle 17 variants: A copied as rows [m][k] by cp.async into a ring of STAGES slices of BK,
// B as [k][n]; each thread 8 rows x TNV columns of C. What the solution's header calls "What
// loses". Not a solution: it needs a dynamic shared-memory size, which puzzle 17's launch does
// not pass, so to run one add `shared = "SMEM"` and an SMEM tunable to a copy of the puzzle
// (as puzzle 19's puzzle.toml has) and put the @tune lines and #defines of README.md on top.
#ifndef BK
#define BK 32
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef MINB
#define MINB 1
#endif
#ifndef TNV
#define TNV 16
#endif
#ifndef BNV
#define BNV 256
#endif
#ifndef GROUP
#define GROUP 0
#endif
#ifndef ROWMAP
#define ROWMAP 0
#endif
#define APAD 4
#define TXN (BNV / TNV)
#define NT (TXN * 16)

__device__ __forceinline__ void cp16(float* dst, const float* src, int bytes) {
  unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes));
}

__device__ __forceinline__ int row_of(int ty, int i) {
#if ROWMAP == 0
  return i < 4 ? 4 * ty + i : 64 + 4 * ty + (i - 4);
#else
  return ty + 16 * i;
#endif
}

extern "C" __global__ void __launch_bounds__(NT, MINB)
    sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
          int N, int K) {
  extern __shared__ __align__(16) float smem[];
  float(*As)[128][BK + APAD] = reinterpret_cast<float(*)[128][BK + APAD]>(smem);
  float(*Bs)[BK][BNV] = reinterpret_cast<float(*)[BK][BNV]>(smem + STAGES * 128 * (BK + APAD));
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * TXN + tx;
#if GROUP > 0
  int bx, by;
  {
    const int pid = blockIdx.y * gridDim.x + blockIdx.x;
    const int per_group = GROUP * gridDim.x;
    const int first = (pid / per_group) * GROUP;
    const int gsize = min((int)gridDim.y - first, GROUP);
    by = first + (pid % per_group) % gsize;
    bx = (pid % per_group) / gsize;
  }
  const int bm = by * 128, bn = bx * BNV;
#else
  const int bm = blockIdx.y * 128, bn = blockIdx.x * BNV;
#endif
  const bool vec = ((K | N) & 3) == 0;

  auto issue = [&](int slot, int k0) {
#pragma unroll
    for (int c = tid; c < 128 * BK / 4; c += NT) {
      const int row = c / (BK / 4), kc = (c % (BK / 4)) * 4;
      const int gr = bm + row, gk = k0 + kc;
      float* dst = &As[slot][row][kc];
      if (vec) {
        int bytes = (gr < M && gk < K) ? 16 : 0;
        cp16(dst, bytes ? A + (long long)gr * K + gk : A, bytes);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          dst[j] = (gr < M && gk + j < K) ? A[(long long)gr * K + gk + j] : 0.f;
      }
    }
#pragma unroll
    for (int c = tid; c < BK * BNV / 4; c += NT) {
      const int row = c / (BNV / 4), nc = (c % (BNV / 4)) * 4;
      const int gk = k0 + row, gc = bn + nc;
      float* dst = &Bs[slot][row][nc];
      if (vec) {
        int bytes = (gk < K && gc < N) ? 16 : 0;
        cp16(dst, bytes ? B + (long long)gk * N + gc : B, bytes);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          dst[j] = (gk < K && gc + j < N) ? B[(long long)gk * N + gc + j] : 0.f;
      }
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };

  float acc[8][TNV];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < TNV; ++j) acc[i][j] = 0.f;

  const int steps = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < steps)
      issue(s, s * BK);
    else
      asm volatile("cp.async.commit_group;\n" ::);
  }
  for (int s = 0; s < steps; ++s) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
    __syncthreads();
    const int nxt = s + STAGES - 1;
    if (nxt < steps)
      issue(nxt % STAGES, nxt * BK);
    else
      asm volatile("cp.async.commit_group;\n" ::);
    const int cur = s % STAGES;
#pragma unroll
    for (int k4 = 0; k4 < BK; k4 += 4) {
      float4 a[8];
#pragma unroll
      for (int i = 0; i < 8; ++i)
        a[i] = *reinterpret_cast<const float4*>(&As[cur][row_of(ty, i)][k4]);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        float b[TNV];
#pragma unroll
        for (int h = 0; h < TNV / 4; ++h) {
          float4 v = *reinterpret_cast<const float4*>(&Bs[cur][k4 + kk][4 * TXN * h + 4 * tx]);
          b[4 * h] = v.x, b[4 * h + 1] = v.y, b[4 * h + 2] = v.z, b[4 * h + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const float av = kk == 0 ? a[i].x : kk == 1 ? a[i].y : kk == 2 ? a[i].z : a[i].w;
#pragma unroll
          for (int j = 0; j < TNV; ++j) acc[i][j] = fmaf(av, b[j], acc[i][j]);
        }
      }
    }
  }
  asm volatile("cp.async.wait_group 0;\n" ::);

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    long long r = bm + row_of(ty, i);
    if (r >= M) continue;
#pragma unroll
    for (int h = 0; h < TNV / 4; ++h) {
      int c = bn + 4 * TXN * h + 4 * tx;
      float* p = C + r * N + c;
      if (vec && c + 3 < N) {
        *reinterpret_cast<float4*>(p) =
            make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (c + j < N) p[j] = acc[i][4 * h + j];
      }
    }
  }
}
