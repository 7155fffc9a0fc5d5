// Perf-model kernel · 28 top-k of each row, threshold filter, loads into registers
//
// One block of 128 threads a row, two steps of the row in registers, a threshold filter with a
// candidate list in shared memory and radix selects. SELECT_NOINLINE 1: select_top not inlined.
// L2_256B 1: the float4 loads as ld.global.nc.L2::256B. PFD > 0: a prefetch.global.L2 of the step
// PFD steps ahead, one line per thread. The L2_256B row's code is rebuilt from a description of
// the code timed (the helper and the one changed load as described).
// Solution 28 streams the row through a cp.async ring instead (28-topk-threshold-ring-4-slots.cu).
// A kernel of bench/perfmodel/curriculum2.toml, the set the performance model is checked against:
// the rows that name this file say what each timing measured, and their tune/define values make the
// versions.
// measured: 145.18 us on NVIDIA H200
// @tune BLOCK=128

#define U (BLOCK >= 256 ? 1024 / BLOCK : 4) // float4 loads per thread per step
#define STEP (4 * U * BLOCK)                // values per step: 4096 for BLOCK >= 256
#define KMAX 64
#define SELECT_NOINLINE 0 // 1: select_top is not inlined
#if SELECT_NOINLINE
#define SELECT_ATTR __noinline__
#else
#define SELECT_ATTR
#endif
#define L2_256B 0          // 1: the float4 loads ask the L2 for 256 bytes
#define PFD 0              // > 0: prefetch the step PFD steps ahead into the L2
#define SLACK 256          // candidates the list may hold before a step
#define CAP (SLACK + STEP) // room for a whole step of candidates beyond SLACK
#define FULL 0xffffffffu
#define G (4 * U >= 8 ? 8 : 4 * U) // values per warp vote in the filter

typedef unsigned long long u64;

struct Shared {
  unsigned key[CAP]; // candidate values, as ordered unsigned keys
  int col[CAP];      // and their columns
  unsigned sel_key[KMAX];
  int sel_col[KMAX];
  __align__(16) unsigned hist[256];
  int count;        // candidates in the list
  int nsel;         // winners gathered by the select
  unsigned min_key; // the k-th winner's value key
  int digit, above, in_bin;
};

