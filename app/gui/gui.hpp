// The window (`warpbook` with no subcommand). app/gui/app.cpp has the main loop; each pane is
// one view_*.cpp file.
#pragma once
#include <string>

namespace wb::gui {

// Options of the window that only scripted tests, benchmarks and power users set; the CLI fills
// them (app/cli/cmd_window.cpp) before run_gui.
struct LaunchOptions {
  std::string script;    // run these commands (app/gui/script.hpp) and exit
  std::string runner;    // overrides the runner command setting for this session
  std::string size;      // "1600x1000"; empty: as the settings say
  bool no_vsync = false; // benchmarks
};
LaunchOptions& launch_options();

} // namespace wb::gui

// Opens the window; returns the process exit code.
int run_gui(int argc, char** argv, const std::string& catalog, const std::string& data_dir);
