// Options of the window itself (`warpbook --script FILE`, `--runner CMD`): they belong to the
// top-level command because the window is what `warpbook` with no subcommand opens.
#include "command.hpp"

#ifdef WARPBOOK_HAVE_GUI
#include "gui/gui.hpp"

namespace {

wb::cli::Registration reg("window", [](CLI::App& app, wb::cli::Global&) -> std::function<int()> {
  auto& o = wb::gui::launch_options();
  app.add_option("--script", o.script, "window: run a test script (app/gui/script.hpp) and exit");
  app.add_option(
      "--runner", o.runner,
      "window: the command that starts the runner, e.g. \"ssh gpu-box warpbook runner\"");
  app.add_option("--window-size", o.size, "window: WIDTHxHEIGHT in pixels (default: as last time)");
  app.add_flag("--no-vsync", o.no_vsync, "window: draw as fast as possible (benchmarks)");
  return {};
});

} // namespace
#endif
