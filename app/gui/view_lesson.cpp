// Lesson: the title, what the learner will be able to do, then the Markdown body (md4c) with
// pictures, links that open puzzles, and quizzes that answer back.
#include "app.hpp"

namespace wb::gui {

void draw_lesson(App& app) {
  LessonState& ls = app.lesson;
  if (!ls.lesson) return;
  ImGui::BeginChild("##lesson_scroll", ImVec2(0, 0), false);
  if (app.lesson_scroll_to) {
    // Scripts (and links to a section, one day) scroll to a line of the lesson's layout.
    ImGui::SetScrollY(*app.lesson_scroll_to);
    app.lesson_scroll_to.reset();
  }
  float width = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize * 0.5f;
  ImGui::PushFont(app.fonts.h1);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  ImGui::TextWrapped("%s", ls.lesson->title.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
  ImGui::TextDisabled("Lesson %s", ls.lesson->id.substr(0, 4).c_str());
  if (!ls.lesson->objectives.empty()) {
    ImGui::Spacing();
    ImGui::PushFont(app.fonts.bold);
    ImGui::TextUnformatted("After this lesson you can:");
    ImGui::PopFont();
    for (auto& o : ls.lesson->objectives) {
      ImGui::Bullet();
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width - ImGui::GetTreeNodeToLabelSpacing());
      ImGui::TextWrapped("%s", o.c_str());
      ImGui::PopTextWrapPos();
    }
  }
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::Spacing();
  draw_markdown(ls.doc, ls.view, width);
  if (!ls.lesson->puzzles.empty()) {
    ImGui::Separator();
    ImGui::TextDisabled("Puzzles for this lesson:");
    for (auto& id : ls.lesson->puzzles) {
      ImGui::SameLine();
      if (ImGui::SmallButton(id.c_str())) open_puzzle(app, id);
    }
  }
  ImGui::EndChild();
}

} // namespace wb::gui
