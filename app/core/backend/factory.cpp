#include "core/backend.hpp"

#include <future>

namespace wb {

namespace {
// NVRTC's first program in a process costs ~70 ms more than the next ones (seen on the H200
// machine: 85 ms, then 17 ms). Pay that while the driver creates its context (~350 ms) instead
// of in the learner's first check.
std::unique_ptr<Backend> cuda_with_warm_nvrtc(std::string& why) {
  auto warm = std::async(std::launch::async, [] {
    CompileOptions o;
    o.arch = "sm_80"; // a real arch, so ptxas is loaded too
    compile_source("extern \"C\" __global__ void warm_up() {}\n", "warm-up.cu", o);
  });
  auto b = make_cuda_backend(why);
  warm.get();
  return b;
}
} // namespace

std::unique_ptr<Backend> make_backend(const std::string& kind, std::string& why) {
  if (kind == "cuda") return cuda_with_warm_nvrtc(why);
  if (kind == "sim") return make_sim_backend(why);
  if (kind == "auto") {
    std::string cuda_why;
    if (auto b = cuda_with_warm_nvrtc(cuda_why)) return b;
    return make_sim_backend(why);
  }
  why = "unknown backend '" + kind + "' (use cuda, sim or auto)";
  return nullptr;
}

} // namespace wb
