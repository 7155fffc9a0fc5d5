// Solution · 42 top-p (nucleus) sampling without sorting
//
// What: one block per row, no sort, no candidate list. The nucleus is "every token heavier than a
// weight w, and the first q tokens equal to w"; w is found by a radix select on the weight's bits,
// driven by MASS instead of counts. Weights are >= 0, so their f32 bits order like unsigned
// integers, and bits 30..0 are the whole key. Pass 1 adds each weight into one of 2048 bins by its
// bits 30..20 (in shared memory) and finds, from the top bin down, the bin where the running mass
// reaches p * M (M is the sum of all bins). Pass 2 does the same with bits 19..10 for the weights
// of that bin, and keeps each sub-bin's smallest and largest key: when the chosen sub-bin holds a
// single weight, that is w; otherwise pass 3 splits it by bits 9..0. Either way w and the mass S
// of everything heavier are then exact, and q is the smallest q >= 1 with S + q w >= p M. The next
// pass cuts the row into steps of STEP tokens and adds, per step, the mass heavier than w and the
// count of tokens equal to it. One warp turns those into running nucleus masses (the first q equal
// tokens, in column order, are in), finds the step where the running mass passes x = u Mn, and
// the last pass reads only that step again: a block-wide scan in column order picks the token.
// Run:  warpbook check 42-top-p-sampling solutions/42-top-p-sampling.cu
//       warpbook predict 42-top-p-sampling solutions/42-top-p-sampling.cu --gpu h100-sxm
//
// Exactness: every sum here is a partial sum of the row's weights, which the puzzle makes exact in
// f32 (integers, or multiples of one power of two, below 2^24 in all), so the atomics and shuffles
// may add in any order and the comparisons with p M and u Mn decide as the reference's do. The
// only rounded operations are the two the statement names (p * M and u * Mn). A test is always
// "exact sum >= target": target - S would round, S + mass does not.
//
// Why this shape: FlashInfer's sorting-free top-p sampler guesses pivots and re-reads the row
// until the pivot's mass is close enough; a radix select on the bits needs no guess and ends after
// three levels at most, whatever the weights, ties included (a run of equal weights is one key: q
// counts into it). The sampling order is the column order, as FlashInfer's, so the pick is a
// prefix sum in the order the row is stored, not in rank order (which would need the sort).
//
// Napkin maths: 256 rows x 128256 x 4 B = 131 MB. One read at the H100's 3.35 TB/s is 39 us: the
// speed of light. This kernel reads each row three times (four when pass 3 is needed) and one
// step more. The 256 rows are all in flight at once (2 blocks of 512 threads per SM: one wave),
// 131 MB against a 50 MB L2, so every pass comes mostly from DRAM: 3 x 39 = 118 us is this
// design's floor, about a third of the speed of light. Above the floor, the cost is pass 1's
// shared-memory atomics, one per nonzero weight: a row's weights bunch up in a few bins (here up
// to 9 lanes of a warp on one address), so the lanes that share a bin add their sum once
// (__match_any_sync, then shuffles). `warpbook predict` puts this file at 221 us on the H100
// (19% of the speed of light; the DRAM passes 128 us of it) and 202 us on the H200 (*predicted*;
// the `// measured:` lines are the GPU's).
//
// What loses (predicted on the H100 by `warpbook predict`, not measured):
//   - One block of 1024 threads per row, scalar loads, no early exit, an atomic per weight: 367 us
//     (the 1024-thread blocks fit once per SM by registers: 256 rows in two waves).
//   - 16-byte loads, 2 blocks of 512 per SM, the early exit, an atomic per weight: 269 us; the
//     load/store unit (the atomics, up to 9 lanes on one address) is 81% busy.
//   - Pass 1 on the exponent alone (256 bins, then 2048 and 4096): fewer, fuller groups to combine,
//     but the level-2 bin is then a whole exponent and its range atomics cost more: 313 us.
//   - BLOCK x U4 (pieces a thread a step): 256 x 4 248 us, 512 x 1 242, 512 x 4 202, 1024 x 2
//     225 (`warpbook tune` sweeps BLOCK on the GPU).
//   - Sorting the row (torch.sort + cumsums + a scatter): a dozen passes over [rows, V], keys and
//     indices, reads and writes.
//   - Gathering the tokens of the level-1 bin into shared memory to finish there: saves a pass when
//     the bin is small, but a run of equal weights (thousands here) does not fit, so it needs the
//     pass-based path anyway.
//   - What could win (not written): a cluster of blocks per row (sm_90) holding the row in their
//     shared memory (8 x 64 KB for 128256 weights) and exchanging the histograms through
//     distributed shared memory: one DRAM read. This file runs on sm_80.
// Measured on an H100 80GB HBM3: 291.5 us, 451 GB/s, 14.1% of the speed of light `warpbook probe`
// measures there: silver, short of the 15% gold bar; the model says 221 us (1.3x too fast).
// `warpbook tune` there, one run: BLOCK = 1024 332 us, 256 404 us. In one run of
// scripts/puzzles_vs_torch.sh (a p per row drawn at random), the eager sort-and-cumsum form took
// 4435 us and the Triton form (34 reads a row) 1508 us.
// measured: 291.55 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=512
#define U4 2                  // 16-byte pieces per thread per step (loads in flight)
#define STEP (4 * U4 * BLOCK) // tokens per step (4096 at 512 threads); also the sampling's chunk
#define NCH 1024              // steps the tables hold: V <= NCH * STEP (1 Mi tokens at BLOCK 128)
#define NWARP (BLOCK / 32)
#define MINB (BLOCK >= 1024 ? 1 : 1024 / BLOCK) // 2 blocks of 512 per SM: 256 rows in one wave
#define FULL 0xffffffffu

