#define DOCTEST_CONFIG_IMPLEMENT
// The simulator fills its lazily generated inputs from a SIGSEGV handler. doctest's own crash
// handler is put in front of it for each test case and taken away when the test case returns,
// before the reporters hear of its end: a prediction still running then (a cancelled check's)
// found no handler for its next page and the process died. So doctest leaves signals alone; a
// real crash still ends the run, and ctest reports it.
#define DOCTEST_CONFIG_NO_POSIX_SIGNALS
#include "core/check.hpp"

#include <doctest/doctest.h>

namespace {

// A cancelled check returns at once and leaves its prediction to stop on its own thread. Each test
// case ends with the predictions it started, so that one test's work never runs into the next.
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
