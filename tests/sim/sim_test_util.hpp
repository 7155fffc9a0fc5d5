// The simulator tests' helpers live in tests/common/sim_plan.hpp (the GPU parity test uses them
// too).
#pragma once
#include "common/sim_plan.hpp"
