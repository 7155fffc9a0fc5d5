#include "chart_labels.hpp"

#include "format_figure.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace wb {

namespace {

// Advance widths in ems of font size, each at or above Verdana's and DejaVu Sans's as the PNG
// draws it (3% over the nominal size); a unit test holds them to the font.
double char_em(uint32_t c) {
  if (c == ' ') return 0.36;
  if (c < 0x80 && std::strchr("ijl.,:;'|!", int(c))) return 0.46;
  if (c < 0x80 && std::strchr("frt()[]/\\-\"IJ", int(c))) return 0.52;
  if (c < 0x80 && std::strchr("mwMW%@&#+<>=^~", int(c))) return 1.08;
  if (c >= 'A' && c <= 'Z') return 0.82;
  if (c < 0x80) return 0.67; // digits, the rest of the lower case and of the marks
  return 1.08;               // anything else: as wide as the widest
}

// A place a label may go: its box's point (ax, ay), as fractions of its width and height from the
// top-left, sits at (x, y).
struct Spot {
  double x, y, ax, ay;
};

// A roof as drawn, in pixels.
struct Line {
  double x0, y0, x1, y1;
};

// Whether the segment passes through the box (Liang-Barsky clipping).
bool crosses(const Line& l, const TextBox& b) {
  double t0 = 0, t1 = 1;
  const double dx = l.x1 - l.x0, dy = l.y1 - l.y0;
  for (auto [p, q] : {std::pair{-dx, l.x0 - b.x0}, std::pair{dx, b.x1 - l.x0},
                      std::pair{-dy, l.y0 - b.y0}, std::pair{dy, b.y1 - l.y0}}) {
    if (p == 0) {
      if (q < 0) return false;
      continue;
    }
    double t = q / p;
    if (p < 0)
      t0 = std::max(t0, t);
    else
      t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

class Placer {
public:
  Placer(ChartLabels& out, TextBox area, std::vector<Line> lines, const MeasureText& m)
      : out_(out), area_(area), lines_(std::move(lines)), m_(m) {}

  // The first spot (unmoved, then every spot one line down, one line up, two down ...) where the
  // label stays inside the area and clear of every label, marker and roof line (a roof through
  // text reads as a strike-through, and hides where the roof is); else to the legend. With `slide`,
  // a label that pokes out at the left or right slides back in, so long as it still spans its
  // spot's x (it stays beside its marker, or along its roof).
  void place(ChartLabel l, const std::vector<Spot>& spots, int nudges, bool slide) {
    const TextExtent e = m_(l.text, l.size);
    for (int k = 0; k <= 2 * nudges; ++k) {
      const double dy = k == 0 ? 0 : (k % 2 ? 1 : -1) * double((k + 1) / 2) * (e.h + 1);
      for (const Spot& s : spots) {
        TextBox b{s.x - s.ax * e.w, s.y - s.ay * e.h + dy, 0, 0};
        if (slide) b.x0 = std::max(area_.x0, std::min(b.x0, area_.x1 - e.w));
        b.x1 = b.x0 + e.w, b.y1 = b.y0 + e.h;
        if (slide && !(b.x0 <= s.x && s.x <= b.x1)) continue;
        if (!b.within(area_) || !clear(b)) continue;
        if (std::any_of(lines_.begin(), lines_.end(), [&](auto& ln) { return crosses(ln, b); }))
          continue;
        l.box = b;
        l.anchor = s.ax < 0.25 ? -1 : s.ax > 0.75 ? 1 : 0;
        out_.placed.push_back(std::move(l));
        return;
      }
    }
    out_.legend.push_back(std::move(l));
  }

  bool clear(const TextBox& b) const {
    for (auto& o : out_.placed)
      if (o.box.overlaps(b)) return false;
    for (auto& o : out_.markers)
      if (o.overlaps(b)) return false;
    return true;
  }

private:
  ChartLabels& out_;
  TextBox area_;
  std::vector<Line> lines_;
  const MeasureText& m_;
};

ChartLabel make_label(ChartLabel::Kind kind, size_t index, std::string text, double size) {
  ChartLabel l;
  l.kind = kind, l.index = index, l.text = std::move(text), l.size = size;
  return l;
}

bool on_axis(double v, double lo, double hi) {
  return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9);
}

// How far below the plot the x tick labels start: clear of the lowest y tick label, which is
// centred on the bottom edge.
double x_tick_offset(double line_h, const LabelSizes& s) {
  return std::max(s.gap, line_h / 2 + 1);
}

} // namespace

std::vector<CodePoint> utf8_code_points(const std::string& s) {
  std::vector<CodePoint> out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (n < 0 || i + size_t(n) >= s.size()) {
      out.push_back({'?', i});
      ++i;
      continue;
    }
    uint32_t cp = n == 0 ? c : c & (0x3fu >> n);
    for (int k = 1; k <= n; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + size_t(k)]) & 0x3f);
    out.push_back({cp, i});
    i += size_t(n) + 1;
  }
  return out;
}