struct Shared {
  float hist[2048];     // mass per digit of the current level
  unsigned kmin[1024];  // level 2: the smallest and largest key in each bin, so that a bin
  unsigned kmax[1024];  // holding one distinct weight ends the select a pass early
  float step_mass[NCH]; // per step: mass of the tokens above w
  float step_ties[NCH]; // per step: tokens equal to w
  float red[3][NWARP >= 2 ? NWARP : 2]; // block scans: warp totals, their prefixes, the totals
  unsigned digit;                       // the level's chosen digit
  float above;                          // the mass of the level's bins above it (and, once, M)
  int pick, last;                       // the sampled token; the last nucleus token of the step
  int step;                             // the step that holds the sample
  float heavy_before, ties_before;      // mass above w and tokens equal to w before that step
};

// Piece j of a step: columns i .. i + 3, i = base + 4 (j BLOCK + t). One 16-byte load when rows
// are 16-byte aligned (V % 4 == 0), else four 4-byte ones (small cases only). Past the row: 0.
__device__ __forceinline__ float4 load_piece(const float* row, int base, int j, int V, bool vec) {
  const int i = base + 4 * (j * BLOCK + (int)threadIdx.x);
  if (vec) return i < V ? *reinterpret_cast<const float4*>(row + i) : make_float4(0, 0, 0, 0);
  return make_float4(i < V ? row[i] : 0.0f, i + 1 < V ? row[i + 1] : 0.0f,
                     i + 2 < V ? row[i + 2] : 0.0f, i + 3 < V ? row[i + 3] : 0.0f);
}
__device__ __forceinline__ float elem(const float4& q, int e) {
  return e == 0 ? q.x : e == 1 ? q.y : e == 2 ? q.z : q.w;
}

