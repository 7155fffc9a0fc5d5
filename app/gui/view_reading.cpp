// The reading column: the open lesson and the open puzzle's statement, as two tabs.
#include "app.hpp"

namespace wb::gui {

void draw_reading(App& app) {
  if (!app.lesson.lesson && !app.puzzle.puzzle) {
    ImGui::TextDisabled("Open a lesson or a puzzle from the catalog.");
    return;
  }
  if (ImGui::BeginTabBar("##reading")) {
    // A tab chosen from code (opening a puzzle, a link) is selected once; after that the
    // learner's clicks decide, and the settings remember which.
    int req = app.reading_tab_request;
    app.reading_tab_request = -1;
    if (app.lesson.lesson) {
      if (ImGui::BeginTabItem("Lesson", nullptr, req == 0 ? ImGuiTabItemFlags_SetSelected : 0)) {
        app.settings.reading_tab = 0;
        draw_lesson(app);
        ImGui::EndTabItem();
      }
      app.marks.add("tab:lesson");
    }
    if (app.puzzle.puzzle) {
      if (ImGui::BeginTabItem("Puzzle", nullptr, req == 1 ? ImGuiTabItemFlags_SetSelected : 0)) {
        app.settings.reading_tab = 1;
        draw_puzzle(app);
        ImGui::EndTabItem();
      }
      app.marks.add("tab:puzzle");
    }
    ImGui::EndTabBar();
  }
}

} // namespace wb::gui
