// The editor: the text model (edits, undo, tabs, diagnostics mapping) and the widget under a
// headless ImGui (clicks to lines, gutter markers, keys).
#include "gui/editor.hpp"
#include "headless.hpp"

#include <doctest/doctest.h>

using namespace wb::gui;

TEST_CASE("typing, newlines with indentation, and undo a word at a time") {
  TextModel m;
  m.set_text("void k() {\n}");
  m.set_cursor({0, 10});
  m.newline(); // after '{': one level more
  CHECK(m.lines()[1] == "  ");
  m.type("i");
  m.type("n");
  m.type("t");
  m.type(" ");
  m.type("x");
  CHECK(m.lines()[1] == "  int x");
  CHECK(m.undo()); // "x"
  CHECK(m.lines()[1] == "  int ");
  CHECK(m.undo()); // "int " (a word and the space after it)
  CHECK(m.lines()[1] == "  ");
  CHECK(m.redo());
  CHECK(m.lines()[1] == "  int ");
  CHECK(m.undo());
  CHECK(m.undo()); // the newline
  CHECK(m.text() == "void k() {\n}");
  CHECK_FALSE(m.can_undo());
}

TEST_CASE("backspace and delete join lines; runs of them undo together") {
  TextModel m;
  m.set_text("ab\ncd");
  m.set_cursor({1, 0});
  m.backspace();
  CHECK(m.text() == "abcd");
  CHECK(m.cursor() == TextPos{0, 2});
  m.backspace();
  CHECK(m.text() == "acd");
  m.undo();
  CHECK(m.text() == "ab\ncd");
  m.set_cursor({0, 0});
  m.del();
  m.del();
  m.del();
  CHECK(m.text() == "cd");
  m.undo();
  CHECK(m.text() == "ab\ncd");
}

TEST_CASE("Tab inserts spaces to the next stop, and indents a selection of lines") {
  TextModel m;
  m.set_text("x\ny\nz");
  m.set_cursor({0, 1});
  m.tab(4);
  CHECK(m.lines()[0] == "x   ");
  m.undo();
  m.select({0, 0}, {2, 1});
  m.tab(2);
  CHECK(m.text() == "  x\n  y\n  z");
  m.untab(2);
  CHECK(m.text() == "x\ny\nz");
  m.undo();
  m.undo();
  CHECK(m.text() == "x\ny\nz");
}

TEST_CASE("UTF-8 characters move and delete as one") {
  TextModel m;
  m.set_text("a\xC3\xA9z"); // aéz
  m.set_cursor({0, 1});
  m.move_right(false);
  CHECK(m.cursor().col == 3);
  m.backspace();
  CHECK(m.text() == "az");
}

TEST_CASE("diagnostics land on lines that exist, whatever the file became") {
  TextModel m;
  m.set_text("line one\n  line two\nthree");
  CHECK(m.from_diagnostic(2, 5) == TextPos{1, 4});
  CHECK(m.from_diagnostic(2, 0) == TextPos{1, 2});  // no column: the first non-blank
  CHECK(m.from_diagnostic(99, 3) == TextPos{2, 2}); // past the end: the last line
  CHECK(m.from_diagnostic(0, 0) == TextPos{0, 0});
  CHECK(m.from_diagnostic(1, 400) == TextPos{0, 8});
}

TEST_CASE("replace_all (a reload) is one undo step") {
  TextModel m;
  m.set_text("mine");
  m.type("!");
  m.replace_all("theirs");
  CHECK(m.text() == "theirs");
  m.undo();
  CHECK(m.text() == "!mine");
}

