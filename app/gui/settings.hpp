// The window's layout and options: a plain struct with defaults, loaded from a small key = value
// file and range-checked (a hand-edited or stale file can never make the window unusable).
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace wb::gui {

struct Settings {
  // Window
  int window_w = 1440, window_h = 900;
  bool maximized = false;
  float font_size = 15; // points at scale 1, before the monitor's content scale
  float ui_scale = 0;   // 0: the monitor's content scale
  // Layout, as fractions of the window so it survives a resize.
  float catalog_w = 0.17f; // catalog column
  float reading_w = 0.36f; // lesson/puzzle column, of what the catalog leaves
  float device_h = 0.30f;  // device panel under the catalog
  float editor_h = 0.58f;  // editor, of the right column
  float results_w = 0.55f; // results beside the roofline, of the bottom right
  // Runner
  std::string runner_command; // empty: this executable's `runner`
  std::string backend = "auto";
  float request_timeout_s = 300; // a check on the simulator can take a while
  // What the simulator's roofline models ("h200", ...).
  std::string gpu_profile = "h200";
  // Editor
  int tab_width = 4;
  bool gutter_counters = true;
  float autosave_s = 1.0f; // after the last keystroke; at most 2 s
  // What was open: "puzzle:01-vector-add", "lesson:0001-...".
  std::string open_item;
  std::string open_lesson; // the lesson shown beside a puzzle
  int reading_tab = 0;     // 0 lesson, 1 puzzle

  // Problems met while loading ("line 4: font_size 400 is out of range 8..40; using 15").
  std::vector<std::string> warnings;
};

Settings load_settings(const std::filesystem::path& file);
// Atomic write; returns "" or why it failed.
std::string save_settings(const Settings& s, const std::filesystem::path& file);
std::string settings_text(const Settings& s);
Settings parse_settings(const std::string& text);

} // namespace wb::gui
