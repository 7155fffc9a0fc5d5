// Reference: the gradient's definition, in double, one thread per key and one per query row.
// attn_bwd, block (x, y) of head y: thread t < BKV takes key j = x * BKV + t and walks every query
// i that sees it: s = q_i . k_j / sqrt(D), p = exp(s - lse_i), dp = dout_i . v_j,
// delta_i = dout_i . o_i, ds = p (dp - delta_i); dv_j += p dout_i and dk_j += ds q_i / sqrt(D).
// Thread BKV + t takes query rows i = x * BKV + t, + gridDim.x * BKV, ... and walks the keys it
// sees: dq_i = sum over j of ds_ij k_j / sqrt(D). Each output is rounded once to bf16. BKV is
// taken from the launch (blockDim.x / 2), so the file needs no tunable. The other
// two kernels and both workspaces are unused.
#include <cuda_bf16.h>

__device__ double dot(const __nv_bfloat16* a, const __nv_bfloat16* b, int D) {
  double s = 0;
  for (int d = 0; d < D; ++d) s += (double)__bfloat162float(a[d]) * (double)__bfloat162float(b[d]);
  return s;
}

// Query i sees key j (causal: query i is position i + Sk - Sq).
__device__ bool visible(int i, int j, int Sq, int Sk, int causal) {
  return !causal || j <= i + Sk - Sq;
}

// ds_ij = p_ij (dp_ij - delta_i), and p_ij itself.
__device__ double grad_s(const __nv_bfloat16* qi, const __nv_bfloat16* kj, const __nv_bfloat16* vj,
                         const __nv_bfloat16* oi, const __nv_bfloat16* doi, float lse_i, int D,
                         double* p_out) {
  const double p = exp(dot(qi, kj, D) / sqrt((double)D) - (double)lse_i);
  *p_out = p;
  return p * (dot(doi, vj, D) - dot(doi, oi, D));
}

extern "C" __global__ void attn_bwd_preprocess(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                               const __nv_bfloat16* v, const __nv_bfloat16* o,
                                               const __nv_bfloat16* dout, const float* lse,
                                               __nv_bfloat16* dq, __nv_bfloat16* dk,
                                               __nv_bfloat16* dv, float* dq_accum, float* delta,
                                               int B, int H, int Sq, int Sk, int D, int causal) {}

extern "C" __global__ void attn_bwd(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                    const __nv_bfloat16* v, const __nv_bfloat16* o,
                                    const __nv_bfloat16* dout, const float* lse, __nv_bfloat16* dq,
                                    __nv_bfloat16* dk, __nv_bfloat16* dv, float* dq_accum,
                                    float* delta, int B, int H, int Sq, int Sk, int D, int causal) {
  const long long hq = (long long)blockIdx.y * Sq, hk = (long long)blockIdx.y * Sk;
  const __nv_bfloat16 *Q = q + hq * D, *O = o + hq * D, *dO = dout + hq * D;
  const __nv_bfloat16 *K = k + hk * D, *V = v + hk * D;
  const float* L = lse + hq;
  const double scale = 1.0 / sqrt((double)D);
  const int t = threadIdx.x, nk = blockDim.x / 2; // BKV: the launch gives 2 BKV threads
  double acc[2][128]; // D <= 128: this thread's sums, one per output column
  if (t < nk) {
    const int j = blockIdx.x * nk + t;
    if (j >= Sk) return;
    for (int d = 0; d < D; ++d) acc[0][d] = acc[1][d] = 0;
    for (int i = 0; i < Sq; ++i) {
      if (!visible(i, j, Sq, Sk, causal)) continue;
      double p;
      const double ds = grad_s(Q + (long long)i * D, K + (long long)j * D, V + (long long)j * D,
                               O + (long long)i * D, dO + (long long)i * D, L[i], D, &p);
      for (int d = 0; d < D; ++d) {
        acc[0][d] += p * (double)__bfloat162float(dO[(long long)i * D + d]);
        acc[1][d] += ds * (double)__bfloat162float(Q[(long long)i * D + d]);
      }
    }
    for (int d = 0; d < D; ++d) {
      dv[(hk + j) * D + d] = __double2bfloat16(acc[0][d]);
      dk[(hk + j) * D + d] = __double2bfloat16(acc[1][d] * scale);
    }
  } else {
    for (int i = blockIdx.x * nk + (t - nk); i < Sq; i += gridDim.x * nk) {
      for (int d = 0; d < D; ++d) acc[0][d] = 0;
      for (int j = 0; j < Sk; ++j) {
        if (!visible(i, j, Sq, Sk, causal)) continue;
        double p;
        const double ds = grad_s(Q + (long long)i * D, K + (long long)j * D, V + (long long)j * D,
                                 O + (long long)i * D, dO + (long long)i * D, L[i], D, &p);
        for (int d = 0; d < D; ++d) acc[0][d] += ds * (double)__bfloat162float(K[(long long)j * D + d]);
      }
      for (int d = 0; d < D; ++d) dq[(hq + i) * D + d] = __double2bfloat16(acc[0][d] * scale);
    }
  }
}

extern "C" __global__ void attn_bwd_dq(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                       const __nv_bfloat16* v, const __nv_bfloat16* o,
                                       const __nv_bfloat16* dout, const float* lse,
                                       __nv_bfloat16* dq, __nv_bfloat16* dk, __nv_bfloat16* dv,
                                       float* dq_accum, float* delta, int B, int H, int Sq, int Sk,
                                       int D, int causal) {}