// Float bits to an unsigned key with the same order (no NaN): flip negatives, set the sign of
// positives. -0.0 + 0.0 is +0.0, so both zeros get one key.
__device__ __forceinline__ unsigned key_of(float v) {
  unsigned b = __float_as_uint(v + 0.0f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float value_of(unsigned key) {
  return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}
// Larger ranks first: value descending, then column ascending.
__device__ __forceinline__ u64 rank_key(unsigned key, int col) {
  return ((u64)key << 32) | (unsigned)~col;
}

// Keeps exactly the k best of the s.count candidates in s.key/s.col[0..k) and their smallest
// value key in s.min_key. Every thread calls it. A radix select over the rank key (value key,
// then ~column), 8 bits a pass from the top: count the candidates that match the digits chosen so
// far, by their next digit, and pick the digit whose bin holds the k-th best. It stops when that
// bin holds exactly as many as are still needed: after 2 to 4 passes on random values, at the
// latest after the 8th, when the bin is a single (value, column). The two 32-bit halves are kept
// apart so that every operation is a 32-bit one.
__device__ SELECT_ATTR void select_top(Shared& s, int k) {
  const int t = threadIdx.x, lane = t & 31;
  const int n = s.count;
  unsigned phi = 0, plo = 0, mhi = 0, mlo = 0; // the digits chosen so far, and where they are
  int need = k;
  for (int pass = 0; pass < 8; ++pass) {
    const bool hiword = pass < 4;
    const int sh = 24 - 8 * (pass & 3);
    for (int i = t; i < 256; i += BLOCK) s.hist[i] = 0;
    __syncthreads();
    // Logits bunch up in a few bins (the first pass sees the sign and 7 bits of the exponent),
    // so the lanes of a warp that share a bin add to it once, together.
    for (int i0 = t - lane; i0 < n; i0 += BLOCK) {
      const int i = i0 + lane;
      unsigned bin = 256; // none
      if (i < n) {
        unsigned hi = s.key[i], lo = ~(unsigned)s.col[i];
        if ((hi & mhi) == phi && (lo & mlo) == plo) bin = ((hiword ? hi : lo) >> sh) & 255u;
      }
      const unsigned peers = __match_any_sync(FULL, bin);
      if (bin < 256 && lane == __ffs(peers) - 1) atomicAdd(&s.hist[bin], __popc(peers));
    }
    __syncthreads();
    if (t < 32) { // lane l scans bins 255 - 8l down to 248 - 8l
      const uint4* h4 = reinterpret_cast<const uint4*>(s.hist + 248 - 8 * lane);
      const uint4 lo4 = h4[0], hi4 = h4[1]; // two 16-byte reads: no bank conflicts
      const int h[8] = {(int)hi4.w, (int)hi4.z, (int)hi4.y, (int)hi4.x,
                        (int)lo4.w, (int)lo4.z, (int)lo4.y, (int)lo4.x}; // bins 255 - 8l - j
      int sum = 0;
#pragma unroll
      for (int j = 0; j < 8; ++j) sum += h[j];
      int incl = sum;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        int y = __shfl_up_sync(FULL, incl, o);
        if (lane >= o) incl += y;
      }
      int acc = incl - sum; // candidates in the bins above this lane's
      if (acc < need && need <= incl) {
        for (int j = 0; j < 8; ++j) {
          if (acc + h[j] >= need) {
            s.digit = 255 - 8 * lane - j;
            s.above = acc;
            s.in_bin = h[j];
            break;
          }
          acc += h[j];
        }
      }
      if (lane == 0) s.nsel = 0, s.min_key = 0xffffffffu;
    }
    __syncthreads();
    if (hiword)
      phi |= (unsigned)s.digit << sh, mhi |= 255u << sh;
    else
      plo |= (unsigned)s.digit << sh, mlo |= 255u << sh;
    need -= s.above;
    if (s.in_bin == need) break; // the same for every thread
  }
  // The winners: every candidate whose chosen digits are at least (phi, plo).
  for (int i = t; i < n; i += BLOCK) {
    unsigned hi = s.key[i], lo = ~(unsigned)s.col[i];
    if ((hi & mhi) > phi || ((hi & mhi) == phi && (lo & mlo) >= plo)) {
      int p = atomicAdd(&s.nsel, 1);
      s.sel_key[p] = hi;
      s.sel_col[p] = s.col[i];
      atomicMin(&s.min_key, hi);
    }
  }
  __syncthreads();
  for (int i = t; i < k; i += BLOCK) s.key[i] = s.sel_key[i], s.col[i] = s.sel_col[i];
  if (t == 0) s.count = k;
  __syncthreads();
}

// The column of value j of this thread's share of the step starting at `base`.
__device__ __forceinline__ int column(int base, int j, bool vec) {
  return vec ? base + 4 * ((j >> 2) * BLOCK + (int)threadIdx.x) + (j & 3)
             : base + j * BLOCK + (int)threadIdx.x;
}

// 16-byte read-only load; with L2_256B, with a 256-byte L2 prefetch hint (the line's neighbours
// come too).
__device__ __forceinline__ float4 ldg4(const float4* p) {
#if L2_256B
  float4 v;
  asm("ld.global.nc.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(p));
  return v;
#else
  return __ldg(p);
#endif
}

// Loads this thread's 4U values of a step; past the end of the row, NaN (it passes no threshold).
__device__ __forceinline__ void load_step(float (&v)[4 * U], const float* row, int base, int V,
                                          bool vec) {
  const bool whole = base + STEP <= V; // every step but the last: no bounds to check
  if (vec) {                           // V % 4 == 0: the row starts 16-byte aligned
    const float4* p = reinterpret_cast<const float4*>(row + base) + threadIdx.x;
#pragma unroll
    for (int j = 0; j < U; ++j) {
      float4 f = make_float4(NAN, NAN, NAN, NAN);
      if (whole || column(base, 4 * j, true) < V) f = ldg4(p + j * BLOCK);
      v[4 * j] = f.x, v[4 * j + 1] = f.y, v[4 * j + 2] = f.z, v[4 * j + 3] = f.w;
    }
  } else {
    const float* p = row + base + threadIdx.x;
#pragma unroll
    for (int j = 0; j < 4 * U; ++j)
      v[j] = whole || column(base, j, false) < V ? __ldg(p + j * BLOCK) : NAN;
  }
}

// With PFD > 0, asks the L2 for step `st` of the row ahead of its loads: one 128-byte line per
// thread, the first STEP * 4 / 128 threads (no registers held, unlike loading further ahead).
__device__ __forceinline__ void prefetch_step(const float* row, int st, int V) {
#if PFD > 0
  const long long off = (long long)st * STEP + 32 * (long long)threadIdx.x;
  if (threadIdx.x < STEP / 32 && off < V) asm volatile("prefetch.global.L2 [%0];" ::"l"(row + off));
#endif
}

// The state a block carries along its row.
struct Filter {
  bool open; // until the first select, every value is a candidate
  float thr; // after it: a value must beat the k-th kept value strictly
  int seen;  // the list's length as far as this thread knows (1 + the last slot it took)
};

// The first threshold, before anything is appended: each thread's largest value of step 0 is a
// distinct element, so the k-th largest T of these BLOCK maxima has at least k values of step 0
// at or above it. Keeping every value of step 0 that is >= T (equal ones too: the filter below
// uses the float just under T, and so do the next steps until the first select: values equal to T
// are rare, and keeping a few too many candidates is always exact). Step 0 then appends
// about k values instead of all 4096, and the 4096-candidate select is gone. Needs BLOCK >= k and
// a whole first step (no padding), which the caller checks.
__device__ float first_threshold(Shared& s, unsigned mkey, int k) {
  s.key[threadIdx.x] = mkey;
  s.col[threadIdx.x] = threadIdx.x; // any distinct columns: only the k-th value is wanted
  if (threadIdx.x == 0) s.count = BLOCK;
  __syncthreads();
  select_top(s, k);
  const float T = value_of(s.min_key);
  __syncthreads();                   // everyone has read s.min_key before the list is emptied
  if (threadIdx.x == 0) s.count = 0; // published by the barrier at the top of the step
  return T;
}

// One step: make room if needed, then drop what does not beat the threshold, append the rest.
__device__ __forceinline__ void step(Shared& s, Filter& f, const float (&v)[4 * U], int base, int V,
                                     int k, bool vec) {
  // One barrier a step: the previous step's appends are done, and if any thread saw the list
  // too long to take a whole step more, everyone selects. s.count is the largest `seen`.
  if (__syncthreads_or(f.seen + STEP > CAP)) {
    select_top(s, k);
    f.seen = k;
    f.thr = value_of(s.min_key);
    f.open = false;
  }
  // G = 8 values at a time (two float4 when vec): if no lane of the warp has one that beats the
  // threshold, which is the usual case once it has risen, that is 7 max, a compare and one vote
  // for 8 values (the solution votes once per 4).
#pragma unroll
  for (int g = 0; g < 4 * U; g += G) {
    float m = v[g];
#pragma unroll
    for (int j = g + 1; j < g + G; ++j) m = fmaxf(m, v[j]); // skips NaN padding
    if (!__any_sync(FULL, f.open || m > f.thr)) continue;
#pragma unroll
    for (int j = g; j < g + G; ++j) {
      const int c = column(base, j, vec);
      if (f.open ? c < V : v[j] > f.thr) { // append (the warp's atomics on one word combine)
        const int p = atomicAdd(&s.count, 1);
        s.key[p] = key_of(v[j]);
        s.col[p] = c;
        f.seen = max(f.seen, p + 1);
      }
    }
  }
}

#define MINB (BLOCK >= 1024 ? 1 : 1024 / BLOCK) // 64 registers at most: 4 blocks of 256 per SM
extern "C" __global__ void __launch_bounds__(BLOCK, MINB)
    topk_rows(const float* __restrict__ x, float* __restrict__ vals, int* __restrict__ idx,
              int rows, int V, int k) {
  __shared__ Shared s;
  const int t = threadIdx.x;
  const float* row = x + (long long)blockIdx.x * V;
  const bool vec = (V & 3) == 0;
  const int nsteps = (V + STEP - 1) / STEP;
  if (t == 0) s.count = 0;

  Filter f{true, -INFINITY, 0};
  float a[4 * U], b[4 * U]; // two steps in registers: one filtered while the other loads
  load_step(a, row, 0, V, vec);
  const bool sample = BLOCK >= KMAX && V >= STEP;
  if (sample) { // the first threshold, while step 1 loads
    if (nsteps > 1) load_step(b, row, STEP, V, vec);
    float m = a[0];
#pragma unroll
    for (int j = 1; j < 4 * U; ++j) m = fmaxf(m, a[j]);
    const float T = first_threshold(s, key_of(m), k);
    const float w = value_of(key_of(T) - 1u); // the float just below T (-0.0 when T is +0.0)
    f.thr = w == T ? -1.17549435e-38f : w; // so v > f.thr keeps every v >= T (and tiny negatives)
    f.open = false;
  }
  for (int st = 0; st < nsteps; st += 2) {
    prefetch_step(row, st + PFD, V);
    if (st + 1 < nsteps && !(sample && st == 0)) load_step(b, row, (st + 1) * STEP, V, vec);
    step(s, f, a, st * STEP, V, k, vec);
    if (st + 1 == nsteps) break;
    prefetch_step(row, st + 1 + PFD, V);
    if (st + 2 < nsteps) load_step(a, row, (st + 2) * STEP, V, vec);
    step(s, f, b, (st + 1) * STEP, V, k, vec);
  }
  __syncthreads();
  if (s.count > k) select_top(s, k);

  // Sort the k winners: each one's place is the number of winners that rank before it.
  for (int i = t; i < k; i += BLOCK) {
    const u64 r = rank_key(s.key[i], s.col[i]);
    int place = 0;
    for (int j = 0; j < k; ++j) place += rank_key(s.key[j], s.col[j]) > r;
    vals[(long long)blockIdx.x * k + place] = value_of(s.key[i]);
    idx[(long long)blockIdx.x * k + place] = s.col[i];
  }
}
