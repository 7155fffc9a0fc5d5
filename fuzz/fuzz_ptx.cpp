// libFuzzer target: see fuzz_entries.hpp and docs/faults.md ("Fuzzing").
#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return wb::fuzz::ptx(data, size);
}
