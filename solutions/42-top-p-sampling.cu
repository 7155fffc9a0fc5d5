// Solution · 42 top-p (nucleus) sampling without sorting
//
// What: one block per row, no sort, no candidate list. The nucleus is "every token above a
// threshold weight w, and the first q tokens equal to w"; w is found by a radix select on the
// weight's bits, driven by MASS instead of counts. Weights are >= 0, so their f32 bits order like
// unsigned integers, and bits 30..0 are the whole key. Pass 1 adds each weight into one of 2048
// bins by its bits 30..20 (in shared memory) and finds, from the top bin down, the bin where the
// running mass reaches p * M (M is the sum of all bins). Pass 2 does the same with bits 19..10 for
// the weights of that bin, pass 3 with bits 9..0 for the weights of the chosen sub-bin: the
// chosen key is then w itself, and the mass above it, S, is known exactly. The number of equal
// weights that complete the nucleus, q, is the smallest q >= 1 with S + q w >= p M. Pass 4 cuts
// the row into steps of STEP tokens and adds, per step, the mass above w and the count of tokens
// equal to w. One warp turns those into each step's nucleus mass (the first q equal tokens, in
// column order, are in), finds the step where the running mass passes x = u Mn, and the last pass
// reads that one step again: a block-wide scan in column order picks the token.
// Run:  warpbook check 42-top-p-sampling solutions/42-top-p-sampling.cu
//       warpbook predict 42-top-p-sampling solutions/42-top-p-sampling.cu --gpu h100-sxm
//
// Exactness: every sum here is a partial sum of the row's weights, which the puzzle makes exact in
// f32 (integers, or multiples of one power of two, below 2^24 in all), so the shared-memory atomics
// may add in any order and the comparisons with p M and u Mn decide the same way as the reference's.
// The only rounded operations are the two the statement names (p * M and u * Mn). Comparisons are
// always "exact partial sum >= target": target - S would round, S + mass does not.
//
// Why this shape: FlashInfer's sorting-free top-p sampler guesses pivots and re-reads the row
// until the pivot's mass lands in [p, p + eps); a radix select on the bits needs no guess and ends
// after exactly three levels, whatever the weights, ties included (a whole level of ties is one
// key: q counts into it). The sampling order is the column order, as FlashInfer's, so the pick is
// a prefix sum in the order the row is stored, not in rank order (which would need the sort).
//
// Napkin maths: 256 rows x 128256 x 4 B = 131 MB. One read at the H100's 3.35 TB/s is 39 us: the
// speed of light. This kernel reads the row four times and one step more: if every pass came from
// DRAM, 157 us (25%). The rows in flight (one block of 1024 threads per SM, 2 per SM at most: 132
// to 264 rows, 68 to 135 MB) are more than the 50 MB L2, so the later passes find only part of the
// row there. The histogram atomics are one shared-memory atomic per nonzero weight a pass; zero
// weights (a third here, most of a real distribution's tail underflows to tiny values, not zero)
// cost nothing.
//
// What loses, and what could win (predicted, not measured):
//   - Sorting the row (torch.sort + cumsum): a radix sort reads and writes the row several times,
//     keys and indices, and the cumsum and the mask once more each.
//   - Counting instead of mass at each level (radix select of the k-th element): top-p has no k.
//   - Gathering the tokens of the level-1 bin into shared memory and finishing the select there:
//     saves passes 2 and 3 when the bin is small, but a run of equal weights (thousands here) does
//     not fit, so it needs the pass-based fallback anyway.
//   - What could win: a cluster of CTAs per row (sm_90) holding the row in their shared memory (8
//     CTAs x 64 KB for 128256 weights), exchanging the 2048-bin histograms through distributed
//     shared memory: one DRAM read. Not written here: it needs clusters, and this file runs on sm_80.
// @tune BLOCK=1024
#define U 4                // weights per thread per step (independent loads in flight)
#define STEP (U * BLOCK)   // tokens per step; also the sampling's chunk
#define NCH 1024           // steps the tables hold: V <= NCH * STEP (512 Ki tokens at BLOCK 128)
#define NWARP (BLOCK / 32)
#define FULL 0xffffffffu

struct Shared {
  float hist[2048];         // mass per digit of the current level
  float step_mass[NCH];     // per step: mass of the tokens above w
  float step_ties[NCH];     // per step: tokens equal to w
  float red[3][NWARP >= 2 ? NWARP : 2]; // block scans: warp totals, then their prefixes; totals
  unsigned digit;           // the level's chosen digit
  float above;              // the mass of the level's bins above it
  int pick, last;           // the sampled token; the last nucleus token of the step
  int step;                 // the step that holds the sample
  float step_before, ties_before; // nucleus mass and tokens equal to w before that step
};

