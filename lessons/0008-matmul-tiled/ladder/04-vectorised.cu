// Lesson 0008, rung 4 · vectorised loads: rung 3 with 16 bytes per load instruction.
//   - Global: each thread fetches one float4 of the A slice (128 x 8) and one of the B slice
//     (8 x 128) per step, instead of four floats of each. Rows of A or B whose length is not a
//     multiple of 4 are not 16-byte aligned: then it reads the four floats one by one.
//   - Shared: the A slice is stored transposed, As[k][m], so a thread's 8 values of A for one k
//     are contiguous: two float4 loads, and two for its 8 values of B. 4 shared loads for 64 FMAs
//     instead of 16. (+4 floats a row of As: the transposed stores would hit one bank 2-way.)
// Thread (tx, ty) still owns rows 8 ty .. 8 ty + 7 and columns 8 tx .. 8 tx + 7.
// Run:  warpbook check 17-tiled-sgemm lessons/0008-matmul-tiled/ladder/04-vectorised.cu
//       warpbook predict 17-tiled-sgemm lessons/0008-matmul-tiled/ladder/04-vectorised.cu
// measured: 3890 us on NVIDIA H100 80GB HBM3
// @tune BM=128
// @tune BN=128
// @tune TM=8
// @tune TN=8

#define BK 8
#if BM != 128 || BN != 128 || TM != 8 || TN != 8
#error "written for BM = BN = 128, TM = TN = 8 (256 threads, one float4 of A and of B each)"
#endif

// One float4 of row p from column c, zeros past n (the row's length) or where the row is out.
__device__ __forceinline__ float4 load4(const float* p, int c, int n, bool row_ok, bool vec) {
  if (vec)
    return row_ok && c < n ? *reinterpret_cast<const float4*>(p + c) : make_float4(0, 0, 0, 0);
  return make_float4(row_ok && c < n ? p[c] : 0.0f, row_ok && c + 1 < n ? p[c + 1] : 0.0f,
                     row_ok && c + 2 < n ? p[c + 2] : 0.0f, row_ok && c + 3 < n ? p[c + 3] : 0.0f);
}

extern "C" __global__ void __launch_bounds__(256)
    sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ __align__(16) float As[BK][BM + 4];
  __shared__ __align__(16) float Bs[BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int a_row = tid / 2, a_k = (tid % 2) * 4;   // A slice: 128 rows of 8, two float4 a row
  const int b_k = tid / 32, b_col = (tid % 32) * 4; // B slice: 8 rows of 128, 32 float4 a row
  const bool a_vec = K % 4 == 0, b_vec = N % 4 == 0;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    const float4 a = load4(A + (long long)(bm + a_row) * K, k0 + a_k, K, bm + a_row < M, a_vec);
    const float4 b = load4(B + (long long)(k0 + b_k) * N, bn + b_col, N, k0 + b_k < K, b_vec);
    As[a_k + 0][a_row] = a.x; // transposed: column k of the slice becomes row k
    As[a_k + 1][a_row] = a.y;
    As[a_k + 2][a_row] = a.z;
    As[a_k + 3][a_row] = a.w;
    *reinterpret_cast<float4*>(&Bs[b_k][b_col]) = b;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[k][8 * ty]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[k][8 * ty + 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[k][8 * tx]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[k][8 * tx + 4]);
      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = bm + 8 * ty + i;
    if (r >= M) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int c = bn + 8 * tx + 4 * h;
      float* p = C + (long long)r * N + c;
      if (b_vec && c + 3 < N) {
        *reinterpret_cast<float4*>(p) =
            make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
      } else {
        for (int j = 0; j < 4; ++j)
          if (c + j < N) p[j] = acc[i][4 * h + j];
      }
    }
  }
}
