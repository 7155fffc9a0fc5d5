// TEMPORARY while the backends are being written; deleted when cuda.cpp and sim/ land.
#include "core/backend.hpp"
namespace wb {
__attribute__((weak)) std::unique_ptr<Backend> make_cuda_backend(std::string& why) { why = "the CUDA backend is not built yet"; return nullptr; }
__attribute__((weak)) std::unique_ptr<Backend> make_sim_backend(std::string& why) { why = "the simulator is not built yet"; return nullptr; }
}
