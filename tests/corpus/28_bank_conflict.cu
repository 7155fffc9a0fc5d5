// Shared-memory bank conflicts on purpose: each thread writes and reads s[threadIdx.x * stride]
// (stride 32 is a 32-way conflict, stride 1 and 33 are conflict-free); out[i] = the value read + 1.
extern "C" __global__ void bank_conflict(float* out, int stride) {
  __shared__ float s[32 * 33];
  int t = threadIdx.x;
  s[(t * stride) % (32 * 33)] = (float)t;
  __syncwarp();
  out[blockIdx.x * blockDim.x + t] = s[(t * stride) % (32 * 33)] + 1.0f;
}
