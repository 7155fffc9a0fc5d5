#include "roofline_view.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace wb::gui {

ImVec2 RoofAxes::to_px(double x, double y) const {
  double fx = (std::log10(x) - std::log10(x_lo)) / (std::log10(x_hi) - std::log10(x_lo));
  double fy = (std::log10(y) - std::log10(y_lo)) / (std::log10(y_hi) - std::log10(y_lo));
  return ImVec2(a.x + float(fx) * (b.x - a.x), b.y - float(fy) * (b.y - a.y));
}

double RoofAxes::intensity_at(float px) const {
  double f = double(px - a.x) / double(b.x - a.x);
  return std::pow(10.0, std::log10(x_lo) + f * (std::log10(x_hi) - std::log10(x_lo)));
}

double RoofAxes::gflops_at(float py) const {
  double f = double(b.y - py) / double(b.y - a.y);
  return std::pow(10.0, std::log10(y_lo) + f * (std::log10(y_hi) - std::log10(y_lo)));
}

RoofAxes fit_axes(const ChartGeometry& g, ImVec2 a, ImVec2 b, float label_w, float label_h) {
  RoofAxes ax;
  ax.x_lo = g.x_lo, ax.x_hi = g.x_hi, ax.y_lo = g.y_lo, ax.y_hi = g.y_hi;
  ax.a = ImVec2(a.x + label_w, a.y + label_h * 0.5f);
  ax.b = ImVec2(b.x - label_h * 0.5f, b.y - label_h * 2.2f);
  // Never a degenerate rectangle, however small the pane.
  if (ax.b.x < ax.a.x + 10) ax.b.x = ax.a.x + 10;
  if (ax.b.y < ax.a.y + 10) ax.b.y = ax.a.y + 10;
  return ax;
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

std::string flops_text(double gflops) {
  if (gflops >= 1e3) return fmt::format("{:.3g} TFLOP/s", gflops / 1e3);
  if (gflops >= 1) return fmt::format("{:.3g} GFLOP/s", gflops);
  return fmt::format("{:.3g} MFLOP/s", gflops * 1e3);
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
  if (!small) small = ImGui::GetFont();
  float fs = small->FontSize;

  if (!p.geo_valid) {
    p.chart.points.clear();
    for (auto& pt : p.points)
      p.chart.points.push_back({pt.label, pt.intensity, pt.gflops, "attempt"});
    p.geo = chart_geometry(p.chart);
    p.geo_valid = true;
  }
  const ChartGeometry& g = p.geo;
  float label_w = small->CalcTextSizeA(fs, FLT_MAX, 0, "100 TFLOP/s").x + 6;
  RoofAxes ax = fit_axes(g, a, b, label_w, fs * 1.3f);
  p.axes = ax;

  dl->AddRectFilled(ax.a, ax.b, IM_COL32(22, 24, 30, 255));
  dl->PushClipRect(a, b, true);
  // Grid and ticks.
  for (auto& t : g.x_ticks) {
    if (t.value < g.x_lo * 0.999 || t.value > g.x_hi * 1.001) continue;
    float x = ax.to_px(t.value, g.y_lo).x;
    dl->AddLine(ImVec2(x, ax.a.y), ImVec2(x, ax.b.y),
                t.major ? IM_COL32(255, 255, 255, 38) : IM_COL32(255, 255, 255, 14));
    if (!t.label.empty()) {
      float w = small->CalcTextSizeA(fs, FLT_MAX, 0, t.label.c_str()).x;
      dl->AddText(small, fs, ImVec2(x - w * 0.5f, ax.b.y + 3), IM_COL32(170, 170, 170, 255),
                  t.label.c_str());
    }
  }
  for (auto& t : g.y_ticks) {
    if (t.value < g.y_lo * 0.999 || t.value > g.y_hi * 1.001) continue;
    float y = ax.to_px(g.x_lo, t.value).y;
    dl->AddLine(ImVec2(ax.a.x, y), ImVec2(ax.b.x, y),
                t.major ? IM_COL32(255, 255, 255, 38) : IM_COL32(255, 255, 255, 14));
    if (!t.label.empty()) {
      float w = small->CalcTextSizeA(fs, FLT_MAX, 0, t.label.c_str()).x;
      dl->AddText(small, fs, ImVec2(ax.a.x - w - 4, y - fs * 0.5f), IM_COL32(170, 170, 170, 255),
                  t.label.c_str());
    }
  }
  const char* xlab = "arithmetic intensity (FLOP/byte)";
  float xw = small->CalcTextSizeA(fs, FLT_MAX, 0, xlab).x;
  dl->AddText(small, fs, ImVec2((ax.a.x + ax.b.x - xw) * 0.5f, ax.b.y + fs * 1.15f),
              IM_COL32(150, 150, 150, 255), xlab);

  // Roofs: measured solid, datasheet dashed; a label at the roof's right end.
  dl->PushClipRect(ax.a, ax.b, true);
  for (auto& s : g.segments) {
    const Roof& r = p.chart.roofs[s.roof];
    bool main = s.roof < g.main_roof.size() && g.main_roof[s.roof];
    ImU32 c = roof_color(r.metric, main ? 255 : 150);
    ImVec2 p0 = ax.to_px(s.x0, s.y0), p1 = ax.to_px(s.x1, s.y1);
    float w = main ? 2.0f : 1.2f;
    if (r.measured)
      dl->AddLine(p0, p1, c, w);
    else
      dashed(dl, p0, p1, c, w);
  }
  // Labels never overlap: each takes the first free spot going down from where it wants to be.
  std::vector<ImVec4> placed;
  auto place = [&](ImVec2 want, const std::string& t, ImU32 col) {
    ImVec2 sz = small->CalcTextSizeA(fs, FLT_MAX, 0, t.c_str());
    for (int tries = 0; tries < 6; ++tries) {
      ImVec4 r(want.x, want.y, want.x + sz.x, want.y + sz.y);
      bool clash = false;
      for (auto& o : placed) clash |= r.x < o.z && o.x < r.z && r.y < o.w && o.y < r.w;
      if (!clash) {
        placed.push_back(r);
        dl->AddText(small, fs, want, col, t.c_str());
        return;
      }
      want.y += sz.y + 1;
    }
  };
  for (auto& r : g.ridges) {
    ImVec2 q = ax.to_px(r.intensity, r.gflops);
    dl->AddCircle(q, 4, IM_COL32(255, 255, 255, 200), 12, 1.5f);
    place(ImVec2(q.x + 5, q.y + 3), fmt::format("ridge {:.3g}", r.intensity),
          IM_COL32(210, 210, 210, 220));
  }
  // Roof names, placed at the right edge where each roof leaves the chart.
  for (size_t i = 0; i < p.chart.roofs.size(); ++i) {
    const Roof& r = p.chart.roofs[i];
    if (!(r.value > 0) || (i < g.main_roof.size() && !g.main_roof[i])) continue;
    std::string t = r.label();
    float tw = small->CalcTextSizeA(fs, FLT_MAX, 0, t.c_str()).x;
    ImVec2 q;
    if (r.kind == Roof::Kind::compute) {
      q = ax.to_px(g.x_hi, r.value);
      q = ImVec2(ax.b.x - tw - 4, q.y - fs - 1);
    } else {
      // Where the memory roof is at a third of the width.
      double x = ax.intensity_at(ax.a.x + (ax.b.x - ax.a.x) * 0.08f);
      q = ax.to_px(x, r.value * x);
      q = ImVec2(q.x + 2, q.y - fs - 2);
    }
    place(q, t, roof_color(r.metric));
  }

  // Points: the trail fades with age (oldest faintest), then the reference, then the current.
  int n_trail = 0;
  for (auto& pt : p.points) n_trail += pt.kind == ChartPoint::trail;
  int trail_i = 0;
  ImVec2 mouse = ImGui::GetIO().MousePos;
  int best = -1;
  float best_d = 8 * 8;
  // Trail first, then the reference, then the current point on top (its label placed first).
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
        float r = 6;
        dl->AddQuadFilled(ImVec2(q.x, q.y - r), ImVec2(q.x + r, q.y), ImVec2(q.x, q.y + r),
                          ImVec2(q.x - r, q.y), IM_COL32(150, 150, 150, 255));
        place(ImVec2(q.x + 8, q.y - fs * 0.5f), pt.label, IM_COL32(190, 190, 190, 255));
      } else {
        dl->AddCircleFilled(q, 7, IM_COL32(80, 220, 120, 255), 16);
        dl->AddCircle(q, 7, IM_COL32(255, 255, 255, 255), 16, 1.5f);
        place(ImVec2(q.x + 10, q.y - fs * 0.5f), pt.label, IM_COL32(235, 255, 235, 255));
      }
      if (hovered) {
        float dx = mouse.x - q.x, dy = mouse.y - q.y;
        if (dx * dx + dy * dy <= best_d) {
          best_d = dx * dx + dy * dy;
          best = int(i);
        }
      }
    }
  dl->PopClipRect();
  dl->AddRect(ax.a, ax.b, IM_COL32(255, 255, 255, 60));
  dl->PopClipRect();

  p.hovered = best;
  if (best >= 0) {
    const ChartPoint& pt = p.points[size_t(best)];
    ImVec2 q = ax.to_px(pt.intensity, pt.gflops);
    dl->AddCircle(q, 10, IM_COL32(255, 255, 255, 255), 16, 1.5f);
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(pt.label.c_str());
    ImGui::Separator();
    ImGui::Text("%.3g FLOP/byte, %s%s", pt.intensity, flops_text(pt.gflops).c_str(),
                pt.predicted ? " (predicted)" : "");
    if (!pt.tooltip.empty()) ImGui::TextUnformatted(pt.tooltip.c_str());
    if (pt.attempt > 0 && pt.kind == ChartPoint::trail)
      ImGui::TextDisabled("click to show this attempt");
    ImGui::EndTooltip();
    if (clicked) p.clicked_attempt = pt.attempt;
  } else if (hovered && ax.inside(mouse)) {
    // Where the mouse is, and what the roofs allow there.
    double x = ax.intensity_at(mouse.x), y = ax.gflops_at(mouse.y);
    ImGui::BeginTooltip();
    ImGui::Text("%.3g FLOP/byte, %s", x, flops_text(y).c_str());
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