TEST_CASE("gutter figures say bytes used of bytes fetched and flag uncoalesced lines") {
  std::map<int, std::map<std::string, double>> by_line;
  by_line[5] = {{"global_load_requests", 100},
                {"global_load_sectors", 400},
                {"global_load_ideal_sectors", 400}};
  by_line[9] = {{"global_load_requests", 100},
                {"global_load_sectors", 3200},
                {"global_load_ideal_sectors", 400}};
  by_line[12] = {{"shared_bank_conflicts", 31}, {"shared_wavefronts", 32}};
  auto f = gutter_figures(by_line);
  CHECK(f[5].text == "128 of 128 B used per request");
  CHECK(f[5].mark == 'M');
  CHECK(f[5].badness == 0);
  CHECK(f[9].text == "128 of 1024 B used per request");
  CHECK(f[9].badness == 1);
  CHECK(f[12].text.find("31 bank") != std::string::npos);
  CHECK(f[12].mark == 'B');
  CHECK(f[12].badness > 0.5f);
  CHECK(f[9].tooltip.find("global_load_sectors") != std::string::npos);
}

TEST_CASE("the widget maps clicks to positions, markers to their lines, and keys to edits") {
  wb::test::Headless ui;
  TextModel m;
  m.set_text("extern \"C\" __global__ void k(int n) {\n  int i = threadIdx.x;\n  c[i] = a[i];\n  "
             "oops;\n}");
  EditorView v;
  v.font = ui.font();
  v.markers.push_back({4, 3, 0, "identifier \"oops\" is undefined"});
  v.figures[3] = {'M', "128 of 128 B used per request", "", 0};
  EditorFrame last;
  auto body = [&] { last = draw_editor("##ed", m, v); };
  ui.frame(body);
  REQUIRE(v.line_height > 0);
  REQUIRE(v.char_w > 0);
  CHECK(v.first_visible == 0);
  CHECK(v.last_visible == 4);

  // A click in the text at line 3, column 6 puts the cursor there (and focuses the editor).
  ImVec2 p(v.origin_x + v.char_w * 6 + 1, v.origin_y + v.line_height * 2.5f);
  ui.click(p, body);
  CHECK(m.cursor() == TextPos{2, 6});

  // A click on the marker in the gutter of line 4 jumps to the diagnostic's column.
  ImVec2 g(v.origin_x - v.gutter_w + v.char_w, v.origin_y + v.line_height * 3.5f);
  ImGui::GetIO().MousePos = g;
  ui.frame(body);
  CHECK(v.hovered_marker_line == 4);
  ui.click(g, body);
  CHECK(m.cursor() == TextPos{3, 2});

  // Typing, Tab and Ctrl+Z through ImGui's input.
  ui.type("x", body);
  CHECK(m.lines()[3] == "  xoops;");
  ui.press(ImGuiKey_Tab, false, body);
  CHECK(m.lines()[3] == "  x oops;");
  ui.press('Z', true, body);
  CHECK(m.lines()[3] == "  xoops;");
  ui.press('Z', true, body);
  CHECK(m.lines()[3] == "  oops;");

  // Ctrl+Enter asks to run, without touching the text.
  std::string before = m.text();
  ImGuiIO& io = ImGui::GetIO();
  io.KeysDown[io.KeyMap[ImGuiKey_Enter]] = true;
  io.KeyCtrl = true;
  ui.frame(body);
  CHECK(last.run_requested);
  io.KeysDown[io.KeyMap[ImGuiKey_Enter]] = false;
  io.KeyCtrl = false;
  ui.frame(body);
  CHECK(m.text() == before);

  // A jump asked for by a view (a diagnostic clicked in Results).
  v.goto_line = 2;
  v.goto_column = 9;
  ui.frame(body);
  CHECK(m.cursor() == TextPos{1, 8});
}

TEST_CASE("a 500-line file draws only the lines in view") {
  wb::test::Headless ui(800, 400);
  TextModel m;
  std::string t;
  for (int i = 0; i < 500; ++i) t += "  acc += a[i + " + std::to_string(i) + "];\n";
  m.set_text(t);
  EditorView v;
  v.font = ui.font();
  v.goto_line = 250;
  ui.frame([&] { draw_editor("##ed", m, v); });
  ui.frame([&] { draw_editor("##ed", m, v); });
  CHECK(v.first_visible > 200);
  CHECK(v.last_visible < 300);
  CHECK(v.last_visible - v.first_visible < 40);
  CHECK(m.cursor().line == 249);
}
