// The Results pane after Tune and Sweep: the ranked table of configurations (with a button that
// puts the fastest one's @tune lines into the file), and the sweep's chart, drawn from the same
// shapes `warpbook sweep --svg` writes.
#include "app.hpp"

#include "core/format_figure.hpp"

#include <fmt/format.h>

namespace wb::gui {

namespace {

ImU32 to_u32(Rgb c, double opacity = 1) {
  return IM_COL32(c.r, c.g, c.b, int(255 * opacity));
}

// Shapes in chart pixels onto the draw list, scaled to fit `size` at the cursor.
void draw_shapes(const std::vector<Shape>& shapes, float w, float h, ImVec2 size, ImFont* font) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 o = ImGui::GetCursorScreenPos();
  float sx = size.x / w, sy = size.y / h;
  auto P = [&](double x, double y) { return ImVec2(o.x + float(x) * sx, o.y + float(y) * sy); };
  for (const Shape& s : shapes) {
    switch (s.type) {
    case Shape::Type::line:
      if (s.dashed) {
        // Dashes of 7 on, 5 off, as in the SVG.
        ImVec2 a = P(s.x0, s.y0), b = P(s.x1, s.y1);
        float len = std::hypot(b.x - a.x, b.y - a.y);
        for (float t = 0; t < len; t += 12) {
          float t1 = std::min(len, t + 7);
          dl->AddLine(ImVec2(a.x + (b.x - a.x) * t / len, a.y + (b.y - a.y) * t / len),
                      ImVec2(a.x + (b.x - a.x) * t1 / len, a.y + (b.y - a.y) * t1 / len),
                      to_u32(s.stroke, s.opacity), float(s.width));
        }
      } else {
        dl->AddLine(P(s.x0, s.y0), P(s.x1, s.y1), to_u32(s.stroke, s.opacity), float(s.width));
      }
      break;
    case Shape::Type::rect:
      if (s.filled) dl->AddRectFilled(P(s.x0, s.y0), P(s.x1, s.y1), to_u32(s.fill, s.opacity));
      if (s.stroked) dl->AddRect(P(s.x0, s.y0), P(s.x1, s.y1), to_u32(s.stroke), 0, 0, 1);
      break;
    case Shape::Type::circle:
      if (s.filled) dl->AddCircleFilled(P(s.x0, s.y0), float(s.radius), to_u32(s.fill));
      if (s.stroked)
        dl->AddCircle(P(s.x0, s.y0), float(s.radius), to_u32(s.stroke), 0, float(s.width));
      break;
    case Shape::Type::text: {
      float px = float(s.size) * std::min(sx, sy) * 1.15f;
      ImVec2 ts = font->CalcTextSizeA(px, FLT_MAX, 0, s.text.c_str());
      ImVec2 at = P(s.x0, s.y0);
      at.y -= ts.y * 0.8f; // the shape's y is the baseline
      if (s.anchor == 0) at.x -= ts.x / 2;
      if (s.anchor > 0) at.x -= ts.x;
      dl->AddText(font, px, at, to_u32(s.fill), s.text.c_str());
      break;
    }
    }
  }
}

} // namespace

