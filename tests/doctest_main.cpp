#define DOCTEST_CONFIG_IMPLEMENT
#include "core/check.hpp"

#include <doctest/doctest.h>

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  wb::wait_for_predictions(); // a cancelled check's prediction may still be compiling
  return rc;
}
