// The window's frame: the menu, the status bar (runner, progress, cancel, save state) and the
// dialogs (solution, reset, settings, runner log).
#include "app.hpp"

#include <fmt/format.h>
#include <imgui_stdlib.h>

namespace wb::gui {

void draw_menu(App& app) {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    bool has = app.puzzle.puzzle != nullptr;
    if (ImGui::MenuItem("Run", "Ctrl+Enter", false, has)) run_check(app);
    if (ImGui::MenuItem("Compile only", nullptr, false, has)) run_compile(app);
    if (ImGui::MenuItem("Save", "Ctrl+S", false, has)) save_now(app);
    ImGui::Separator();
    if (ImGui::MenuItem("Settings...")) app.show_settings = true;
    ImGui::Separator();
    if (ImGui::MenuItem("Quit")) app.quit = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Edit")) {
    TextModel& t = app.puzzle.text;
    if (ImGui::MenuItem("Undo", "Ctrl+Z", false, t.can_undo()))
      t.undo(), app.puzzle.last_edit = app.now;
    if (ImGui::MenuItem("Redo", "Ctrl+Y", false, t.can_redo()))
      t.redo(), app.puzzle.last_edit = app.now;
    ImGui::EndMenu();
  }
  // Lesson, puzzle, edit, Run, result, next puzzle: all from the keyboard, each key shown here.
  ImGuiIO& io = ImGui::GetIO();
  auto ctrl_key = [&](int key) { return io.KeyCtrl && ImGui::IsKeyPressed(key, false); };
  const Puzzle* open = app.puzzle.puzzle;
  const Lesson* lesson = open ? app.catalog.find_lesson(open->lesson) : nullptr;
  bool next = ctrl_key(ImGui::GetKeyIndex(ImGuiKey_PageDown));
  bool prev = ctrl_key(ImGui::GetKeyIndex(ImGuiKey_PageUp));
  bool to_lesson = lesson && ctrl_key('L');
  bool hint = open && ctrl_key('H');
  if (ImGui::BeginMenu("Go")) {
    next |= ImGui::MenuItem("Next puzzle", "Ctrl+PgDn");
    prev |= ImGui::MenuItem("Previous puzzle", "Ctrl+PgUp");
    to_lesson |= ImGui::MenuItem("The puzzle's lesson", "Ctrl+L", false, lesson != nullptr);
    hint |= ImGui::MenuItem("Next hint", "Ctrl+H", false, open != nullptr);
    ImGui::EndMenu();
  }
  if (next || prev) open_next_puzzle(app, next ? 1 : -1);
  if (to_lesson) open_lesson(app, lesson->id);
  if (hint) reveal_hint(app);
  if (ImGui::BeginMenu("View")) {
    ImGui::MenuItem("Runner log", nullptr, &app.show_log);
    if (ImGui::MenuItem("Per-line counters in the editor", nullptr,
                        &app.settings.gutter_counters) &&
        app.results.report && !app.settings.gutter_counters)
      app.puzzle.editor.figures.clear();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("About Warpbook")) app.show_about = true;
    ImGui::EndMenu();
  }
  ImGui::EndMenuBar();
}

void draw_status_bar(App& app) {
  ImGui::Dummy(ImVec2(0, 2));
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + 8 * app.scale);
  // Runner first: the learner needs to know whether their work can run.
  bool alive = app.runner->running();
  ImVec4 col = alive && app.device.hello ? ImVec4(0.5f, 0.85f, 0.55f, 1)
               : alive                   ? ImVec4(0.8f, 0.8f, 0.5f, 1)
                                         : ImVec4(0.75f, 0.75f, 0.75f, 1);
  if (!alive && !app.device.exit_note.empty() && app.now - app.device.exit_at < 30)
    col = ImVec4(1, 0.55f, 0.45f, 1);
  ImGui::TextColored(col, "%s", runner_state_text(app).c_str());
  if (app.run) {
    ImGui::SameLine();
    const RunState& r = *app.run;
    std::string what = r.reference                   ? "reference solution"
                       : r.op == runner::Op::compile ? "compiling"
                                                     : "checking";
    ImGui::Text("|  %s: %s", what.c_str(), r.phase.c_str());
    ImGui::SameLine();
    float frac = r.total > 0 ? float(r.done) / float(r.total) : 0;
    ImGui::ProgressBar(frac, ImVec2(160 * app.scale, ImGui::GetTextLineHeight()),
                       fmt::format("{:.1f} s", app.now - r.started).c_str());
    if (!r.reference) {
      ImGui::SameLine();
      if (ImGui::SmallButton(r.cancelling ? "cancelling..." : "Cancel")) cancel_run(app);
      app.marks.add("status-cancel");
    }
  }
  if (!app.notices.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("|  %s", app.notices.back().c_str());
  }
  if (!app.store_error.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1, 0.5f, 0.4f, 1), "|  store: %s", app.store_error.c_str());
  }
}

