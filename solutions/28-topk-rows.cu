// Solution · 28 top-k of each row
//
// What: one block of 128 threads per row, and the row read from DRAM exactly once. The block
// streams the row in steps of 1024 values through a ring of NSLOT = 4 slots in shared memory:
// each thread cp.async's the two 16-byte pieces of a step that it will read itself, three steps
// ahead of the one it filters, so 12 KB a block (96 KB an SM) are always on their way, and its own
// cp.async.wait_group is all the ordering the ring needs. It holds a threshold: the k-th best
// value among the candidates it has kept. A value that does not beat the threshold is dropped at
// once; one that does is appended to a candidate list in shared memory (one shared atomic per
// value, which the hardware combines across a warp). When the list might not have room for a whole
// step more (it holds over 192), the block finds the exact top k of the list with a radix select on
// a 64-bit key, keeps those k and raises the threshold to the k-th. At the end, one last select,
// and the k winners are sorted by counting, for each, how many of the others rank before it.
// Run:  warpbook check 28-topk-rows solutions/28-topk-rows.cu
//       warpbook predict 28-topk-rows solutions/28-topk-rows.cu
//
// Ties, exactly: the order is "larger value first, then lower column". The key of a candidate is
// (bits of the value, made to sort as unsigned integers) << 32 | ~column. Larger keys rank first
// and no two keys are equal (the columns differ), so the k-th largest key splits the list into
// exactly k winners and the rest, whatever the ties. -0.0 becomes +0.0 first (v + 0.0f), so values
// that == calls equal have equal bits. A later column never beats an equal value already kept, so
// the filter "v > threshold" (strictly) is exact, not a heuristic.
//
// Why it is fast: top-k is a read of the logits and almost nothing else, so DRAM sets the time,
// as in argmax (puzzle 09). What makes it hard is keeping the selection out of the way: sorting
// the row, or k argmax passes (the reference), touch every value many times. Here the common path
// for eight values is two 16-byte shared-memory reads, seven max, one compare with the threshold
// and one warp vote that skips the append code when no lane of the warp has anything to append. The
// first threshold is not -inf: it is the k-th largest of the block's per-thread maxima of the first
// step (a sample of the row), so the first step appends about k values instead of all of them and
// no block starts its row with a select over thousands of candidates. For random logits
// the threshold climbs fast: the i-th value is in the top k of the first i with probability k / i.
// On a row of 128256 with k = 50 the block selects a few times, over lists of about 300, and some
// 500 values are appended after the first select. A select is 2 to 4 passes of a 256-bin histogram
// over the list (8 at most, when ties go down to the column bits), a few hundred instructions per
// warp for a list of 300. Rows that defeat the threshold (increasing rows: every value is a new
// maximum) stay correct; they select every step.
//
// Napkin maths: 1024 rows x 128256 x 4 B = 525 MB read, 410 KB written: 110 us at the H200's 4.8
// TB/s datasheet, 115 us at the 4.56 TB/s read stream `warpbook probe` measures; 258 us on an A100
// 80 GB, 521 us on an RTX 4090. `warpbook predict` puts every version below near 127 us (DRAM the
// limiter); the H200 does not, so they were compared there (`warpbook check`, medians).
// Measured on the H200 (`warpbook check`): 136.72 us, 3.84 TB/s, about 84% of the speed of light
// against the ceilings `warpbook probe` measures; gold (141.7 us with the L2 flushed by writing
// instead of reading, bench/perfmodel/experiments/l2-flush). What the stream can reach: the ring
// alone, the filter replaced by a running max, 129.9 and 130.0 us beside this file's 139.9 and
// 140.5, and the same without the barrier a step 129.9 and 130.1
// (bench/perfmodel/experiments/topk-bare-ring): the filter and the selects cost 7%; the stream
// itself stops at 4.05 TB/s, 89% of the probe's.
// What loses, and by how much (the times of one group are from one run):
//   - The selection's cost, in registers (two steps of 2048 values held in registers, no ring): 256
//     threads, one vote per 4 values, threshold from -inf 169 us; 128 threads 158 us (1024 rows
//     then fit in one wave of 8 blocks per SM); plus the sampled first threshold 150 us; plus one
//     vote per 8 values 145 us. On that register form, prefetching two steps ahead into registers
//     222 us (the extra registers spill), __ldcs 158 us; an L2 prefetch of the step 2, 4 or 8 steps
//     ahead (prefetch.global.L2, one line per thread, no registers) 157.7, 187.0 and 222.8 us
//     beside 143.7; an L2::256B hint on the float4 loads 150.1 us; 64 threads a block 171.7 us.
//     Nsight Compute on it (64 registers, 145.0 us): DRAM 79% of its peak, issue slots 39% busy,
//     warps stalled mostly on memory (5.3 cycles an instruction) and at the step's barrier (4.5):
//     one step in flight, and none while a warp waits at the barrier.
//   - The ring's code size: 8 KB slots with three filter bodies unrolled and the selects inlined
//     into each (8712 instructions of code) 184.9 us, its warps waiting for instructions. This ring
//     keeps one filter body (the slot is picked at run time) and steps of 1024 values, so the 4
//     slots (16 KB) and a list of 192 + 1024 candidates (10 KB) leave 8 blocks of 48 registers on
//     an SM and the 1024 rows in one wave.
//   - The ring's depth and how it is filled (`VARIANTS=28 bash scripts/gpu_session.sh variants`):
//     the register form 143.3 us, this ring 139.8, with 3 slots 142.5; the same ring filled by one
//     cp.async.bulk a step (thread 0, completing on an mbarrier) 138.3, 3 slots 140.6, 8 slots of
//     512 values 150.0 (a barrier every 4 values a thread costs more than the bytes in flight buy).
//     The bulk form is within 1% and needs sm_90 (this file runs on sm_80); it is kept as
//     bench/perfmodel/experiments/bulk-copy/28-bulk-ring.cu.
// measured: 136.72 us on NVIDIA H200
// measured: 184.22 us on NVIDIA H100 80GB HBM3
// @tune BLOCK=128
#define U 2                  // 16-byte pieces per thread per step
#define NSLOT 4              // steps in the ring: NSLOT - 1 in flight while one is filtered
#define STEP (4 * U * BLOCK) // values per step: 1024 for 128 threads
#define KMAX 64
#define SLACK 192          // candidates the list may hold before a step
#define CAP (SLACK + STEP) // room for a whole step of candidates beyond SLACK
#define FULL 0xffffffffu
#define G (4 * U >= 8 ? 8 : 4 * U) // values per warp vote in the filter

