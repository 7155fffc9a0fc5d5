// StopOnCtrlC (command.hpp): a SIGINT handler that only sets a flag and writes a fixed message,
// both async-signal-safe.
#include "command.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace {

std::atomic<bool> g_stop{false};
const char* g_message = "";
void (*g_previous)(int) = SIG_DFL;

extern "C" void warpbook_on_sigint(int) {
  if (g_stop.exchange(true)) std::_Exit(130);
  (void)!::write(2, g_message, std::strlen(g_message));
}

} // namespace

namespace wb::cli {

StopOnCtrlC::StopOnCtrlC(const char* message) {
  g_message = message;
  g_stop = false;
  g_previous = std::signal(SIGINT, warpbook_on_sigint);
}

StopOnCtrlC::~StopOnCtrlC() {
  std::signal(SIGINT, g_previous);
}

const std::atomic<bool>* StopOnCtrlC::flag() const {
  return &g_stop;
}

} // namespace wb::cli
