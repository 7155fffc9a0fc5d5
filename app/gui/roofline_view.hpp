// The roofline pane's chart: chart.hpp supplies the roofs, the axes and the ticks, and
// chart_labels.hpp lays out the plot and its text (the same code as `warpbook roofline --svg`,
// measuring with the window's font); this draws them on the ImDrawList and finds the point under
// the mouse.
#pragma once
#include "core/chart.hpp"
#include "core/chart_labels.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include <imgui.h>

namespace wb::gui {

// Log-log mapping between data (FLOP/byte, GFLOP/s) and pixels inside the plot rectangle.
struct RoofAxes {
  double x_lo = 0.01, x_hi = 1000, y_lo = 1, y_hi = 1e6;
  ImVec2 a, b; // plot rectangle: a top-left, b bottom-right
  PlotFrame frame() const;
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

// A text the chart drew last frame and its rectangle on the screen (tests check none collide).
struct DrawnText {
  std::string text;
  std::string kind; // "tick", "axis", "roof", "ridge", "point", "legend", "heading"
  ImVec4 box;       // x0, y0, x1, y1
};

struct RoofPanel {
  RooflineChart chart; // roofs and title (its points are filled from `points`)
  std::vector<ChartPoint> points;
  std::vector<size_t> chart_point; // chart.points[i] is points[chart_point[i]]
  ChartGeometry geo;
  bool geo_valid = false;
  ChartPane layout; // laid out in layout_region with a font of layout_font pixels
  TextBox layout_region;
  float layout_font = 0;
  bool layout_valid = false;
  RoofAxes axes;
  int hovered = -1;
  int64_t clicked_attempt = 0; // set for one frame when a trail point is clicked
  std::vector<DrawnText> drawn_text;
  void invalidate() { geo_valid = false; }
};

// Draws the chart in the region at the cursor (`size`), handles hover and clicks.
void draw_roofline_chart(RoofPanel& p, ImVec2 size, ImFont* small_font);

} // namespace wb::gui
