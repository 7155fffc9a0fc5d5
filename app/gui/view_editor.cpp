// Editor: the learner's file (workspace/NN-slug.cu) with its run buttons, save state, the
// "changed on disk" question, and the editor widget with diagnostics and per-line counters.
#include "app.hpp"

#include <fmt/format.h>

namespace wb::gui {

namespace {

void header(App& app) {
  PuzzleState& ps = app.puzzle;
  ImGui::PushFont(app.fonts.bold);
  ImGui::TextUnformatted("Editor");
  ImGui::PopFont();
  ImGui::SameLine();
  ImGui::TextDisabled("%s", ps.file.path().empty() ? ps.puzzle->id.c_str()
                                                   : ps.file.path().filename().string().c_str());
  ImGui::SameLine();
  bool dirty = ps.text.version() != ps.synced_version;
  if (!ps.save_error.empty())
    ImGui::TextColored(ImVec4(1, 0.4f, 0.3f, 1), "not saved: %s", ps.save_error.c_str());
  else if (dirty)
    ImGui::TextDisabled("(editing)");
  else
    ImGui::TextDisabled("(saved)");

  // Buttons at the right end of the header line.
  bool running = app.run && !app.run->reference;
  float bw = ImGui::CalcTextSize("Run (Ctrl+Enter)").x + ImGui::CalcTextSize("Compile").x +
             ImGui::CalcTextSize("Tune").x + ImGui::CalcTextSize("Sweep").x +
             ImGui::CalcTextSize("Reset...").x + ImGui::GetStyle().FramePadding.x * 10 +
             ImGui::GetStyle().ItemSpacing.x * 5;
  ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x - bw));
  // Run stays where it is while a check runs: pressed again it cancels that check and checks
  // what the editor holds now (a double click must not turn into a Cancel).
  ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.2f, 0.45f, 0.25f, 1));
  ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImVec4(0.25f, 0.58f, 0.32f, 1));
  if (ImGui::Button("Run (Ctrl+Enter)")) run_check(app);
  app.marks.add("run");
  ImGui::PopStyleColor(2);
  ImGui::SameLine();
  if (running) {
    ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.55f, 0.25f, 0.2f, 1));
    if (ImGui::Button(app.run->cancelling ? "Cancelling..." : "Cancel run")) cancel_run(app);
    app.marks.add("cancel");
    ImGui::PopStyleColor();
  } else {
    if (ImGui::Button("Compile")) run_compile(app);
    app.marks.add("compile");
    ImGui::SameLine();
    ImGui::BeginDisabled(ps.puzzle->tunables.empty());
    if (ImGui::Button("Tune")) run_tune(app);
    ImGui::EndDisabled();
    app.marks.add("tune");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(ps.puzzle->tunables.empty()
                            ? "This puzzle has no tunables."
                            : "Try every combination of the tunables: each is checked, then "
                              "timed (GPU) or predicted (simulator), and ranked.");
    ImGui::SameLine();
    if (ImGui::Button("Sweep")) run_sweep(app);
    app.marks.add("sweep");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Your kernel, the solution and the reference across sizes: GB/s "
                        "against size, with the DRAM roof.");
  }
  ImGui::SameLine();
  if (ImGui::Button("Reset...")) ps.confirm_reset = true;
  app.marks.add("reset");
}

void conflict_banner(App& app) {
  PuzzleState& ps = app.puzzle;
  ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(110, 70, 20, 200));
  ImGui::BeginChild("##conflict", ImVec2(0, ImGui::GetFrameHeightWithSpacing() * 2.2f), true);
  ImGui::TextWrapped(
      "%s changed on disk while you had edits here that were not saved yet. Which version do you "
      "want?",
      ps.file.path().filename().string().c_str());
  if (ImGui::Button("Keep mine (overwrite the file)")) keep_mine(app);
  app.marks.add("keep-mine");
  ImGui::SameLine();
  if (ImGui::Button("Take the file's (mine stays in undo)")) take_disk(app);
  app.marks.add("take-disk");
  ImGui::EndChild();
  ImGui::PopStyleColor();
}

} // namespace

void draw_editor_pane(App& app) {
  PuzzleState& ps = app.puzzle;
  if (!ps.puzzle) {
    ImGui::PushFont(app.fonts.bold);
    ImGui::TextUnformatted("Editor");
    ImGui::PopFont();
    ImGui::Separator();
    ImGui::TextDisabled("Open a puzzle to write its kernel here.");
    return;
  }
  header(app);
  if (ps.conflict) conflict_banner(app);

  ps.editor.tab_width = app.settings.tab_width;
  if (ps.focus_editor) {
    // Focus without moving the cursor: a zero goto keeps it where it is.
    ImGui::SetNextWindowFocus();
    ps.focus_editor = false;
  }
  prune_annotations(ps.editor, ps.text);
  if (!ps.editor.figures.empty()) {
    // The gutter's letters, explained once, cut to the pane (the whole legend on hover).
    text_fit(gutter_legend(), true);
  }
  uint64_t before = ps.text.version();
  EditorFrame fr = draw_editor("##code", ps.text, ps.editor);
  if (ps.text.version() != before) ps.last_edit = app.now;
  ImGuiIO& io = ImGui::GetIO();
  bool run_key =
      io.KeyCtrl && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false) ||
                     ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_KeyPadEnter), false));
  if (fr.run_requested || run_key) run_check(app); // supersedes a check in progress
  if (fr.save_requested) save_now(app);
}

} // namespace wb::gui