// The weights of one step, U a thread: column base + j * BLOCK + t. Past the row: 0 (never counts).
__device__ __forceinline__ void load_step(const float* row, int base, int V, float (&v)[U]) {
#pragma unroll
  for (int j = 0; j < U; ++j) {
    const int c = base + j * BLOCK + (int)threadIdx.x;
    v[j] = c < V ? row[c] : 0.0f;
  }
}

// One level of the select: adds every positive weight whose key matches the prefix into bin
// (key >> shift) & (nbins - 1). Level 0 takes every weight (prefix_shift 31 keeps all: bit 31 is 0).
__device__ void histogram(Shared& s, const float* row, int V, int shift, unsigned nbins,
                          int prefix_shift, unsigned prefix) {
  for (int i = threadIdx.x; i < 2048; i += BLOCK) s.hist[i] = 0;
  __syncthreads();
  for (int base = 0; base < V; base += STEP) {
    float v[U];
    load_step(row, base, V, v);
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const unsigned key = __float_as_uint(v[j]);
      if (v[j] > 0 && (key >> prefix_shift) == prefix)
        atomicAdd(&s.hist[(key >> shift) & (nbins - 1)], v[j]);
    }
  }
  __syncthreads();
}

// Warp 0: the highest bin at which above + (mass of the bins from the top down to it) reaches the
// target and is positive. Lane l owns bins [nbins - (l + 1) per, nbins - l per), top first.
// Writes s.digit and s.above (the bins above it, plus `above`).
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
  const float first = above + incl; // exact: a partial sum of the row
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

