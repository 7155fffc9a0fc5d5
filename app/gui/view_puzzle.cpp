// Puzzle: the statement, hints one at a time, and the solution only after the learner confirms.
#include "app.hpp"

#include <fmt/format.h>

namespace wb::gui {

void draw_puzzle(App& app) {
  PuzzleState& ps = app.puzzle;
  if (!ps.puzzle) return;
  const Puzzle& p = *ps.puzzle;
  ImGui::BeginChild("##puzzle_scroll", ImVec2(0, 0), false);
  float width = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize * 0.5f;
  std::string line = fmt::format("Puzzle {}, level {}{}", p.id, p.level,
                                 p.demo ? ", a demo: solved, to run and change" : "");
  if (!p.tags.empty()) {
    std::string tags;
    for (auto& t : p.tags) tags += (tags.empty() ? "" : ", ") + t;
    line += "  [" + tags + "]";
  }
  text_wrap_disabled(line);
  draw_markdown(ps.statement, ps.statement_view, width);

  // Hints, one at a time.
  ImGui::Separator();
  ImGui::PushFont(app.fonts.h3);
  ImGui::TextUnformatted("Hints");
  ImGui::PopFont();
  if (ps.hints.empty()) ImGui::TextDisabled("This puzzle has no hints.");
  for (int i = 0; i < ps.hints_shown && i < int(ps.hint_docs.size()); ++i) {
    ImGui::PushID(i);
    ImGui::TextColored(ImVec4(0.6f, 0.75f, 1, 1), "Hint %d", i + 1);
    ImGui::Indent();
    MdView& hv = ps.hints_view;
    // Each hint has its own document; the view's layout cache follows whichever is drawn.
    MdView local = hv;
    draw_markdown(ps.hint_docs[size_t(i)], local, width - ImGui::GetStyle().IndentSpacing);
    ImGui::Unindent();
    ImGui::PopID();
  }
  if (ps.hints_shown < int(ps.hints.size())) {
    std::string label = fmt::format("Show hint {} of {}", ps.hints_shown + 1, ps.hints.size());
    if (ImGui::Button(label.c_str())) reveal_hint(app);
    app.marks.add("hint");
  }

  // The solution, behind a confirmation.
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::PushFont(app.fonts.h3);
  ImGui::TextUnformatted("Solution");
  ImGui::PopFont();
  if (!ps.solution_shown) {
    ImGui::TextDisabled("A fast, explained solution. Worth trying the hints first.");
    if (ImGui::Button("Show the solution...")) ps.confirm_solution = true;
    app.marks.add("solution");
  } else {
    ImGui::PushFont(app.fonts.mono);
    ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 90));
    float lh = ImGui::GetTextLineHeightWithSpacing();
    int lines = 1;
    for (char c : ps.solution) lines += c == '\n';
    ImGui::BeginChild("##solution", ImVec2(width, std::min(lh * float(lines) + 16, 600.f)), true,
                      ImGuiWindowFlags_HorizontalScrollbar);
    ImGui::TextUnformatted(ps.solution.c_str());
    ImGui::EndChild();
    ImGui::PopStyleColor();
    ImGui::PopFont();
    if (ImGui::SmallButton("Copy the solution")) ImGui::SetClipboardText(ps.solution.c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("Hide it")) ps.solution_shown = false;
  }
  ImGui::EndChild();
}

} // namespace wb::gui
