// Where the roofline chart's text goes, for every renderer: the SVG and the PNG (chart_shapes) and
// the window's roofline pane. Tick labels first, thinned where they would touch; then the labels
// of kernel points, roofs and ridge points, each at the first of its candidate spots (beside its
// marker, along its roof) that stays inside the plot and overlaps no label placed before it, no
// tick label and no marker. A label with no such spot goes to the legend list, never on top of
// another. Each renderer measures text its own way: the window with its font, the files with a
// conservative estimate.
//
//   PlotFrame f(geometry, {78, 70, 740, 584});
//   ChartLabels l = place_chart_labels(chart, geometry, f, {0, 0, 1000, 640}, estimate_text, {});
//   for (auto& t : l.placed) draw(t.text, t.box);   // l.legend: listed beside or under the chart
#pragma once
#include "chart.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace wb {

// A rectangle in pixels, origin top-left.
struct TextBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  double width() const { return x1 - x0; }
  double height() const { return y1 - y0; }
  bool overlaps(const TextBox& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  bool within(const TextBox& o) const {
    return x0 >= o.x0 && y0 >= o.y0 && x1 <= o.x1 && y1 <= o.y1;
  }
  bool operator==(const TextBox&) const = default;
};

// A line of text's width and height in pixels at a font size: the box its glyphs stay inside.
struct TextExtent {
  double w = 0, h = 0;
};
using MeasureText = std::function<TextExtent(const std::string& text, double size)>;

// UTF-8 text as code points, each with the byte it starts at; a byte that starts no valid
// sequence reads as '?'.
struct CodePoint {
  uint32_t value = 0;
  size_t at = 0;
};
std::vector<CodePoint> utf8_code_points(const std::string& s);

// For drawings whose font is not at hand (an SVG viewer's DejaVu Sans or Verdana; the PNG's DejaVu
// Sans, drawn 3% larger): every character at least as wide as either font draws it, and the line
// from above the tallest glyph to below the lowest descender. Bold is wider still.
TextExtent estimate_text(const std::string& text, double size, bool bold = false);
// Where the baseline of an estimate_text() box lies, below its top.
double estimate_baseline(double size);
// Text as the PNG's font draws it (chart_font_path()); empty when there is no font here.
MeasureText chart_font_measure();
// `text`, cut short with "..." so that it measures at most `max_w` (empty when not even that fits).
std::string fit_text(const std::string& text, double size, double max_w, const MeasureText& m);

// The plot's rectangle in pixels and the log-log mapping of the chart onto it.
struct PlotFrame {
  TextBox rect;
  double x_lo = 0.01, x_hi = 1000, y_lo = 10, y_hi = 1e7; // FLOP/byte across, GFLOP/s up
  PlotFrame() = default;
  PlotFrame(const ChartGeometry& g, TextBox r)
      : rect(r), x_lo(g.x_lo), x_hi(g.x_hi), y_lo(g.y_lo), y_hi(g.y_hi) {}
  double px(double intensity) const;
  double py(double gflops) const;
  double intensity_at(double px) const;
  double gflops_at(double py) const;
};

struct ChartLabel {
  enum class Kind { tick_x, tick_y, roof, ridge, point, axis_x };
  Kind kind = Kind::roof;
  size_t index = 0; // into the geometry's x_ticks, y_ticks or ridges, or the chart's roofs, points
  std::string text;
  double size = 11;
  TextBox box;
  int anchor = -1; // the text hangs from the box's left (-1), centre (0) or right (1) edge
};

// Font sizes in pixels, and the clear space between a tick label and the axis.
struct LabelSizes {
  double tick = 11, roof = 11, ridge = 10, point = 11;
  double gap = 4;
};

struct ChartLabels {
  std::vector<ChartLabel> placed; // tick labels with room, then the labels that found a spot
  std::vector<ChartLabel> legend; // roof, ridge and point labels that found none (box unset)
  std::vector<TextBox> markers;   // the ridge and labelled point markers the labels stepped around
};

// A ridge point's label: "ridge 14.6 FLOP/B".
std::string ridge_label_text(const ChartGeometry::Ridge& r);

// The tick labels, then the labels of every point that has one, of the main roofs and of every
// ridge, in that order: a point's label says whose kernel it is, a roof's which line it is, and a
// ridge's is a figure the two lines already show. Tick labels stay inside `bounds`, the others
// inside the plot.
ChartLabels place_chart_labels(const RooflineChart& c, const ChartGeometry& g, const PlotFrame& f,
                               TextBox bounds, const MeasureText& measure, const LabelSizes& sizes);

// The roofline laid out in a rectangle of the window: the plot with room for the tick labels at
// its left and under it, the axis title under those, and under that the legend, in as many rows
// as its entries need (the plot gives up the height, and labels are placed again on the smaller
// plot, until the rows suffice).
struct ChartPane {
  PlotFrame frame;
  ChartLabels labels;
  ChartLabel axis_title;
  struct LegendEntry {
    ChartLabel label;
    TextBox swatch; // where the roof's line sample, or the marker, goes: left of the text
  };
  std::vector<LegendEntry> legend;
  int legend_left_out = 0; // entries with no room even there (a very small pane)
};
ChartPane layout_chart_pane(const RooflineChart& c, const ChartGeometry& g, TextBox region,
                            const MeasureText& measure, double font_size);

} // namespace wb
