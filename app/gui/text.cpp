// Text that never cuts what it says: wrapped at spaces that do not split a figure from its digits
// or unit (core/format_figure.hpp), or cut to one line with an ellipsis and the whole on hover.
#include "text.hpp"

#include "core/format_figure.hpp"

#include <algorithm>

namespace wb::gui {

void text_wrap(const std::string& s, float width) {
  if (width <= 0) width = std::max(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 4);
  auto measure = [](std::string_view v) {
    return ImGui::CalcTextSize(v.data(), v.data() + v.size()).x;
  };
  ImGui::BeginGroup(); // after SameLine, every line starts where the first did
  for (auto l : wrap_lines(s, width, measure))
    ImGui::TextUnformatted(l.data(), l.data() + l.size());
  ImGui::EndGroup();
}

void text_wrap_colored(const ImVec4& col, const std::string& s) {
  ImGui::PushStyleColor(ImGuiCol_Text, col);
  text_wrap(s);
  ImGui::PopStyleColor();
}

void text_wrap_disabled(const std::string& s) {
  text_wrap_colored(ImGui::GetStyle().Colors[ImGuiCol_TextDisabled], s);
}

void tooltip_text(const std::string& s) {
  ImGui::BeginTooltip();
  text_wrap(s, ImGui::GetFontSize() * 32);
  ImGui::EndTooltip();
}

void text_fit(const std::string& s, bool disabled) {
  float avail = std::max(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 2);
  if (disabled)
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  if (ImGui::CalcTextSize(s.c_str()).x <= avail) {
    ImGui::TextUnformatted(s.c_str());
  } else {
    // Whole characters only: cut on a UTF-8 boundary, then add the ellipsis.
    const char* ell = "…";
    float ell_w = ImGui::CalcTextSize(ell).x;
    size_t n = s.size();
    while (n > 0 && ImGui::CalcTextSize(s.data(), s.data() + n).x + ell_w > avail) {
      --n;
      while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    }
    ImGui::TextUnformatted((s.substr(0, n) + ell).c_str());
    if (ImGui::IsItemHovered()) tooltip_text(s);
  }
  if (disabled) ImGui::PopStyleColor();
}

} // namespace wb::gui