typedef unsigned long long u64;

struct __align__(16) Shared {
  float ring[NSLOT][STEP]; // the row, a step a slot, copied in by cp.async
  unsigned key[CAP];       // candidate values, as ordered unsigned keys
  int col[CAP];            // and their columns
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
__device__ void select_top(Shared& s, int k) {
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

__device__ __forceinline__ unsigned smem(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
// Step st of the row into its slot: each thread copies the pieces it will read itself, so its own
// cp.async.wait_group is all the ordering it needs. Past the row's end, zeros (made NaN on read).
// When V % 4 != 0 the rows are only 4-byte aligned: 4-byte copies (the small cases only).
__device__ __forceinline__ void issue(Shared& s, const float* row, int st, int V, bool vec) {
  float* sv = s.ring[st % NSLOT];
  const int base = st * STEP, t = threadIdx.x;
#pragma unroll
  for (int j = 0; j < U; ++j) {
    const int i = 4 * (j * BLOCK + t); // this piece's first value within the step
    if (vec) {
      const int n = max(0, min(4, V - base - i));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem(sv + i)),
                   "l"(row + base + min(i, max(0, V - base - 4))), "r"(4 * n)
                   : "memory");
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int n = base + i + e < V ? 4 : 0;
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem(sv + i + e)),
                     "l"(row + min(base + i + e, V - 1)), "r"(n)
                     : "memory");
      }
    }
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// The column of value j of this thread's share of the step starting at `base`.
__device__ __forceinline__ int column(int base, int j) {
  return base + 4 * ((j >> 2) * BLOCK + (int)threadIdx.x) + (j & 3);
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
// about k values instead of all 1024, and the 1024-candidate select is gone. Needs BLOCK >= k and
// a whole first step (no padding), which the caller checks.
__device__ float first_threshold(Shared& s, unsigned mkey, int k) {
  s.key[threadIdx.x] = mkey;
  s.col[threadIdx.x] = threadIdx.x; // any distinct columns: only the k-th value is wanted
  if (threadIdx.x == 0) s.count = BLOCK;
  __syncthreads();
  select_top(s, k);
  const float T = value_of(s.min_key);
  __syncthreads();                   // everyone has read s.min_key before the list is emptied
  if (threadIdx.x == 0) s.count = 0; // published by the barrier after the caller's
  return T;
}

#define MINB (BLOCK >= 1024 ? 1 : 1024 / BLOCK) // 8 blocks of 128 per SM: the rows in one wave
extern "C" __global__ void __launch_bounds__(BLOCK, MINB)
    topk_rows(const float* __restrict__ x, float* __restrict__ vals, int* __restrict__ idx,
              int rows, int V, int k) {
  __shared__ Shared s;
  const int t = threadIdx.x;
  const float* row = x + (long long)blockIdx.x * V;
  const bool vec = (V & 3) == 0; // rows start 16-byte aligned: 16-byte copies
  const int nsteps = (V + STEP - 1) / STEP;
  if (t == 0) s.count = 0;
  for (int i = 0; i < NSLOT - 1; ++i) issue(s, row, i, V, vec); // past the end: empty groups
  Filter f{true, -INFINITY, 0};
  const bool sample = BLOCK >= KMAX && V >= STEP;
  for (int st = 0; st < nsteps; ++st) {
    float* sv = s.ring[st % NSLOT];
    const int base = st * STEP;
    asm volatile("cp.async.wait_group %0;" ::"n"(NSLOT - 2) : "memory"); // this step has landed
    // One barrier a step: the previous step's appends are done, and if any thread saw the list
    // too long to take a whole step more, everyone selects. s.count is the largest `seen`.
    const bool crowded = __syncthreads_or(f.seen + STEP > CAP);
    // This thread is past the previous step: its pieces of that slot take step st + NSLOT - 1.
    if (st + NSLOT - 1 < nsteps)
      issue(s, row, st + NSLOT - 1, V, vec);
    else
      asm volatile("cp.async.commit_group;" ::: "memory"); // keeps the group count in step
    float v[4 * U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const float4 q = reinterpret_cast<const float4*>(sv)[j * BLOCK + t];
      v[4 * j] = q.x, v[4 * j + 1] = q.y, v[4 * j + 2] = q.z, v[4 * j + 3] = q.w;
    }
    if (base + STEP > V) // the last step: NaN past the row's end (passes no threshold)
#pragma unroll
      for (int j = 0; j < 4 * U; ++j)
        if (column(base, j) >= V) v[j] = NAN;
    if (st == 0 && sample) { // the first threshold from step 0 (see first_threshold)
      float m = v[0];
#pragma unroll
      for (int j = 1; j < 4 * U; ++j) m = fmaxf(m, v[j]);
      const float T = first_threshold(s, key_of(m), k);
      const float w = value_of(key_of(T) - 1u); // the float just below T (-0.0 when T is +0.0)
      f.thr = w == T ? -1.17549435e-38f : w; // so v > f.thr keeps every v >= T (and tiny negatives)
      f.open = false;
      __syncthreads(); // s.count = 0 is everyone's before the first append
    } else if (crowded) {
      select_top(s, k);
      f.seen = k;
      f.thr = value_of(s.min_key);
      f.open = false;
    }
    // G = 8 values at a time: if no lane of the warp has one that beats the threshold, which is
    // the usual case once it has risen, that is 7 max, a compare and one vote for 8 values.
#pragma unroll
    for (int g = 0; g < 4 * U; g += G) {
      float m = v[g];
#pragma unroll
      for (int j = g + 1; j < g + G; ++j) m = fmaxf(m, v[j]); // skips NaN padding
      if (!__any_sync(FULL, f.open || m > f.thr)) continue;
#pragma unroll
      for (int j = g; j < g + G; ++j) {
        const int c = column(base, j);
        if (f.open ? c < V : v[j] > f.thr) { // append (the warp's atomics on one word combine)
          const int p = atomicAdd(&s.count, 1);
          s.key[p] = key_of(v[j]);
          s.col[p] = c;
          f.seen = max(f.seen, p + 1);
        }
      }
    }
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