void draw_tune_results(App& app) {
  const TuneReport& t = *app.results.tune;
  ImGui::PushFont(app.fonts.h2);
  ImGui::TextUnformatted(t.winner >= 0 ? "Tuned" : "No configuration passed");
  ImGui::PopFont();
  const bool predicted = t.winner >= 0 && t.rows[size_t(t.winner)].predicted;
  ImGui::TextDisabled("%d configurations of %s on %s%s, seed %llu, %.1f s%s", t.configurations,
                      t.puzzle.c_str(), t.device.name.c_str(),
                      predicted ? fmt::format(" (predicted for the {})", t.model_gpu).c_str() : "",
                      (unsigned long long)t.seed, t.total_ms / 1e3,
                      t.cancelled ? ", cancelled" : "");
  if (t.winner >= 0) {
    const TuneRow& w = t.rows[size_t(t.winner)];
    std::string line =
        fmt::format("Fastest: {}, {}{} ({} of speed of light)", config_text(w.config),
                    time_text(w.us), w.predicted ? " predicted" : "", percent_text(w.sol));
    if (t.default_row >= 0 && t.default_row != t.winner && t.margin() >= 1.02)
      line += fmt::format(", {}x faster than your file's", sig3(t.margin()));
    else if (t.default_row == t.winner)
      line += ": your file's configuration already";
    else if (t.default_row >= 0)
      line += ": within 2% of yours, which is noise";
    ImGui::TextWrapped("%s", line.c_str());
    if (t.default_row != t.winner) {
      if (ImGui::Button("Use the fastest (writes its @tune lines)")) apply_tunables(app, w.config);
      app.marks.add("tune-apply");
    }
  }
  if (ImGui::BeginTable(
          "##tune", 6,
          ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
              ImGuiTableFlags_ScrollY,
          ImVec2(0, std::min(ImGui::GetTextLineHeightWithSpacing() * float(t.rows.size() + 2),
                             ImGui::GetContentRegionAvail().y * 0.6f)))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("#");
    ImGui::TableSetupColumn("configuration");
    ImGui::TableSetupColumn("time");
    ImGui::TableSetupColumn("SOL");
    ImGui::TableSetupColumn("medal");
    ImGui::TableSetupColumn("limiter, or why it failed", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    int rank = 0;
    for (size_t i = 0; i < t.rows.size(); ++i) {
      const TuneRow& r = t.rows[i];
      const bool timed = r.timed();
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (timed)
        ImGui::Text("%d", ++rank);
      else
        ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      ImGui::PushID(int(i));
      std::string label = config_text(r.config) + (r.is_default ? "  (yours)" : "");
      if (ImGui::Selectable(label.c_str(), int(i) == t.winner,
                            ImGuiSelectableFlags_SpanAllColumns) &&
          timed)
        apply_tunables(app, r.config);
      if (ImGui::IsItemHovered() && timed) ImGui::SetTooltip("Click to use this configuration.");
      ImGui::PopID();
      ImGui::TableNextColumn();
      if (timed)
        ImGui::Text("%s%s", time_text(r.us).c_str(), r.predicted ? "*" : "");
      else
        ImGui::TextColored(ImVec4(1, 0.5f, 0.45f, 1), "%s",
                           std::string(verdict_name(r.verdict)).c_str());
      ImGui::TableNextColumn();
      if (timed) ImGui::Text("%.0f%%", 100 * r.sol);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.medal.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(timed ? r.limiter.c_str() : r.why.c_str());
    }
    ImGui::EndTable();
  }
  if (predicted) ImGui::TextDisabled("*: predicted by the performance model, not measured");
}

void draw_sweep_results(App& app) {
  const SweepReport& s = *app.results.sweep;
  ImGui::PushFont(app.fonts.h2);
  ImGui::Text("%s across %s", s.metric.c_str(), s.var.c_str());
  ImGui::PopFont();
  for (auto& series : s.series)
    if (!series.problem.empty())
      ImGui::TextColored(ImVec4(1, 0.5f, 0.45f, 1), "%s failed its check: %s", series.name.c_str(),
                         series.problem.c_str());
  // Laid out at the pane's own size (not scaled), so its text stays the size of the UI's.
  float w = std::max(320.0f, ImGui::GetContentRegionAvail().x);
  float h = std::max(240.0f, std::min(w * 0.62f, ImGui::GetContentRegionAvail().y - 8));
  draw_shapes(sweep_shapes(s, int(w), int(h)), w, h, ImVec2(w, h),
              app.fonts.ui ? app.fonts.ui : ImGui::GetFont());
  ImGui::Dummy(ImVec2(w, h));
  app.marks.add("sweep-chart");
}

} // namespace wb::gui
