// `warpbook runner`: the child process the window does all its compile and run work through
// (JSON lines on stdin/stdout; app/core/runner.hpp has the protocol). Run it by hand to talk to it:
//   echo '{"id":1,"op":"hello"}' | warpbook runner
#include "command.hpp"
#include "core/runner.hpp"

#include <unistd.h>

namespace {

wb::cli::Registration reg("runner", [](CLI::App& app, wb::cli::Global& g) -> std::function<int()> {
  app.add_subcommand("runner", "serve compile/check/run requests as JSON lines on stdin/stdout "
                               "(what the window starts; `ssh HOST warpbook runner` works too)");
  return [&g]() {
    // Only protocol lines may reach stdout: keep a private copy of it for events and send
    // everything else that prints (libraries, a learner's stray output) to stderr.
    int out = ::dup(1);
    ::dup2(2, 1);
    wb::runner::ServeOptions opt;
    opt.catalog = g.catalog;
    return wb::runner::serve(0, out, opt);
  };
});

} // namespace
