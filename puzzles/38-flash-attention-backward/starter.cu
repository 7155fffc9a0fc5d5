// 38 · FlashAttention-2 backward: dq, dk and dv of o = softmax(q k^T / sqrt(D) + mask) v, from
// q, k, v, the forward's o and lse (log-sum-exp of each row of scores, f32), and dout.
//     s = q k^T / sqrt(D)    p = exp(s - lse)    dv = p^T dout    dp = dout v^T
//     ds = p * (dp - delta)  with delta_i = sum_d dout[i][d] o[i][d]
//     dq = ds k / sqrt(D)    dk = ds^T q / sqrt(D)
// q, o, dout, dq [B, H, Sq, D]; k, v, dk, dv [B, H, Sk, D]; bf16; lse, delta [B, H, Sq] f32;
// D = 128. causal = 1: query i sees keys 0 .. i + Sk - Sq. Three launches (puzzle.toml):
//   attn_bwd_preprocess  cdiv(B H Sq, 8) blocks of 256: delta, and dq_accum cleared;
//   attn_bwd             [cdiv(Sk, BKV), B H] blocks of 2 BKV threads: keys x BKV .. of head y;
//   attn_bwd_dq          cdiv(B H Sq D, 1024) blocks of 256: dq from dq_accum.
// Change the tunables with // @tune BKV=64 (and so on).
#include <cuda_bf16.h>

extern "C" __global__ void attn_bwd_preprocess(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                               const __nv_bfloat16* v, const __nv_bfloat16* o,
                                               const __nv_bfloat16* dout, const float* lse,
                                               __nv_bfloat16* dq, __nv_bfloat16* dk,
                                               __nv_bfloat16* dv, float* dq_accum, float* delta,
                                               int B, int H, int Sq, int Sk, int D, int causal) {
  // dq_accum receives every key block's share of dq: it starts at zero.
  const long long total = (long long)B * H * Sq * D;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x)
    dq_accum[i] = 0.0f;
}

// TODO (speed): one thread per key, every product on the CUDA cores, straight from global
// memory. Bring in the tensor cores: puzzle 22's mma.sync, ldmatrix and cp.async tiles.
extern "C" __global__ void attn_bwd(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                    const __nv_bfloat16* v, const __nv_bfloat16* o,
                                    const __nv_bfloat16* dout, const float* lse, __nv_bfloat16* dq,
                                    __nv_bfloat16* dk, __nv_bfloat16* dv, float* dq_accum,
                                    float* delta, int B, int H, int Sq, int Sk, int D, int causal) {
  const int bkv = blockDim.x / 2;                 // the launch gives 2 BKV threads
  const int j = blockIdx.x * bkv + threadIdx.x; // this thread's key
  if (threadIdx.x >= bkv || j >= Sk) return;
  const long long hq = (long long)blockIdx.y * Sq, hk = (long long)blockIdx.y * Sk;
  const __nv_bfloat16 *Q = q + hq * D, *dO = dout + hq * D;
  const __nv_bfloat16 *Kj = k + (hk + j) * D, *Vj = v + (hk + j) * D;
  const float scale = rsqrtf((float)D);
  float gk[128], gv[128];
  for (int d = 0; d < D; ++d) gk[d] = gv[d] = 0.0f;
  for (int i = causal ? max(0, j - (Sk - Sq)) : 0; i < Sq; ++i) {
    float s = 0.0f, dp = 0.0f;
    for (int d = 0; d < D; ++d) {
      s += __bfloat162float(Q[(long long)i * D + d]) * __bfloat162float(Kj[d]);
      dp += __bfloat162float(dO[(long long)i * D + d]) * __bfloat162float(Vj[d]);
    }
    const float p = __expf(s * scale - lse[hq + i]);
    const float ds = p * dp; // the softmax's gradient
    for (int d = 0; d < D; ++d) {
      gv[d] += p * __bfloat162float(dO[(long long)i * D + d]);
      gk[d] += ds * __bfloat162float(Q[(long long)i * D + d]);
      atomicAdd(&dq_accum[(hq + i) * D + d], ds * __bfloat162float(Kj[d]));
    }
  }
  for (int d = 0; d < D; ++d) {
    dv[(hk + j) * D + d] = __float2bfloat16(gv[d]);
    dk[(hk + j) * D + d] = __float2bfloat16(gk[d] * scale);
  }
}

extern "C" __global__ void attn_bwd_dq(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                       const __nv_bfloat16* v, const __nv_bfloat16* o,
                                       const __nv_bfloat16* dout, const float* lse,
                                       __nv_bfloat16* dq, __nv_bfloat16* dk, __nv_bfloat16* dv,
                                       float* dq_accum, float* delta, int B, int H, int Sq, int Sk,
                                       int D, int causal) {
  const long long total = (long long)B * H * Sq * D;
  const float scale = rsqrtf((float)D);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x)
    dq[i] = __float2bfloat16(dq_accum[i] * scale);
}