// Inclusive block scan of two values in column order (thread order); also returns the totals.
// Each warp scans its own; warp 0 scans the warp totals.
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
    if (lane < NWARP) s.red[0][lane] = ia - ea, s.red[1][lane] = ib - eb; // warps before it
    if (lane == 31) s.red[2][0] = ia, s.red[2][1] = ib;                   // the block's totals
  }
  __syncthreads();
  total = make_float2(s.red[2][0], s.red[2][1]);
  const float2 r = make_float2(a + s.red[0][warp], b + s.red[1][warp]);
  __syncthreads(); // everyone has read s.red before the next scan writes it
  return r;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    top_p_sample(const float* __restrict__ probs, const float* __restrict__ top_p,
                 const float* __restrict__ u, int* __restrict__ token, float* __restrict__ mass,
                 int rows, int V) {
  __shared__ Shared s;
  const int t = threadIdx.x, r = blockIdx.x, lane = t & 31;
  const float* row = probs + (long long)r * V;

  // Pass 1: bits 30..20. M is the sum of the bins.
  histogram(s, row, V, 20, 2048, 31, 0);
  if (t < 32) { // M: the sum of the bins (exact, so any order)
    float m = 0;
    for (int i = t; i < 2048; i += 32) m += s.hist[i];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) m += __shfl_xor_sync(FULL, m, o);
    if (t == 0) s.above = m;
  }
  __syncthreads();
  const float M = s.above;
  __syncthreads(); // everyone has read it before choose() writes s.above
  if (M == 0) { // no weight: the nucleus is the first token, of mass 0
    if (t == 0) token[r] = 0, mass[r] = 0;
    return;
  }
  const float target = top_p[r] * M;
  if (t < 32) choose(s, 2048, 0.0f, target);
  __syncthreads();
  unsigned key = s.digit; // the chosen bits so far, from bit 30 down
  float above = s.above;
  __syncthreads(); // everyone has read them before the next level clears and chooses
  // Pass 2: bits 19..10 of the weights in that bin. Pass 3: bits 9..0.
  histogram(s, row, V, 10, 1024, 20, key);
  if (t < 32) choose(s, 1024, above, target);
  __syncthreads();
  key = key << 10 | s.digit;
  above = s.above;
  __syncthreads();
  histogram(s, row, V, 0, 1024, 10, key);
  if (t < 32) choose(s, 1024, above, target);
  __syncthreads();
  key = key << 10 | s.digit;
  above = s.above; // S: the mass of every token above w
  const float w = __uint_as_float(key);
  // q: the fewest tokens equal to w (at least one) that bring S to the target.
  // A guess (at most V: there are no more equal tokens than that); the loops make it exact.
  float q = fminf((float)V, fmaxf(1.0f, ceilf((target - above) / w)));
  while (q > 1 && above + (q - 1) * w >= target) q -= 1;
  while (above + q * w < target) q += 1;
  const float Mn = above + q * w;
  const float x = u[r] * Mn;

  // Pass 4: per step, the mass above w and the tokens equal to w.
  const int nsteps = (V + STEP - 1) / STEP;
  for (int i = t; i < nsteps; i += BLOCK) s.step_mass[i] = 0, s.step_ties[i] = 0;
  if (t == 0) s.pick = V, s.last = -1;
  __syncthreads();
  for (int st = 0; st < nsteps; ++st) {
    float v[U], m = 0, n = 0;
    load_step(row, st * STEP, V, v);
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const unsigned k = __float_as_uint(v[j]);
      if (v[j] > 0 && k > key) m += v[j];
      if (v[j] > 0 && k == key) n += 1;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      m += __shfl_xor_sync(FULL, m, o), n += __shfl_xor_sync(FULL, n, o);
    if (lane == 0 && (m > 0 || n > 0))
      atomicAdd(&s.step_mass[st], m), atomicAdd(&s.step_ties[st], n);
  }
  __syncthreads();

  // Warp 0: each step's nucleus mass (its share of the first q ties), and the step where the
  // running mass first passes x; lane l owns steps [l per, (l + 1) per), in column order.
  if (t < 32) {
    const int per = (nsteps + 31) / 32, lo = min(nsteps, lane * per), hi = min(nsteps, lo + per);
    float ties = 0;
    for (int i = lo; i < hi; ++i) ties += s.step_ties[i];
    float tb = ties; // ties before this lane's steps: exclusive scan
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float y = __shfl_up_sync(FULL, tb, o);
      if (lane >= o) tb += y;
    }
    tb -= ties;
    float mine = 0, t2 = tb;
    for (int i = lo; i < hi; ++i) {
      const float in = fminf(s.step_ties[i], fmaxf(0.0f, q - t2));
      mine += s.step_mass[i] + in * w;
      t2 += s.step_ties[i];
    }
    float mb = mine;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float y = __shfl_up_sync(FULL, mb, o);
      if (lane >= o) mb += y;
    }
    mb -= mine; // nucleus mass before this lane's steps
    const unsigned hit = __ballot_sync(FULL, mb + mine > x);
    // The lane holding the sample; if none (x rounded up to Mn), the lane of the last nucleus step.
    const int owner = hit ? __ffs(hit) - 1 : 31 - __clz(__ballot_sync(FULL, mine > 0));
    if (lane == owner) {
      float acc = mb, tt = tb;
      for (int i = lo; i < hi; ++i) {
        const float tot = s.step_mass[i] + fminf(s.step_ties[i], fmaxf(0.0f, q - tt)) * w;
        if (tot > 0) s.step = i, s.step_before = acc, s.ties_before = tt;
        if (hit && acc + tot > x) break;
        acc += tot;
        tt += s.step_ties[i];
      }
    }
  }
  __syncthreads();

  // Last pass: that step again, a scan in column order.
  const int base = s.step * STEP;
  float run = s.step_before, tied = s.ties_before;
  float v[U];
  load_step(row, base, V, v);
#pragma unroll
  for (int j = 0; j < U; ++j) {
    // One scan of (mass above w, tokens equal to w): the equal tokens are in the nucleus in column
    // order, the first q - tied of this step's, so the nucleus mass up to a token follows.
    const unsigned k = __float_as_uint(v[j]);
    const bool tie = v[j] > 0 && k == key, heavy = v[j] > 0 && k > key;
    float2 sum;
    const float2 sc = block_scan(s, heavy ? v[j] : 0.0f, tie ? 1.0f : 0.0f, sum);
    const float ties_in = fmaxf(0.0f, fminf(q, tied + sc.y) - tied); // taken, up to this token
    const bool in = heavy || (tie && tied + sc.y <= q);
    const int c = base + j * BLOCK + t;
    if (in && run + sc.x + ties_in * w > x) atomicMin(&s.pick, c);
    if (in) atomicMax(&s.last, c);
    run += sum.x + (fmaxf(0.0f, fminf(q, tied + sum.y) - tied)) * w;
    tied += sum.y;
  }
  __syncthreads();
  if (t == 0) token[r] = s.pick < V ? s.pick : s.last, mass[r] = Mn;
}
