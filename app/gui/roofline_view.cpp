#include "roofline_view.hpp"

#include "core/format_figure.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace wb::gui {

PlotFrame RoofAxes::frame() const {
  PlotFrame f;
  f.rect = {a.x, a.y, b.x, b.y};
  f.x_lo = x_lo, f.x_hi = x_hi, f.y_lo = y_lo, f.y_hi = y_hi;
  return f;
}

ImVec2 RoofAxes::to_px(double x, double y) const {
  PlotFrame f = frame();
  return ImVec2(float(f.px(x)), float(f.py(y)));
}

double RoofAxes::intensity_at(float px) const {
  return frame().intensity_at(px);
}

double RoofAxes::gflops_at(float py) const {
  return frame().gflops_at(py);
}

namespace {

ImU32 roof_color(const std::string& metric, int alpha = 255) {
  if (metric == metric::dram) return IM_COL32(70, 150, 230, alpha);
  if (metric == metric::l2) return IM_COL32(40, 190, 200, alpha);
  if (metric == metric::shared) return IM_COL32(170, 130, 220, alpha);
  if (metric == metric::fp32) return IM_COL32(235, 80, 75, alpha);
  if (metric == metric::fp64) return IM_COL32(180, 120, 100, alpha);
  if (metric == metric::fp16_tc) return IM_COL32(255, 150, 40, alpha);
  if (metric == metric::bf16_tc) return IM_COL32(235, 130, 200, alpha);
  return IM_COL32(160, 160, 160, alpha);
}

const ImU32 kTickInk = IM_COL32(170, 170, 170, 255), kAxisInk = IM_COL32(150, 150, 150, 255),
            kRidgeInk = IM_COL32(210, 210, 210, 220), kCurrentInk = IM_COL32(235, 255, 235, 255),
            kReferenceInk = IM_COL32(190, 190, 190, 255);

void dashed(ImDrawList* dl, ImVec2 p, ImVec2 q, ImU32 c, float w) {
  float dx = q.x - p.x, dy = q.y - p.y;
  float len = std::sqrt(dx * dx + dy * dy);
  if (len < 1) return;
  float step = 7, on = 4;
  for (float t = 0; t < len; t += step) {
    float t1 = std::min(len, t + on);
    dl->AddLine(ImVec2(p.x + dx * t / len, p.y + dy * t / len),
                ImVec2(p.x + dx * t1 / len, p.y + dy * t1 / len), c, w);
  }
}

void roof_line(ImDrawList* dl, ImVec2 p, ImVec2 q, const Roof& r, bool main) {
  ImU32 c = roof_color(r.metric, main ? 255 : 150);
  float w = main ? 2.0f : 1.2f;
  if (r.measured)
    dl->AddLine(p, q, c, w);
  else
    dashed(dl, p, q, c, w);
}

void current_marker(ImDrawList* dl, ImVec2 q, float r) {
  dl->AddCircleFilled(q, r, IM_COL32(80, 220, 120, 255), 16);
  dl->AddCircle(q, r, IM_COL32(255, 255, 255, 255), 16, 1.5f);
}

void reference_marker(ImDrawList* dl, ImVec2 q, float r) {
  dl->AddQuadFilled(ImVec2(q.x, q.y - r), ImVec2(q.x + r, q.y), ImVec2(q.x, q.y + r),
                    ImVec2(q.x - r, q.y), IM_COL32(150, 150, 150, 255));
}

} // namespace