// One level of the select: adds every positive weight whose key matches the prefix into bin
// (key >> shift) & (nbins - 1). Level 1 (prefix_shift 31: every weight, bit 31 is 0) adds every
// weight somewhere, and a row's weights bunch up in a few bins, so there the lanes of a warp that
// share a bin add once, together: their sum gathered by shuffles, added by the group's first lane.
// With `range` (level 2), also the smallest and largest key of each bin.
__device__ void histogram(Shared& s, const float* row, int V, bool vec, int shift, unsigned nbins,
                          int prefix_shift, unsigned prefix, bool range, bool rev) {
  const int lane = threadIdx.x & 31;
  const bool combine = false;
  for (int i = threadIdx.x; i < 2048; i += BLOCK) s.hist[i] = 0;
  if (range)
    for (int i = threadIdx.x; i < 1024; i += BLOCK) s.kmin[i] = 0xffffffffu, s.kmax[i] = 0;
  __syncthreads();
  const int nsteps = (V + STEP - 1) / STEP;
  float4 nq[U4]; // the next step's pieces, loaded while this step's are binned
#pragma unroll
  for (int j = 0; j < U4; ++j) nq[j] = load_piece(row, (rev ? nsteps - 1 : 0) * STEP, j, V, vec);
  for (int n = 0; n < nsteps; ++n) {
    float4 q[U4];
#pragma unroll
    for (int j = 0; j < U4; ++j) q[j] = nq[j];
    if (n + 1 < nsteps) {
      const int nb = (rev ? nsteps - 2 - n : n + 1) * STEP;
#pragma unroll
      for (int j = 0; j < U4; ++j) nq[j] = load_piece(row, nb, j, V, vec);
    }
#pragma unroll
    for (int j = 0; j < U4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float v = elem(q[j], e);
        const unsigned key = __float_as_uint(v);
        const bool take = v > 0 && (key >> prefix_shift) == prefix;
        const unsigned bin = (key >> shift) & (nbins - 1);
        if (combine) {
          const unsigned peers = __match_any_sync(FULL, take ? bin : 0xffffffffu);
          const int n = __reduce_max_sync(FULL, take ? __popc(peers) : 0); // the largest group
          float sum = 0;
          unsigned rest = peers;
          for (int i = 0; i < n; ++i) {
            const float y = __shfl_sync(FULL, v, rest ? __ffs(rest) - 1 : lane);
            if (rest) sum += y, rest &= rest - 1;
          }
          if (take && lane == __ffs(peers) - 1) atomicAdd(&s.hist[bin], sum);
        } else if (take) {
          atomicAdd(&s.hist[bin], v);
          if (range) atomicMin(&s.kmin[bin], key), atomicMax(&s.kmax[bin], key);
        }
      }
  }
  __syncthreads();
}

// Warp 0: the highest bin at which above + (mass of the bins from the top down to it) reaches the
// target and is positive. Lane l owns bins [nbins - (l + 1) per, nbins - l per), top first.
// Writes s.digit and s.above (the bins above it, plus `above`). Every sum is exact, and the test
// is always "exact sum >= target": target - above would round.
__device__ void choose(Shared& s, unsigned nbins, float above, float target) {
  const int lane = threadIdx.x & 31;
  const int per = nbins / 32, top = nbins - 1 - lane * per;
  float mine = 0;
  for (int i = 0; i < per; ++i) mine += s.hist[top - i];
  float incl = mine;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float y = __shfl_up_sync(FULL, incl, o);
    if (lane >= o) incl += y;
  }
  const float first = above + incl;
  const unsigned ok = __ballot_sync(FULL, first >= target && first > 0);
  if (lane == __ffs(ok) - 1) {
    float acc = above + incl - mine;
    for (int i = 0; i < per; ++i) {
      const float next = acc + s.hist[top - i];
      if (next >= target && next > 0) {
        s.digit = top - i;
        s.above = acc;
        break;
      }
      acc = next;
    }
  }
}

// Inclusive block scan of two values in thread order; also returns the block's totals. Each warp
// scans its own, warp 0 scans the warp totals.
__device__ float2 block_scan(Shared& s, float a, float b, float2& total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float ya = __shfl_up_sync(FULL, a, o), yb = __shfl_up_sync(FULL, b, o);
    if (lane >= o) a += ya, b += yb;
  }
  if (lane == 31) s.red[0][warp] = a, s.red[1][warp] = b;
  __syncthreads();
  if (warp == 0) {
    float ia = lane < NWARP ? s.red[0][lane] : 0.0f, ib = lane < NWARP ? s.red[1][lane] : 0.0f;
    const float ea = ia, eb = ib;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float ya = __shfl_up_sync(FULL, ia, o), yb = __shfl_up_sync(FULL, ib, o);
      if (lane >= o) ia += ya, ib += yb;
    }
    if (lane < NWARP) s.red[0][lane] = ia - ea, s.red[1][lane] = ib - eb; // the warps before
    if (lane == 31) s.red[2][0] = ia, s.red[2][1] = ib;
  }
  __syncthreads();
  total = make_float2(s.red[2][0], s.red[2][1]);
  const float2 r = make_float2(a + s.red[0][warp], b + s.red[1][warp]);
  __syncthreads(); // everyone has read s.red before the next scan writes it
  return r;
}

