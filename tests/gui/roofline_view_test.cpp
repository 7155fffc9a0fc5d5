// The roofline pane's axis maths and hit testing, headless.
#include "core/roofline.hpp"
#include "gui/roofline_view.hpp"
#include "headless.hpp"

#include <algorithm>
#include <cmath>
#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace wb;
using namespace wb::gui;

TEST_CASE("log axes map decades evenly and invert exactly") {
  RoofAxes ax;
  ax.x_lo = 0.01, ax.x_hi = 100, ax.y_lo = 10, ax.y_hi = 1e6;
  ax.a = ImVec2(100, 50);
  ax.b = ImVec2(500, 450);
  ImVec2 lo = ax.to_px(0.01, 10), hi = ax.to_px(100, 1e6);
  CHECK(lo.x == doctest::Approx(100));
  CHECK(lo.y == doctest::Approx(450));
  CHECK(hi.x == doctest::Approx(500));
  CHECK(hi.y == doctest::Approx(50));
  // Four decades across 400 px: 100 px each; 1 FLOP/byte sits two decades in.
  CHECK(ax.to_px(1, 10).x == doctest::Approx(300));
  CHECK(ax.to_px(0.1, 10).x - ax.to_px(0.01, 10).x ==
        doctest::Approx(ax.to_px(100, 10).x - ax.to_px(10, 10).x));
  for (double x : {0.013, 0.5, 7.0, 99.0})
    CHECK(ax.intensity_at(ax.to_px(x, 100).x) == doctest::Approx(x));
  for (double y : {12.0, 3e3, 9e5}) CHECK(ax.gflops_at(ax.to_px(1, y).y) == doctest::Approx(y));
  CHECK(ax.inside(ImVec2(300, 200)));
  CHECK_FALSE(ax.inside(ImVec2(50, 200)));
}

namespace {

// The window's chart font (DejaVu Sans at 13 pixels) where it is installed, else ImGui's own.
ImFont* chart_font() {
  std::string path = chart_font_path();
  if (path.empty()) return nullptr;
  ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  ImFont* f = atlas->AddFontFromFileTTF(path.c_str(), 13);
  atlas->ClearTexData(); // built again with the new font
  unsigned char* px;
  int w, h;
  atlas->GetTexDataAsRGBA32(&px, &w, &h);
  return f;
}

} // namespace

TEST_CASE("the pane's text never collides, at the sizes the window gives it") {
  wb::test::Headless ui(1000, 800);
  ImFont* font = chart_font();
  // Measured roofs beside the datasheet's, as on a GPU that was probed.
  const std::vector<MeasuredCeiling> h200 = {
      {metric::dram, 4410, 4380, "GB/s"},          {metric::l2, 11000, 10800, "GB/s"},
      {metric::shared, 30000, 29500, "GB/s"},      {metric::fp32, 64500, 64000, "GFLOP/s"},
      {metric::fp64, 33000, 32800, "GFLOP/s"},     {metric::fp16_tc, 805000, 790000, "GFLOP/s"},
      {metric::bf16_tc, 800000, 790000, "GFLOP/s"}};
  for (const char* gpu : {"h200", "h100-sxm"})
    for (bool measured : {false, true})
      // The chart's region in the pane at 1280x800, 1600x1000 and 2560x1440.
      for (ImVec2 size : {ImVec2(282, 268), ImVec2(359, 352), ImVec2(588, 537)}) {
        CAPTURE(std::string(gpu));
        CAPTURE(measured);
        CAPTURE(size.x);
        RoofPanel p;
        p.chart.roofs =
            device_roofs(measured ? h200 : std::vector<MeasuredCeiling>{}, find_profile(gpu));
        ChartPoint cur, ref, old;
        cur.kind = ChartPoint::current, cur.label = "your kernel";
        cur.intensity = 1.0 / 12, cur.gflops = 300;
        ref.kind = ChartPoint::reference, ref.label = "solution";
        ref.intensity = 1.0 / 12, ref.gflops = 330;
        old.label = "attempt 3", old.intensity = 1.0 / 12, old.gflops = 40;
        p.points = {old, ref, cur};
        ImVec2 at;
        ui.frame([&] {
          at = ImGui::GetCursorScreenPos();
          draw_roofline_chart(p, size, font);
        });
        REQUIRE(p.drawn_text.size() > 10);
        bool kernel_labelled = false;
        for (size_t i = 0; i < p.drawn_text.size(); ++i) {
          const ImVec4& r = p.drawn_text[i].box;
          CAPTURE(p.drawn_text[i].text);
          kernel_labelled |= p.drawn_text[i].text.rfind("your kernel", 0) == 0;
          CHECK(r.x >= at.x);
          CHECK(r.y >= at.y);
          CHECK(r.z <= at.x + size.x);
          CHECK(r.w <= at.y + size.y);
          for (size_t j = i + 1; j < p.drawn_text.size(); ++j) {
            const ImVec4& o = p.drawn_text[j].box;
            CAPTURE(p.drawn_text[j].text);
            CHECK_FALSE((r.x < o.z && o.x < r.z && r.y < o.w && o.y < r.w));
          }
        }
        CHECK(kernel_labelled); // on the plot, or in the legend under it
        CHECK(p.layout.legend_left_out == 0);
      }
}

