#include "core/backend.hpp"

namespace wb {

std::unique_ptr<Backend> make_backend(const std::string& kind, std::string& why) {
  if (kind == "cuda") return make_cuda_backend(why);
  if (kind == "sim") return make_sim_backend(why);
  if (kind == "auto") {
    std::string cuda_why;
    if (auto b = make_cuda_backend(cuda_why)) return b;
    return make_sim_backend(why);
  }
  why = "unknown backend '" + kind + "' (use cuda, sim or auto)";
  return nullptr;
}

} // namespace wb