extern "C" __global__ void __launch_bounds__(BLOCK, MINB)
    top_p_sample(const float* __restrict__ probs, const float* __restrict__ top_p,
                 const float* __restrict__ u, int* __restrict__ token, float* __restrict__ mass,
                 int rows, int V) {
  __shared__ Shared s;
  const int t = threadIdx.x, r = blockIdx.x, lane = t & 31;
  const float* row = probs + (long long)r * V;
  const bool vec = (V & 3) == 0;

  // Pass 1: bits 30..20. M is the sum of the bins.
  histogram(s, row, V, vec, 20, 2048, 31, 0, false, false);
  if (t < 32) {
    float m = 0;
    for (int i = t; i < 2048; i += 32) m += s.hist[i];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) m += __shfl_xor_sync(FULL, m, o);
    if (t == 0) s.above = m;
  }
  __syncthreads();
  const float M = s.above;
  __syncthreads(); // everyone has read it before choose() writes s.above
  if (M == 0) {    // no weight: the nucleus is the first token, of mass 0
    if (t == 0) token[r] = 0, mass[r] = 0;
    return;
  }
  const float target = top_p[r] * M;
  if (t < 32) choose(s, 2048, 0.0f, target);
  __syncthreads();
  unsigned key = s.digit; // the chosen bits so far, from bit 30 down
  float above = s.above;
  __syncthreads(); // everyone has read them before the next level clears and chooses
  // Pass 2: bits 19..10 of the weights in that bin, and each sub-bin's key range.
  histogram(s, row, V, vec, 10, 1024, 20, key, true, true);
  if (t < 32) choose(s, 1024, above, target);
  __syncthreads();
  const unsigned d = s.digit;
  above = s.above;
  bool rev4 = false;            // pass 4 reads the row the other way from the pass before it
  if (s.kmin[d] == s.kmax[d]) { // one distinct weight in the sub-bin: it is w
    key = s.kmin[d];
  } else { // pass 3: bits 9..0
    key = key << 10 | d;
    __syncthreads();
    histogram(s, row, V, vec, 0, 1024, 10, key, false, false);
    rev4 = true;
    if (t < 32) choose(s, 1024, above, target);
    __syncthreads();
    key = key << 10 | s.digit;
    above = s.above;
  }
  // Now `above` is S, the mass of every token heavier than w.
  const float w = __uint_as_float(key);
  // q: the fewest tokens equal to w (at least one) that bring S to the target. A guess (at most
  // V: there are no more equal tokens), which the loops make exact.
  float q = fminf((float)V, fmaxf(1.0f, ceilf((target - above) / w)));
  while (q > 1 && above + (q - 1) * w >= target) q -= 1;
  while (above + q * w < target) q += 1;
  const float Mn = above + q * w;
  const float x = u[r] * Mn;

  // Pass 4: per step, the mass of the tokens heavier than w and the count of those equal to it.
  const int nsteps = (V + STEP - 1) / STEP;
  for (int i = t; i < nsteps; i += BLOCK) s.step_mass[i] = 0, s.step_ties[i] = 0;
  if (t == 0) s.pick = V, s.last = -1;
  __syncthreads();
  float4 nq[U4];
