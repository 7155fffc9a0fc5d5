// Corpus · v07-transpose-naive-strided-reads · designed limiter: sectors
//
// What: a direct transpose without shared memory whose WRITES are coalesced and whose READS are
// strided (the mirror image of the reference). Block of 32 x 8 threads per 32 x 32 tile:
// threadIdx.x walks input rows (= output columns), so a warp writes 32 consecutive floats of one
// output row and reads 32 floats of one input column, `cols` floats apart.
// Run:  warpbook check 07-transpose bench/perfmodel/corpus/v07-transpose-naive-strided-reads.cu
//
// Why it is slow: each warp load touches 32 different 128-byte lines and uses 4 bytes of each
// 32-byte sector: 32 sectors per request where 4 would do (sim: global_load_sectors = 8x ideal).
// The other 7 floats of each sector are read by the next iterations of the same block, so they
// usually hit in L1 (32 lines x 128 B = 4 KB per block) and DRAM traffic stays near 8 B per
// element; what is exhausted is the L1's tag and sector throughput: 32 tag lookups and 32 sectors
// per load instruction, with 2^26 / 32 load instructions over 132 SMs ~ 16 K per SM x 32 ~ 0.5 M
// sector-cycles. Expected: well under the padded shared-memory version, limited in L1/LSU by
// sectors per request.
// @tune TILE=32
// @tune ROWS=8

extern "C" __global__ void transpose(const float* __restrict__ input, float* __restrict__ output,
                                     int rows, int cols) {
  const long long r = (long long)blockIdx.y * TILE + threadIdx.x; // input row = output column
  if (r >= rows) return;
  for (int j = threadIdx.y; j < TILE; j += ROWS) {
    const long long c = (long long)blockIdx.x * TILE + j; // input column = output row
    if (c < cols) output[c * rows + r] = input[r * cols + c];
  }
}
