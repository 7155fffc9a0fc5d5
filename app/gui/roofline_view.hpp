// The roofline pane's chart: chart.hpp supplies the roofs, the axes and the ticks (the same maths
// as `warpbook roofline --svg`); this maps them onto a rectangle of the window with log axes,
// draws them on the ImDrawList, and finds the point under the mouse.
#pragma once
#include "core/chart.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include <imgui.h>

namespace wb::gui {

// Log-log mapping between data (FLOP/byte, GFLOP/s) and pixels inside the plot rectangle.
struct RoofAxes {
  double x_lo = 0.01, x_hi = 1000, y_lo = 1, y_hi = 1e6;
  ImVec2 a, b; // plot rectangle: a top-left, b bottom-right
  ImVec2 to_px(double intensity, double gflops) const;
  double intensity_at(float px) const;
  double gflops_at(float py) const;
  bool inside(ImVec2 p) const { return p.x >= a.x && p.x <= b.x && p.y >= a.y && p.y <= b.y; }
};

struct ChartPoint {
  enum Kind : uint8_t { trail, current, reference };
  Kind kind = trail;
  double intensity = 0, gflops = 0;
  bool predicted = false;
  std::string label;   // "attempt 12", "your kernel", "solution"
  std::string tooltip; // its figures
  int64_t attempt = 0; // store row (0: none)
};

struct RoofPanel {
  RooflineChart chart; // roofs and title (its points are filled from `points`)
  std::vector<ChartPoint> points;
  ChartGeometry geo;
  bool geo_valid = false;
  RoofAxes axes;
  int hovered = -1;
  int64_t clicked_attempt = 0; // set for one frame when a trail point is clicked
  void invalidate() { geo_valid = false; }
};

// Fits the chart's geometry into a rectangle, leaving room for the tick labels.
RoofAxes fit_axes(const ChartGeometry& g, ImVec2 a, ImVec2 b, float label_w, float label_h);

// Draws the chart in the region at the cursor (`size`), handles hover and clicks.
void draw_roofline_chart(RoofPanel& p, ImVec2 size, ImFont* small_font);

} // namespace wb::gui
