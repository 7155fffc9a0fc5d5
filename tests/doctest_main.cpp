#define DOCTEST_CONFIG_IMPLEMENT
#include "core/check.hpp"

#include <doctest/doctest.h>

namespace {

// A cancelled check returns at once and leaves its prediction to stop on its own thread. That
// thread's sampled run reads lazily filled memory, which is filled from a SIGSEGV handler; doctest
// puts its own crash handler in front at every test case, so a prediction still running into the
// next test case would be reported as that test's crash. Each test case ends with the predictions
// it started.
struct WaitForPredictions : doctest::IReporter {
  explicit WaitForPredictions(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override { wb::wait_for_predictions(); }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("wait-for-predictions", 1, WaitForPredictions);

} // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  wb::wait_for_predictions(); // a cancelled check's prediction may still be compiling
  return rc;
}