TextExtent estimate_text(const std::string& text, double size, bool bold) {
  double ems = 0;
  for (const CodePoint& c : utf8_code_points(text)) ems += char_em(c.value);
  // DejaVu Sans Bold runs up to 12% wider, and the PNG draws bold twice, a third of a pixel apart.
  double w = bold ? ems * size * 1.12 + 1 : ems * size;
  return {w, 1.25 * size};
}

double estimate_baseline(double size) {
  return 0.98 * size;
}

std::string fit_text(const std::string& text, double size, double max_w, const MeasureText& m) {
  if (m(text, size).w <= max_w) return text;
  const std::vector<CodePoint> cps = utf8_code_points(text);
  for (size_t k = cps.size(); k-- > 0;) {
    std::string t = text.substr(0, cps[k].at) + "...";
    if (m(t, size).w <= max_w) return t;
  }
  return {};
}

double PlotFrame::px(double x) const {
  return rect.x0 +
         (std::log10(x) - std::log10(x_lo)) / (std::log10(x_hi) - std::log10(x_lo)) * rect.width();
}

double PlotFrame::py(double y) const {
  return rect.y1 -
         (std::log10(y) - std::log10(y_lo)) / (std::log10(y_hi) - std::log10(y_lo)) * rect.height();
}

double PlotFrame::intensity_at(double p) const {
  double f = (p - rect.x0) / rect.width();
  return std::pow(10.0, std::log10(x_lo) + f * (std::log10(x_hi) - std::log10(x_lo)));
}

double PlotFrame::gflops_at(double p) const {
  double f = (rect.y1 - p) / rect.height();
  return std::pow(10.0, std::log10(y_lo) + f * (std::log10(y_hi) - std::log10(y_lo)));
}

std::string ridge_label_text(const ChartGeometry::Ridge& r) {
  return "ridge " + intensity_text(r.intensity);
}

