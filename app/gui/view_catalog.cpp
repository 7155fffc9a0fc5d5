// Catalog: lessons in order, each with the puzzles it prepares, then the puzzles no lesson names;
// each puzzle with the learner's standing from the store.
#include "app.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace wb::gui {

namespace {

// A small state badge drawn on the draw list (no font glyphs needed): hollow = new, amber =
// attempted, green tick = passed, a coloured disc with a tick = medal.
void badge(const PuzzleProgress* p, float size) {
  ImVec2 c = ImGui::GetCursorScreenPos();
  c.x += size * 0.5f;
  c.y += ImGui::GetTextLineHeight() * 0.5f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float r = size * 0.36f;
  if (!p || p->attempts == 0) {
    dl->AddCircle(c, r, IM_COL32(140, 140, 150, 255), 16, 1.2f);
  } else if (!p->passed) {
    dl->AddCircleFilled(c, r, IM_COL32(225, 160, 50, 255), 16);
  } else {
    ImU32 fill = p->medal.empty() ? IM_COL32(60, 170, 90, 255) : medal_color(p->medal);
    dl->AddCircleFilled(c, r, fill, 16);
    dl->AddLine(ImVec2(c.x - r * 0.5f, c.y), ImVec2(c.x - r * 0.1f, c.y + r * 0.45f),
                IM_COL32(20, 20, 20, 255), 1.6f);
    dl->AddLine(ImVec2(c.x - r * 0.1f, c.y + r * 0.45f), ImVec2(c.x + r * 0.55f, c.y - r * 0.45f),
                IM_COL32(20, 20, 20, 255), 1.6f);
  }
  ImGui::Dummy(ImVec2(size, ImGui::GetTextLineHeight()));
  ImGui::SameLine();
}

std::string short_id(const std::string& id) {
  size_t dash = id.find('-');
  return dash == std::string::npos ? id : id.substr(0, dash);
}

void puzzle_row(App& app, const Puzzle& p, float indent) {
  ImGui::PushID(p.id.c_str());
  if (indent > 0) ImGui::Indent(indent);
  auto it = app.progress.find(p.id);
  badge(it == app.progress.end() ? nullptr : &it->second, ImGui::GetTextLineHeight());
  bool open = app.puzzle.puzzle == &p;
  std::string label = fmt::format("{}  {}{}", short_id(p.id), p.title, p.demo ? "  (demo)" : "");
  if (ImGui::Selectable(label.c_str(), open)) open_puzzle(app, p.id);
  app.marks.add("puzzle:" + p.id);
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::Text("%s: %s, level %d", p.id.c_str(), p.title.c_str(), p.level);
    if (it != app.progress.end()) {
      const PuzzleProgress& pr = it->second;
      std::string medal = pr.medal.empty()     ? ""
                          : pr.medal_predicted ? ", " + pr.medal + " (predicted)"
                                               : ", " + pr.medal;
      ImGui::Text("%d attempt%s%s%s", pr.attempts, pr.attempts == 1 ? "" : "s",
                  pr.passed ? ", passed" : "", medal.c_str());
      if (pr.best_sol > 0) ImGui::Text("best: %.0f%% of speed of light", 100 * pr.best_sol);
    } else {
      ImGui::TextDisabled("not tried yet");
    }
    ImGui::EndTooltip();
  }
  if (indent > 0) ImGui::Unindent(indent);
  ImGui::PopID();
}

} // namespace

std::vector<const Puzzle*> catalog_order(const Catalog& c) {
  std::vector<const Puzzle*> out;
  std::set<std::string> seen;
  for (auto& l : c.lessons)
    for (auto& pid : l.puzzles)
      if (const Puzzle* p = c.find_puzzle(pid); p && seen.insert(p->id).second) out.push_back(p);
  for (auto& p : c.puzzles)
    if (seen.insert(p.id).second) out.push_back(&p);
  return out;
}

