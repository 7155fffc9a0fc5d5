// Held-out · h04-outer-flat-divmod · designed limiter: fp32 (issue of integer-divide code)
//
// What: out[r][c] = x[r] + y[c], written as the generic broadcasting kernel of a tensor
// library: the output is a flat array with shape {rows, cols}; x has strides {1, 0} and y
// strides {0, 1}. Each thread takes a global id g from the 2-D grid and handles the VEC = 4 flat
// indices e = g, g + T, g + 2T, g + 3T (T = all threads: coalesced stores); for each, a loop over
// the 2 dimensions, innermost first, peels i_d = rem % shape[d], rem = rem / shape[d] in 64-bit
// signed arithmetic and accumulates both operand offsets. BX = 256, BY = 1: grid
// (cdiv(cols, 1024), rows) = 16 x 16384 blocks at the timed 16384 x 16384.
// Run:  warpbook check 05-outer-add bench/perfmodel/heldout/h04-outer-flat-divmod.cu
//
// Why it should be compute-bound: the GPU has no integer divider. Per element the compiler keeps
// two 64-bit divisions, e / cols (its remainder by a multiply-subtract) and (e / cols) % rows
// (the last quotient is unused and dropped), each a div.s64 or rem.s64 that it guards with a
// test taking a 32-bit path when both operands fit (they do here): a float reciprocal estimate
// (MUFU.RCP with conversions) and IMAD-based corrections, ~20 instructions. With the offset
// arithmetic, branches and the store: ~55 instructions per element, 2^28 x 55 / 32 = 4.6e8 warp
// instructions, ~0.45 ms at 4 issues per clock on 132 SMs at 1.98 GHz, against ~0.27 ms for
// the 1.07 GB written. The loads are cheap: x[r] is one address for (almost) the whole warp and
// y (64 KB) stays in L1/L2. Expected: ~55-65% of speed of light, instruction issue on the
// integer/FMA pipes saturated.
// @tune BX=256
// @tune BY=1
// @tune VEC=4

extern "C" __global__ void outer_add(const float* x, const float* y, float* out, int rows,
                                     int cols) {
  const long long shape[2] = {rows, cols};
  const long long stride_x[2] = {1, 0};
  const long long stride_y[2] = {0, 1};
  const long long threads = (long long)gridDim.x * gridDim.y * BX * BY;
  const long long block = (long long)blockIdx.y * gridDim.x + blockIdx.x;
  const long long g = block * (BX * BY) + threadIdx.y * BX + threadIdx.x;
  const long long total = shape[0] * shape[1];
  for (int k = 0; k < VEC; ++k) {
    const long long e = g + k * threads;
    if (e >= total) break;
    long long rem = e, off_x = 0, off_y = 0;
    for (int d = 1; d >= 0; --d) {
      const long long i = rem % shape[d];
      rem = rem / shape[d];
      off_x += i * stride_x[d];
      off_y += i * stride_y[d];
    }
    out[e] = x[off_x] + y[off_y];
  }
}