void draw_dialogs(App& app) {
  PuzzleState& ps = app.puzzle;
  if (ps.confirm_solution) {
    ImGui::OpenPopup("See the solution?");
    ps.confirm_solution = false;
  }
  if (ImGui::BeginPopupModal("See the solution?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextUnformatted("The solution shows one fast way to solve this puzzle.");
    ImGui::TextUnformatted(
        "Puzzles teach most when you get there yourself: the hints go one step at a time.");
    if (ImGui::Button("Show me the solution")) {
      show_solution(app);
      ImGui::CloseCurrentPopup();
    }
    app.marks.add("confirm-solution");
    ImGui::SameLine();
    if (ImGui::Button("Not yet") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
      ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  if (ps.confirm_reset) {
    ImGui::OpenPopup("Start again from the starter?");
    ps.confirm_reset = false;
  }
  if (ImGui::BeginPopupModal("Start again from the starter?", nullptr,
                             ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextUnformatted(
        "Your file is replaced by the puzzle's starter. Undo (Ctrl+Z) brings it back,");
    ImGui::TextUnformatted("and every version you ran is kept with its attempt.");
    if (ImGui::Button("Replace my file")) {
      reset_to_starter(app);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Keep it") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
      ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }

  if (app.show_settings) {
    ImGui::SetNextWindowSize(ImVec2(560 * app.scale, 0), ImGuiCond_Appearing);
    if (ImGui::Begin("Settings", &app.show_settings, ImGuiWindowFlags_NoCollapse)) {
      Settings& s = app.settings;
      static std::string command;
      if (ImGui::IsWindowAppearing()) command = s.runner_command;
      ImGui::TextUnformatted("Runner command (empty: this program's own runner)");
      ImGui::SetNextItemWidth(-1);
      ImGui::InputTextWithHint("##runner", "ssh gpu-box warpbook runner", &command);
      ImGui::TextDisabled(
          "A runner on another machine gives this window its GPU (see docs/gui.md).");
      if (ImGui::Button("Apply and restart the runner")) {
        s.runner_command = command;
        apply_runner_settings(app);
      }
      ImGui::Separator();
      const char* backends[] = {"auto", "cuda", "sim"};
      int bi = s.backend == "cuda" ? 1 : s.backend == "sim" ? 2 : 0;
      if (ImGui::Combo("Backend", &bi, backends, 3)) s.backend = backends[bi];
      ImGui::SliderFloat("Request timeout (s)", &s.request_timeout_s, 5, 1800, "%.0f");
      ImGui::SliderFloat("Autosave after (s)", &s.autosave_s, 0.1f, 2.0f, "%.1f");
      ImGui::SliderInt("Tab width", &s.tab_width, 1, 8);
      ImGui::TextDisabled("Font size and scale apply at the next start.");
      ImGui::SliderFloat("Font size", &s.font_size, 8, 40, "%.0f");
      ImGui::SliderFloat("UI scale (0: the monitor's)", &s.ui_scale, 0, 4, "%.2f");
      ImGui::TextDisabled("Settings file: %s", app.settings_path.string().c_str());
      ImGui::TextDisabled("Data: %s", app.data_dir.c_str());
    }
    ImGui::End();
  }

  if (app.show_log) {
    ImGui::SetNextWindowSize(ImVec2(720 * app.scale, 360 * app.scale), ImGuiCond_Appearing);
    if (ImGui::Begin("Runner log", &app.show_log)) {
      ImGui::PushFont(app.fonts.mono);
      for (auto& l : app.log) ImGui::TextUnformatted(l.c_str());
      for (auto& n : app.notices) ImGui::TextDisabled("%s", n.c_str());
      if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY()) ImGui::SetScrollHereY(1.0f);
      ImGui::PopFont();
    }
    ImGui::End();
  }

  if (app.show_about) {
    ImGui::OpenPopup("About Warpbook");
    app.show_about = false;
  }
  if (ImGui::BeginPopupModal("About Warpbook", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextUnformatted("Warpbook: learn to write fast GPU kernels.");
    ImGui::Text("Catalog: %s", app.catalog.root.string().c_str());
    ImGui::Text("Data: %s", app.data_dir.c_str());
    ImGui::Text("Fonts: %s",
                app.fonts.packaged ? app.fonts.sans_path.c_str() : "ImGui's built-in font");
    if (ImGui::Button("Close")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

} // namespace wb::gui