void open_next_puzzle(App& app, int step) {
  auto order = catalog_order(app.catalog);
  if (order.empty()) return;
  auto it = std::find(order.begin(), order.end(), app.puzzle.puzzle);
  long i = it == order.end() ? (step > 0 ? -1 : long(order.size())) : long(it - order.begin());
  i = std::clamp(i + step, 0L, long(order.size()) - 1);
  open_puzzle(app, order[size_t(i)]->id);
  app.settings.open_item = "puzzle:" + order[size_t(i)]->id;
}

ImU32 medal_color(const std::string& m) {
  if (m == "gold") return IM_COL32(230, 190, 60, 255);
  if (m == "silver") return IM_COL32(190, 195, 205, 255);
  if (m == "bronze") return IM_COL32(200, 125, 70, 255);
  return IM_COL32(120, 120, 120, 255);
}

ImVec4 verdict_color(Verdict v) {
  switch (v) {
  case Verdict::passed:
    return ImVec4(0.40f, 0.85f, 0.45f, 1);
  case Verdict::wrong_answer:
    return ImVec4(0.95f, 0.45f, 0.35f, 1);
  case Verdict::compile_error:
    return ImVec4(0.95f, 0.65f, 0.30f, 1);
  case Verdict::runtime_fault:
    return ImVec4(0.95f, 0.35f, 0.55f, 1);
  default:
    return ImVec4(0.7f, 0.7f, 0.7f, 1);
  }
}

void draw_catalog(App& app) {
  ImGui::PushFont(app.fonts.bold);
  ImGui::TextUnformatted("Catalog");
  ImGui::PopFont();
  int passed = 0;
  for (auto& p : app.catalog.puzzles)
    passed += app.progress.count(p.id) && app.progress[p.id].passed;
  ImGui::SameLine();
  text_fit(fmt::format("{} of {} puzzles passed", passed, app.catalog.puzzles.size()), true);
  ImGui::Separator();
  ImGui::BeginChild("##catalog_list", ImVec2(0, 0), false);
  std::map<std::string, bool> listed;
  float indent = ImGui::GetTextLineHeight() * 0.9f;
  for (auto& l : app.catalog.lessons) {
    ImGui::PushID(l.id.c_str());
    bool open = app.lesson.lesson == &l && app.settings.reading_tab == 0;
    bool read = app.lessons_read.count(l.id) > 0;
    ImGui::PushStyleColor(ImGuiCol_Text,
                          read ? ImVec4(0.75f, 0.78f, 0.85f, 1) : ImVec4(0.95f, 0.95f, 1, 1));
    ImGui::PushFont(app.fonts.bold);
    std::string label = fmt::format("{}  {}", l.id.substr(0, 4), l.title);
    if (ImGui::Selectable(label.c_str(), open)) {
      open_lesson(app, l.id);
      app.settings.open_item = "lesson:" + l.id;
    }
    app.marks.add("lesson:" + l.id);
    // A title the pane cuts reads whole on hover.
    if (ImGui::IsItemHovered() && ImGui::CalcTextSize(label.c_str()).x > ImGui::GetItemRectSize().x)
      tooltip_text(label);
    ImGui::PopFont();
    ImGui::PopStyleColor();
    for (auto& pid : l.puzzles)
      if (const Puzzle* p = app.catalog.find_puzzle(pid)) {
        puzzle_row(app, *p, indent);
        listed[p->id] = true;
      }
    ImGui::PopID();
  }
  bool header = false;
  for (auto& p : app.catalog.puzzles) {
    if (listed.count(p.id)) continue;
    if (!header && !app.catalog.lessons.empty()) {
      ImGui::Spacing();
      ImGui::TextDisabled("More puzzles");
    }
    header = true;
    puzzle_row(app, p, 0);
  }
  if (app.catalog.puzzles.empty() && app.catalog.lessons.empty()) {
    ImGui::TextWrapped("No lessons or puzzles in %s.", app.catalog.root.string().c_str());
    for (auto& e : app.catalog.errors) ImGui::TextWrapped("%s", e.str().c_str());
  }
  ImGui::EndChild();
}

} // namespace wb::gui
