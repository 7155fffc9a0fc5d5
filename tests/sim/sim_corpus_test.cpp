// The corpus on the simulator (CI); the cases live in tests/common/corpus_suite.hpp, shared with
// the GPU parity test.
#include "common/corpus_suite.hpp"