ChartLabels place_chart_labels(const RooflineChart& c, const ChartGeometry& g, const PlotFrame& f,
                               TextBox bounds, const MeasureText& measure, const LabelSizes& sz) {
  ChartLabels out;
  const TextBox& plot = f.rect;

  // Tick labels: each beside its tick, or left out where it would touch one already there.
  auto tick = [&](ChartLabel l, double at) {
    const TextExtent e = measure(l.text, l.size);
    if (l.kind == ChartLabel::Kind::tick_y) {
      l.box = {plot.x0 - sz.gap - e.w, at - e.h / 2, plot.x0 - sz.gap, at + e.h / 2};
      l.anchor = 1;
    } else {
      double top = plot.y1 + x_tick_offset(e.h, sz);
      l.box = {at - e.w / 2, top, at + e.w / 2, top + e.h};
      l.anchor = 0;
    }
    if (!l.box.within(bounds)) return;
    for (auto& o : out.placed)
      if (o.box.overlaps(l.box)) return;
    out.placed.push_back(std::move(l));
  };
  for (size_t i = 0; i < g.y_ticks.size(); ++i) {
    const Tick& t = g.y_ticks[i];
    if (!t.label.empty() && on_axis(t.value, g.y_lo, g.y_hi))
      tick(make_label(ChartLabel::Kind::tick_y, i, t.label, sz.tick), f.py(t.value));
  }
  for (size_t i = 0; i < g.x_ticks.size(); ++i) {
    const Tick& t = g.x_ticks[i];
    if (!t.label.empty() && on_axis(t.value, g.x_lo, g.x_hi))
      tick(make_label(ChartLabel::Kind::tick_x, i, t.label, sz.tick), f.px(t.value));
  }

  // Markers the labels step around: labelled points (a ring marks those above the roof) and ridges.
  auto point_px = [&](const RoofPoint& p) {
    return std::pair{f.px(std::clamp(p.intensity, g.x_lo, g.x_hi)),
                     f.py(std::clamp(p.gflops, g.y_lo, g.y_hi))};
  };
  auto labelled = [](const RoofPoint& p) {
    return !p.label.empty() && p.intensity > 0 && p.gflops > 0;
  };
  for (size_t i = 0; i < c.points.size(); ++i)
    if (labelled(c.points[i])) {
      auto [x, y] = point_px(c.points[i]);
      double r = i < g.above_roof.size() && g.above_roof[i] ? 11 : 8;
      out.markers.push_back({x - r, y - r, x + r, y + r});
    }
  for (auto& rd : g.ridges) {
    double x = f.px(rd.intensity), y = f.py(rd.gflops);
    out.markers.push_back({x - 5.5, y - 5.5, x + 5.5, y + 5.5});
  }

  // Everything else inside the plot, a pixel off its frame.
  std::vector<Line> lines;
  for (auto& s : g.segments) lines.push_back({f.px(s.x0), f.py(s.y0), f.px(s.x1), f.py(s.y1)});
  Placer placer(out, {plot.x0 + 1, plot.y0 + 1, plot.x1 - 1, plot.y1 - 1}, std::move(lines),
                measure);
  for (size_t i = 0; i < c.points.size(); ++i) {
    const RoofPoint& p = c.points[i];
    if (!labelled(p)) continue;
    auto [x, y] = point_px(p);
    bool above = i < g.above_roof.size() && g.above_roof[i];
    double r = above ? 13 : 10, d = r * 0.75;
    placer.place(make_label(ChartLabel::Kind::point, i, p.label + (above ? " (!)" : ""), sz.point),
                 {{x + r, y, 0, 0.5},
                  {x - r, y, 1, 0.5},
                  {x + d, y - d, 0, 1},
                  {x + d, y + d, 0, 0},
                  {x - d, y - d, 1, 1},
                  {x - d, y + d, 1, 0},
                  {x, y - r, 0.5, 1},
                  {x, y + r, 0.5, 0}},
                 2, true);
  }
  for (auto& s : g.segments) {
    if (s.roof >= g.main_roof.size() || !g.main_roof[s.roof]) continue;
    const Roof& r = c.roofs[s.roof];
    const double x0 = f.px(s.x0), y0 = f.py(s.y0), x1 = f.px(s.x1), y1 = f.py(s.y1);
    std::vector<Spot> spots;
    // Close to the line first, then clear of the ridge markers on it.
    for (double off : {2.0, 7.0}) {
      if (r.kind == Roof::Kind::compute) {
        // Over the line, then under it, from its right end leftwards.
        for (double t : {1.0, 0.75, 0.5, 0.25, 0.0}) {
          double x = x0 + 4 + t * (x1 - x0 - 8);
          spots.push_back({x, y0 - off, t, 1});
          spots.push_back({x, y0 + off, t, 0});
        }
      } else {
        // Above and left of a point on the rising line (the line falls away under the text), or
        // below and right of it, from near its lower end upwards.
        for (double t : {0.08, 0.2, 0.35, 0.5, 0.65, 0.8, 0.92}) {
          double x = x0 + t * (x1 - x0), y = y0 + t * (y1 - y0);
          spots.push_back({x - off, y - off, 1, 1});
          spots.push_back({x + off, y + off, 0, 0});
        }
      }
    }
    placer.place(make_label(ChartLabel::Kind::roof, s.roof, r.short_label(), sz.roof), spots, 0,
                 r.kind == Roof::Kind::compute);
  }
  for (size_t i = 0; i < g.ridges.size(); ++i) {
    double x = f.px(g.ridges[i].intensity), y = f.py(g.ridges[i].gflops);
    // Under the compute roof and right of the memory roof first: the corner the two lines leave.
    placer.place(
        make_label(ChartLabel::Kind::ridge, i, ridge_label_text(g.ridges[i]), sz.ridge),
        {{x + 7, y + 5, 0, 0}, {x - 7, y + 5, 1, 0}, {x + 7, y - 5, 0, 1}, {x - 7, y - 5, 1, 1}}, 3,
        true);
  }
  return out;
}