#pragma unroll
  for (int j = 0; j < U4; ++j) nq[j] = load_piece(row, (rev4 ? nsteps - 1 : 0) * STEP, j, V, vec);
  for (int n4 = 0; n4 < nsteps; ++n4) {
    const int st = rev4 ? nsteps - 1 - n4 : n4;
    float4 cq[U4];
#pragma unroll
    for (int j = 0; j < U4; ++j) cq[j] = nq[j];
    if (n4 + 1 < nsteps) {
      const int nb = (rev4 ? nsteps - 2 - n4 : n4 + 1) * STEP;
#pragma unroll
      for (int j = 0; j < U4; ++j) nq[j] = load_piece(row, nb, j, V, vec);
    }
    float m = 0, n = 0;
#pragma unroll
    for (int j = 0; j < U4; ++j) {
      const float4 p4 = cq[j];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float v = elem(p4, e);
        const unsigned k = __float_as_uint(v);
        if (v > 0 && k > key) m += v;
        if (v > 0 && k == key) n += 1;
      }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      m += __shfl_xor_sync(FULL, m, o), n += __shfl_xor_sync(FULL, n, o);
    if (lane == 0 && (m > 0 || n > 0))
      atomicAdd(&s.step_mass[st], m), atomicAdd(&s.step_ties[st], n);
  }
  __syncthreads();

  // Warp 0: the nucleus mass up to any point is H + w min(q, T), H the mass heavier than w and T
  // the tokens equal to w so far, in column order. Lane l owns steps [l per, (l + 1) per); the
  // step holding the sample is the first whose running nucleus mass passes x (if none, x rounded
  // up to Mn: the last step with any nucleus mass, whose last nucleus token is the answer).
  if (t < 32) {
    const int per = (nsteps + 31) / 32, lo = min(nsteps, lane * per), hi = min(nsteps, lo + per);
    float H = 0, T = 0;
    for (int i = lo; i < hi; ++i) H += s.step_mass[i], T += s.step_ties[i];
    float Hb = H, Tb = T;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float yh = __shfl_up_sync(FULL, Hb, o), yt = __shfl_up_sync(FULL, Tb, o);
      if (lane >= o) Hb += yh, Tb += yt;
    }
    const float through = Hb + w * fminf(q, Tb), before = Hb - H + w * fminf(q, Tb - T);
    const unsigned hit = __ballot_sync(FULL, through > x);
    const unsigned some = __ballot_sync(FULL, through > before);
    const int owner = hit ? __ffs(hit) - 1 : 31 - __clz(some);
    if (lane == owner) {
      float h = Hb - H, n = Tb - T;
      for (int i = lo; i < hi; ++i) {
        const float h2 = h + s.step_mass[i], n2 = n + s.step_ties[i];
        const float end = h2 + w * fminf(q, n2);
        if (end > h + w * fminf(q, n)) s.step = i, s.heavy_before = h, s.ties_before = n;
        if (hit && end > x) break;
        h = h2, n = n2;
      }
    }
  }
  __syncthreads();

  // Last pass: that step again. A thread's four columns are consecutive: a scan of its own four,
  // then one block scan of the threads' totals, in column order.
  const int base = s.step * STEP;
  float H = s.heavy_before, T = s.ties_before;
#pragma unroll
  for (int j = 0; j < U4; ++j) {
    const float4 p4 = load_piece(row, base, j, V, vec);
    float hv[4], tv[4], ha = 0, ta = 0;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float v = elem(p4, e);
      const unsigned k = __float_as_uint(v);
      ha += (v > 0 && k > key) ? v : 0.0f;
      ta += (v > 0 && k == key) ? 1.0f : 0.0f;
      hv[e] = ha, tv[e] = ta; // inclusive, within the thread
    }
    float2 sum;
    const float2 sc = block_scan(s, ha, ta, sum);
    const float hb = H + sc.x - ha, tb = T + sc.y - ta; // before this thread's four
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float v = elem(p4, e);
      const unsigned k = __float_as_uint(v);
      const bool in = (v > 0 && k > key) || (v > 0 && k == key && tb + tv[e] <= q);
      const int c = base + 4 * (j * BLOCK + t) + e;
      if (in && hb + hv[e] + w * fminf(q, tb + tv[e]) > x) atomicMin(&s.pick, c);
      if (in) atomicMax(&s.last, c);
    }
    H += sum.x, T += sum.y;
  }
  __syncthreads();
  if (t == 0) token[r] = s.pick < V ? s.pick : s.last, mass[r] = Mn;
}
