// Loops with break: for each row of `cols` ints, pos[r] = the first column holding `key`, or -1;
// each thread scans one row and leaves the loop early.
extern "C" __global__ void find_first(const int* m, int* pos, int rows, int cols, int key) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  int found = -1;
  for (int c = 0; c < cols; ++c) {
    if (m[r * cols + c] == key) {
      found = c;
      break;
    }
  }
  pos[r] = found;
}