TEST_CASE("a tiny pane still has a plot") {
  wb::test::Headless ui(300, 300);
  RoofPanel p;
  p.chart.roofs = device_roofs({}, find_profile("h200"));
  ui.frame([&] { draw_roofline_chart(p, ImVec2(20, 20), nullptr); });
  CHECK(p.axes.b.x - p.axes.a.x >= 10);
  CHECK(p.axes.b.y - p.axes.a.y >= 10);
}

TEST_CASE("the chart draws an H200's roofs and finds the point under the mouse") {
  wb::test::Headless ui(900, 600);
  RoofPanel p;
  p.chart.roofs = device_roofs({}, find_profile("h200"));
  REQUIRE_FALSE(p.chart.roofs.empty());
  for (int i = 0; i < 1000; ++i) {
    ChartPoint c;
    c.intensity = std::pow(10.0, -2 + 4 * (i % 97) / 97.0);
    c.gflops = std::pow(10.0, 2 + 4 * (i % 89) / 89.0);
    c.attempt = i + 1;
    p.points.push_back(c);
  }
  ChartPoint cur;
  cur.kind = ChartPoint::current;
  cur.intensity = 1.0 / 12;
  cur.gflops = 300;
  cur.label = "your kernel";
  cur.attempt = 5000;
  p.points.push_back(cur);
  auto body = [&] { draw_roofline_chart(p, ImVec2(800, 500), nullptr); };
  ui.frame(body);
  REQUIRE(p.geo_valid);
  CHECK(p.geo.x_lo <= 1.0 / 24);
  CHECK(p.geo.y_hi >= 989000);
  // Hovering the current point picks it out of a thousand others.
  ImVec2 q = p.axes.to_px(cur.intensity, cur.gflops);
  ImGui::GetIO().MousePos = q;
  ui.frame(body);
  CHECK(p.hovered == int(p.points.size()) - 1);
  // Clicking a trail point asks for that attempt.
  ImVec2 t = p.axes.to_px(p.points[0].intensity, p.points[0].gflops);
  int64_t clicked = 0;
  auto body2 = [&] {
    draw_roofline_chart(p, ImVec2(800, 500), nullptr);
    if (p.clicked_attempt) clicked = p.clicked_attempt;
  };
  ui.click(t, body2);
  CHECK(clicked > 0);
  CHECK(clicked <= 1000);
}

namespace {

// Whether the segment (x0,y0)-(x1,y1) passes through the box's inside: sampled every half pixel.
bool line_through(double x0, double y0, double x1, double y1, const TextBox& b) {
  const int n = int(std::hypot(x1 - x0, y1 - y0) * 2) + 2;
  for (int i = 0; i <= n; ++i) {
    double t = double(i) / n, x = x0 + t * (x1 - x0), y = y0 + t * (y1 - y0);
    if (x > b.x0 + 0.5 && x < b.x1 - 0.5 && y > b.y0 + 0.5 && y < b.y1 - 0.5) return true;
  }
  return false;
}

double distance(const TextBox& b, double x, double y) {
  double dx = std::max({b.x0 - x, 0.0, x - b.x1}), dy = std::max({b.y0 - y, 0.0, y - b.y1});
  return std::hypot(dx, dy);
}

} // namespace

TEST_CASE("no roofline label crosses a roof or another label, and each sits at what it labels") {
  wb::test::Headless ui(1000, 800);
  ImFont* font = chart_font();
  for (const GpuProfile& gpu : gpu_profiles())
    for (ImVec2 size : {ImVec2(282, 268), ImVec2(359, 352), ImVec2(588, 537), ImVec2(420, 300)}) {
      CAPTURE(gpu.key);
      CAPTURE(size.x);
      RoofPanel p;
      p.chart.roofs = device_roofs({}, &gpu);
      ChartPoint cur, ref;
      cur.kind = ChartPoint::current, cur.label = "your kernel";
      cur.intensity = 1.0 / 12, cur.gflops = 300;
      ref.kind = ChartPoint::reference, ref.label = "solution";
      ref.intensity = 1.0 / 12, ref.gflops = 300; // coincident: both stay labelled
      p.points = {ref, cur};
      ui.frame([&] { draw_roofline_chart(p, size, font); });
      REQUIRE(p.layout_valid);
      const PlotFrame& f = p.layout.frame;
      const std::vector<ChartLabel>& placed = p.layout.labels.placed;
      for (size_t i = 0; i < placed.size(); ++i) {
        const ChartLabel& l = placed[i];
        if (l.kind == ChartLabel::Kind::tick_x || l.kind == ChartLabel::Kind::tick_y) continue;
        CAPTURE(l.text);
        // Inside the plot, over no other text.
        CHECK(l.box.within(f.rect));
        for (size_t j = 0; j < placed.size(); ++j)
          if (j != i) CHECK_FALSE(l.box.overlaps(placed[j].box));
        // Through no roof as drawn.
        for (auto& s : p.geo.segments)
          CHECK_FALSE(line_through(f.px(s.x0), f.py(s.y0), f.px(s.x1), f.py(s.y1), l.box));
        // Beside its own ridge or point (a few lines of text away at most).
        const double near = 4 * l.box.height() + 12;
        if (l.kind == ChartLabel::Kind::ridge) {
          auto& rd = p.geo.ridges[l.index];
          CHECK(distance(l.box, f.px(rd.intensity), f.py(rd.gflops)) <= near);
        }
        if (l.kind == ChartLabel::Kind::point) {
          auto& pt = p.chart.points[l.index];
          CHECK(distance(l.box, f.px(pt.intensity), f.py(pt.gflops)) <= near);
        }
      }
      CHECK(p.layout.legend_left_out == 0);
    }
}