void draw_roofline_chart(RoofPanel& p, ImVec2 size, ImFont* small) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 a = ImGui::GetCursorScreenPos();
  ImVec2 b(a.x + size.x, a.y + size.y);
  ImGui::InvisibleButton("##roofline", ImVec2(std::max(1.f, size.x), std::max(1.f, size.y)));
  bool hovered = ImGui::IsItemHovered();
  bool clicked = ImGui::IsItemClicked(0);
  p.clicked_attempt = 0;
  p.drawn_text.clear();
  if (!small) small = ImGui::GetFont();
  const float fs = small->FontSize;

  if (!p.geo_valid) {
    // Labelled: the learner's kernel (its label placed first), then the reference solution; the
    // trail's labels are in its tooltips.
    p.chart.points.clear();
    p.chart_point.clear();
    for (auto kind : {ChartPoint::current, ChartPoint::reference, ChartPoint::trail})
      for (size_t i = 0; i < p.points.size(); ++i) {
        const ChartPoint& pt = p.points[i];
        if (pt.kind != kind) continue;
        p.chart.points.push_back(
            {kind == ChartPoint::trail ? "" : pt.label, pt.intensity, pt.gflops, "attempt"});
        p.chart_point.push_back(i);
      }
    p.geo = chart_geometry(p.chart);
    p.geo_valid = true;
    p.layout_valid = false;
  }
  const ChartGeometry& g = p.geo;
  const TextBox region{a.x, a.y, b.x, b.y};
  if (!p.layout_valid || !(region == p.layout_region) || fs != p.layout_font) {
    MeasureText measure = [small](const std::string& t, double sz) {
      ImVec2 v = small->CalcTextSizeA(float(sz), FLT_MAX, 0, t.c_str());
      return TextExtent{v.x, v.y};
    };
    p.layout = layout_chart_pane(p.chart, g, region, measure, fs);
    p.layout_region = region, p.layout_font = fs, p.layout_valid = true;
  }
  const ChartPane& pane = p.layout;
  RoofAxes ax;
  ax.x_lo = g.x_lo, ax.x_hi = g.x_hi, ax.y_lo = g.y_lo, ax.y_hi = g.y_hi;
  ax.a = ImVec2(float(pane.frame.rect.x0), float(pane.frame.rect.y0));
  ax.b = ImVec2(float(pane.frame.rect.x1), float(pane.frame.rect.y1));
  p.axes = ax;

  // Every text goes through here, which keeps what it drew for the tests.
  auto text = [&](const ChartLabel& l, ImU32 col, const char* kind) {
    ImVec2 at(float(l.box.x0), float(l.box.y0));
    ImVec2 sz = small->CalcTextSizeA(fs, FLT_MAX, 0, l.text.c_str());
    dl->AddText(small, fs, at, col, l.text.c_str());
    p.drawn_text.push_back({l.text, kind, ImVec4(at.x, at.y, at.x + sz.x, at.y + sz.y)});
  };
  auto point_of = [&](const ChartLabel& l) -> const ChartPoint& {
    return p.points[p.chart_point[l.index]];
  };

  dl->AddRectFilled(ax.a, ax.b, IM_COL32(22, 24, 30, 255));
  dl->PushClipRect(a, b, true);
  // Grid, tick labels, the axis title.
  for (auto& t : g.x_ticks) {
    if (t.value < g.x_lo * 0.999 || t.value > g.x_hi * 1.001) continue;
    float x = ax.to_px(t.value, g.y_lo).x;
    dl->AddLine(ImVec2(x, ax.a.y), ImVec2(x, ax.b.y),
                t.major ? IM_COL32(255, 255, 255, 38) : IM_COL32(255, 255, 255, 14));
  }
  for (auto& t : g.y_ticks) {
    if (t.value < g.y_lo * 0.999 || t.value > g.y_hi * 1.001) continue;
    float y = ax.to_px(g.x_lo, t.value).y;
    dl->AddLine(ImVec2(ax.a.x, y), ImVec2(ax.b.x, y),
                t.major ? IM_COL32(255, 255, 255, 38) : IM_COL32(255, 255, 255, 14));
  }
  for (auto& l : pane.labels.placed)
    if (l.kind == ChartLabel::Kind::tick_x || l.kind == ChartLabel::Kind::tick_y)
      text(l, kTickInk, "tick");
  if (!pane.axis_title.text.empty()) text(pane.axis_title, kAxisInk, "axis");

  // Roofs (measured solid, datasheet dashed), ridges, points, then the labels over them.
  dl->PushClipRect(ax.a, ax.b, true);
  for (auto& s : g.segments)
    roof_line(dl, ax.to_px(s.x0, s.y0), ax.to_px(s.x1, s.y1), p.chart.roofs[s.roof],
              s.roof < g.main_roof.size() && g.main_roof[s.roof]);
  for (auto& r : g.ridges)
    dl->AddCircle(ax.to_px(r.intensity, r.gflops), 4, IM_COL32(255, 255, 255, 200), 12, 1.5f);

  // Points: the trail fades with age (oldest faintest), then the reference, then the current.
  int n_trail = 0;
  for (auto& pt : p.points) n_trail += pt.kind == ChartPoint::trail;
  int trail_i = 0;
  ImVec2 mouse = ImGui::GetIO().MousePos;
  int best = -1;
  float best_d = 8 * 8;
  const int order[3] = {ChartPoint::trail, ChartPoint::reference, ChartPoint::current};
  for (int pass : order)
    for (size_t i = 0; i < p.points.size(); ++i) {
      const ChartPoint& pt = p.points[i];
      if (int(pt.kind) != pass || !(pt.intensity > 0) || !(pt.gflops > 0)) continue;
      ImVec2 q = ax.to_px(pt.intensity, pt.gflops);
      if (pt.kind == ChartPoint::trail) {
        // Newest attempts come first in the list.
        float age = n_trail > 1 ? float(trail_i++) / float(n_trail - 1) : 0;
        int alpha = int(220 - 150 * age);
        // Hexagons without anti-aliasing: 6 vertices a point keeps a 1000-point history cheap
        // for software renderers, and at 3 pixels nobody sees the corners.
        ImDrawListFlags keep = dl->Flags;
        dl->Flags &= ~ImDrawListFlags_AntiAliasedFill;
        dl->AddCircleFilled(q, 3.5f, IM_COL32(120, 170, 230, alpha), 6);
        dl->Flags = keep;
      } else if (pt.kind == ChartPoint::reference) {
        reference_marker(dl, q, 6);
      } else {
        current_marker(dl, q, 7);
      }
      if (hovered) {
        float dx = mouse.x - q.x, dy = mouse.y - q.y;
        if (dx * dx + dy * dy <= best_d) {
          best_d = dx * dx + dy * dy;
          best = int(i);
        }
      }
    }
  // The solution's point under the learner's (the same figures): its diamond drawn again as an
  // outline around both, so that neither hides the other.
  for (auto& r : p.points) {
    if (r.kind != ChartPoint::reference || !(r.intensity > 0) || !(r.gflops > 0)) continue;
    ImVec2 q = ax.to_px(r.intensity, r.gflops);
    for (auto& c : p.points) {
      if (c.kind != ChartPoint::current || !(c.intensity > 0) || !(c.gflops > 0)) continue;
      ImVec2 k = ax.to_px(c.intensity, c.gflops);
      if (std::hypot(k.x - q.x, k.y - q.y) > 8) continue;
      const float d = 10;
      dl->AddQuad(ImVec2(q.x, q.y - d), ImVec2(q.x + d, q.y), ImVec2(q.x, q.y + d),
                  ImVec2(q.x - d, q.y), IM_COL32(170, 170, 170, 255), 2);
    }
  }
  for (auto& l : pane.labels.placed) {
    if (l.kind == ChartLabel::Kind::roof)
      text(l, roof_color(p.chart.roofs[l.index].metric), "roof");
    if (l.kind == ChartLabel::Kind::ridge) text(l, kRidgeInk, "ridge");
    if (l.kind == ChartLabel::Kind::point)
      text(l, point_of(l).kind == ChartPoint::current ? kCurrentInk : kReferenceInk, "point");
  }
  dl->PopClipRect();
  dl->AddRect(ax.a, ax.b, IM_COL32(255, 255, 255, 60));

  // The legend: labels with no room on the plot, each after a sample of what it names.
  for (auto& e : pane.legend) {
    const ChartLabel& l = e.label;
    ImVec2 s0(float(e.swatch.x0), float(e.swatch.y0)), s1(float(e.swatch.x1), float(e.swatch.y1));
    ImVec2 mid((s0.x + s1.x) * 0.5f, (s0.y + s1.y) * 0.5f);
    if (l.kind == ChartLabel::Kind::roof) {
      const Roof& r = p.chart.roofs[l.index];
      roof_line(dl, ImVec2(s0.x, mid.y), ImVec2(s1.x, mid.y), r, true);
      text(l, roof_color(r.metric), "legend");
    } else if (l.kind == ChartLabel::Kind::ridge) {
      dl->AddCircle(mid, 4, IM_COL32(255, 255, 255, 200), 12, 1.5f);
      text(l, kRidgeInk, "legend");
    } else {
      bool current = point_of(l).kind == ChartPoint::current;
      if (current)
        current_marker(dl, mid, 5);
      else
        reference_marker(dl, mid, 5);
      text(l, current ? kCurrentInk : kReferenceInk, "legend");
    }
  }
  dl->PopClipRect();

  p.hovered = best;
  if (best >= 0) {
    const ChartPoint& pt = p.points[size_t(best)];
    ImVec2 q = ax.to_px(pt.intensity, pt.gflops);
    dl->AddCircle(q, 10, IM_COL32(255, 255, 255, 255), 16, 1.5f);
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(pt.label.c_str());
    ImGui::Separator();
    ImGui::Text("%s, %s%s", intensity_text(pt.intensity).c_str(), flops_text(pt.gflops).c_str(),
                pt.predicted ? " (predicted)" : "");
    for (size_t k = 0; k < p.chart_point.size() && k < g.above_roof.size(); ++k)
      if (p.chart_point[k] == size_t(best) && g.above_roof[k])
        ImGui::TextDisabled("(!) above the roof: a wrong [cost], or data from cache");
    if (!pt.tooltip.empty()) ImGui::TextUnformatted(pt.tooltip.c_str());
    if (pt.attempt > 0 && pt.kind == ChartPoint::trail)
      ImGui::TextDisabled("click to show this attempt");
    ImGui::EndTooltip();
    if (clicked) p.clicked_attempt = pt.attempt;
  } else if (hovered && ax.inside(mouse)) {
    // Where the mouse is, and what the roofs allow there.
    double x = ax.intensity_at(mouse.x), y = ax.gflops_at(mouse.y);
    ImGui::BeginTooltip();
    ImGui::Text("%s, %s", intensity_text(x).c_str(), flops_text(y).c_str());
    for (size_t i = 0; i < p.chart.roofs.size(); ++i) {
      const Roof& r = p.chart.roofs[i];
      if (r.kind != Roof::Kind::memory || !(r.value > 0) ||
          (i < g.main_roof.size() && !g.main_roof[i]))
        continue;
      for (size_t k = 0; k < p.chart.roofs.size(); ++k) {
        const Roof& c = p.chart.roofs[k];
        if (c.kind != Roof::Kind::compute || !(c.value > 0) ||
            (k < g.main_roof.size() && !g.main_roof[k]))
          continue;
        if (r.metric != metric::dram) continue;
        ImGui::TextDisabled("%s at this intensity: %s (%s x %s)", c.name.c_str(),
                            flops_text(attainable_gflops(x, r.value, c.value)).c_str(),
                            r.name.c_str(), c.name.c_str());
      }
    }
    ImGui::EndTooltip();
  }
}

} // namespace wb::gui
