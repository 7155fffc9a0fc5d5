// The roofline pane's axis maths and hit testing, headless.
#include "core/roofline.hpp"
#include "gui/roofline_view.hpp"
#include "headless.hpp"

#include <cmath>
#include <doctest/doctest.h>

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

TEST_CASE("fit_axes keeps room for labels and never collapses") {
  ChartGeometry g;
  RoofAxes ax = fit_axes(g, ImVec2(0, 0), ImVec2(400, 300), 60, 14);
  CHECK(ax.a.x == doctest::Approx(60));
  CHECK(ax.b.y < 300 - 14);
  RoofAxes tiny = fit_axes(g, ImVec2(0, 0), ImVec2(20, 20), 60, 14);
  CHECK(tiny.b.x - tiny.a.x >= 10);
  CHECK(tiny.b.y - tiny.a.y >= 10);
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
