#include "report.hpp"

#include <fmt/format.h>

namespace wb {

std::string_view verdict_name(Verdict v) {
  switch (v) {
  case Verdict::passed:
    return "passed";
  case Verdict::wrong_answer:
    return "wrong_answer";
  case Verdict::compile_error:
    return "compile_error";
  case Verdict::runtime_fault:
    return "runtime_fault";
  case Verdict::usage_error:
    return "usage_error";
  }
  return "?";
}

int exit_code(Verdict v) {
  switch (v) {
  case Verdict::passed:
    return 0;
  case Verdict::wrong_answer:
    return 1;
  case Verdict::compile_error:
    return 2;
  case Verdict::runtime_fault:
    return 3;
  default:
    return 4;
  }
}

std::string_view fault_name(FaultKind k) {
  switch (k) {
  case FaultKind::none:
    return "none";
  case FaultKind::launch_config:
    return "bad launch configuration";
  case FaultKind::out_of_resources:
    return "too many resources requested for launch";
  case FaultKind::out_of_bounds:
    return "out-of-bounds access";
  case FaultKind::illegal_address:
    return "illegal memory access";
  case FaultKind::misaligned:
    return "misaligned address";
  case FaultKind::trap:
    return "trap";
  case FaultKind::assertion:
    return "assertion failed";
  case FaultKind::timeout:
    return "timeout";
  case FaultKind::deadlock:
    return "deadlock";
  case FaultKind::race:
    return "shared-memory race";
  case FaultKind::unsupported:
    return "unsupported instruction";
  case FaultKind::memory_limit:
    return "out of memory";
  case FaultKind::no_device:
    return "no device";
  case FaultKind::internal:
    return "internal error";
  }
  return "?";
}

std::string local_memory_refusal(int64_t local_bytes) {
  if (local_bytes <= kMaxLocalBytesPerThread) return "";
  return fmt::format("each thread needs {} bytes of local memory (its stack frame: arrays the "
                     "compiler could not keep in registers); a GPU thread may have at most {} "
                     "(512 KiB), so the driver refuses the launch. Make the per-thread array "
                     "smaller, or share it through shared or global memory",
                     local_bytes, kMaxLocalBytesPerThread);
}

std::string register_refusal(uint64_t threads, int most, int registers) {
  return fmt::format("a block of {} threads is more than this kernel can run: at most {}, limited "
                     "by its {} registers per thread or its __launch_bounds__",
                     threads, most, registers);
}

std::string resource_refusal(const std::vector<KernelResources>& resources,
                             const std::string& kernel, uint64_t threads) {
  for (auto& r : resources) {
    if (r.name != kernel) continue;
    if (r.registers > 0 && threads > uint64_t(max_threads_for_registers(r.registers)))
      return register_refusal(threads, max_threads_for_registers(r.registers), r.registers);
    return local_memory_refusal(r.local_bytes);
  }
  return "";
}

std::string DeviceInfo::arch() const {
  if (cc_major == 0) return "compute_80";
  return fmt::format("sm_{}{}", cc_major, cc_minor);
}

} // namespace wb
