#include "gui/settings.hpp"

#include <doctest/doctest.h>

using namespace wb::gui;

TEST_CASE("settings load range-checked; bad values keep their defaults and say why") {
  Settings s = parse_settings("# a comment\n"
                              "font_size = 18\n"
                              "catalog_w = 0.9\n"   // out of range
                              "backend = quantum\n" // not a choice
                              "autosave_s = fast\n" // not a number
                              "runner_command = ssh gpu-box warpbook runner\n"
                              "no_such_key = 1\n"
                              "this line has no equals\n"
                              "gutter_counters = false\n");
  CHECK(s.font_size == 18);
  CHECK(s.catalog_w == Settings{}.catalog_w);
  CHECK(s.backend == "auto");
  CHECK(s.autosave_s == Settings{}.autosave_s);
  CHECK(s.runner_command == "ssh gpu-box warpbook runner");
  CHECK_FALSE(s.gutter_counters);
  CHECK(s.warnings.size() == 5);
  CHECK(s.warnings[0].find("line 3") != std::string::npos);
}

TEST_CASE("settings survive a round trip through their file") {
  Settings s;
  s.open_item = "puzzle:03-softmax";
  s.editor_h = 0.4f;
  s.window_w = 1777;
  Settings t = parse_settings(settings_text(s));
  CHECK(t.warnings.empty());
  CHECK(t.open_item == "puzzle:03-softmax");
  CHECK(t.editor_h == doctest::Approx(0.4f));
  CHECK(t.window_w == 1777);
}
