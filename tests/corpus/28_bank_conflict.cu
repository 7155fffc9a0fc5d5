// Shared-memory bank conflicts on purpose: each warp has its own slice of 32 x 33 floats, and lane
// l writes and reads slice[(l * stride) % (32 * 33)] (stride 32 is a 32-way conflict, stride 1 and
// 33 are conflict-free, stride 0 a broadcast); out[i] = the value read + 1. Up to 256 threads.
extern "C" __global__ void bank_conflict(float* out, int stride) {
  __shared__ float s[8][32 * 33];
  int t = threadIdx.x, w = t / 32, lane = t % 32;
  s[w][(lane * stride) % (32 * 33)] = (float)t;
  __syncwarp();
  out[blockIdx.x * blockDim.x + t] = s[w][(lane * stride) % (32 * 33)] + 1.0f;
}