ChartPane layout_chart_pane(const RooflineChart& c, const ChartGeometry& g, TextBox region,
                            const MeasureText& measure, double font_size) {
  ChartPane pane;
  const LabelSizes sz{font_size, font_size, font_size, font_size, 4};
  const double line_h = measure("0", font_size).h;
  // Room at the left for the widest y tick label, at the right for half of the last x one.
  double left = 0, right = line_h / 2;
  for (auto& t : g.y_ticks)
    if (!t.label.empty()) left = std::max(left, measure(t.label, font_size).w);
  for (auto& t : g.x_ticks)
    if (!t.label.empty() && t.value >= g.x_hi * (1 - 1e-9))
      right = std::max(right, measure(t.label, font_size).w / 2 + 1);
  const double under = x_tick_offset(line_h, sz) + line_h + 2; // x tick labels and a gap
  const double row_h = line_h + 2;
  // The legend may take up to half of the pane's height: a small pane lists more than it labels.
  const int max_rows = std::max(0, int(region.height() * 0.5 / row_h));
  const double swatch_w = std::round(line_h * 1.6), swatch_gap = 4, entry_gap = line_h;

  auto plot_for = [&](int rows) {
    TextBox p{region.x0 + left + sz.gap, region.y0 + line_h / 2 + 1, region.x1 - right,
              region.y1 - under - line_h - 2 - rows * row_h};
    // Never a degenerate rectangle, however small the pane.
    p.x1 = std::max(p.x1, p.x0 + 10), p.y1 = std::max(p.y1, p.y0 + 10);
    return p;
  };
  // Rows the legend needs (entries in order, as many to a row as fit).
  auto rows_for = [&](const std::vector<ChartLabel>& legend) {
    int rows = legend.empty() ? 0 : 1;
    double x = region.x0;
    for (auto& l : legend) {
      double w = swatch_w + swatch_gap + measure(l.text, l.size).w;
      if (x > region.x0 && x + w > region.x1) ++rows, x = region.x0;
      x += w + entry_gap;
    }
    return rows;
  };
  // The fewest legend rows that hold every label with no spot on the plot above them (a smaller
  // plot may have spots for fewer), else as many as the pane allows.
  int rows = 0;
  for (;; ++rows) {
    pane.frame = PlotFrame(g, plot_for(rows));
    pane.labels = place_chart_labels(c, g, pane.frame, region, measure, sz);
    if (rows_for(pane.labels.legend) <= rows || rows >= max_rows) break;
  }

  const TextBox& plot = pane.frame.rect;
  // Both axes' units: the y ticks ("100T") are FLOP/s.
  std::string title = fit_text("FLOP/s against FLOP/byte (arithmetic intensity)", font_size,
                               region.width(), measure);
  TextExtent te = measure(title, font_size);
  double cx = std::clamp((plot.x0 + plot.x1) / 2, region.x0 + te.w / 2, region.x1 - te.w / 2);
  double ty = plot.y1 + under;
  pane.axis_title = make_label(ChartLabel::Kind::axis_x, 0, title, font_size);
  pane.axis_title.box = {cx - te.w / 2, ty, cx + te.w / 2, ty + te.h};
  pane.axis_title.anchor = 0;

  double x = region.x0, y = ty + line_h + 2;
  int row = 0;
  for (auto& l : pane.labels.legend) {
    std::string text = fit_text(l.text, l.size, region.width() - swatch_w - swatch_gap, measure);
    double w = swatch_w + swatch_gap + measure(text, l.size).w;
    if (x > region.x0 && x + w > region.x1) ++row, x = region.x0, y += row_h;
    if (row >= rows || text.empty() || y + line_h > region.y1) {
      ++pane.legend_left_out;
      continue;
    }
    ChartPane::LegendEntry e;
    e.swatch = {x, y, x + swatch_w, y + line_h};
    e.label = l;
    e.label.text = text;
    e.label.box = {x + swatch_w + swatch_gap, y, x + w, y + line_h};
    e.label.anchor = -1;
    pane.legend.push_back(std::move(e));
    x += w + entry_gap;
  }
  return pane;
}

} // namespace wb
