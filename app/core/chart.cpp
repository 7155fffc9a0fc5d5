#include "chart.hpp"

#include "chart_labels.hpp"
#include "format_figure.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace wb {

namespace {

struct Family {
  const char* metric;
  const char* name;
  Roof::Kind kind;
  Rgb color;
};

// One colour per family, measured and datasheet alike (the dash tells them apart).
const Family kFamilies[] = {
    {metric::dram, "DRAM", Roof::Kind::memory, {31, 119, 180}},
    {metric::l2, "L2", Roof::Kind::memory, {23, 160, 175}},
    {metric::shared, "shared memory", Roof::Kind::memory, {148, 103, 189}},
    {metric::fp32, "FP32", Roof::Kind::compute, {214, 39, 40}},
    {metric::fp64, "FP64", Roof::Kind::compute, {140, 86, 75}},
    {metric::fp16_tc, "FP16 tensor", Roof::Kind::compute, {255, 127, 14}},
    {metric::bf16_tc, "BF16 tensor", Roof::Kind::compute, {227, 119, 194}},
};

const Family* family_of(const std::string& metric) {
  for (auto& f : kFamilies)
    if (metric == f.metric) return &f;
  return nullptr;
}

Rgb roof_color(const Roof& r) {
  if (auto* f = family_of(r.metric)) return f->color;
  return {90, 90, 90};
}

Rgb point_color(const std::string& kind) {
  if (kind == "solution") return {44, 160, 44};
  if (kind == "starter") return {230, 85, 13};
  if (kind == "reference") return {120, 120, 120};
  if (kind == "predicted") return {117, 107, 177};
  return {49, 130, 189}; // attempt
}

std::string value_text(double v, Roof::Kind k) {
  // GB/s and GFLOP/s in.
  return k == Roof::Kind::memory ? bandwidth_text(v) : flops_text(v);
}

std::string esc(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
    case '&':
      o += "&amp;";
      break;
    case '<':
      o += "&lt;";
      break;
    case '>':
      o += "&gt;";
      break;
    case '"':
      o += "&quot;";
      break;
    default:
      // XML 1.0 forbids most control characters.
      if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t' || ch == '\n') o += ch;
    }
  }
  return o;
}

std::string hex(Rgb c) {
  return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b);
}

} // namespace

std::string Roof::label() const {
  return fmt::format("{} {}", short_label(), measured ? "measured" : "datasheet");
}

std::string Roof::short_label() const {
  return fmt::format("{} {}", name, value_text(value, kind));
}

std::vector<Roof> device_roofs(const std::vector<MeasuredCeiling>& measured,
                               const GpuProfile* prof) {
  std::vector<Roof> out;
  for (auto& f : kFamilies)
    for (auto& m : measured)
      if (m.metric == f.metric && m.value > 0)
        out.push_back({f.kind, f.metric, f.name, m.value, true});
  if (prof) {
    auto add = [&](const char* metric, const char* name) {
      const Family* f = family_of(metric);
      double v = datasheet_metric(*prof, metric);
      if (f && v > 0) out.push_back({f->kind, metric, name, v, false});
    };
    add(metric::dram, "DRAM");
    add(metric::shared, "shared memory");
    add(metric::fp32, "FP32");
    add(metric::fp64, "FP64");
    add(metric::fp16_tc, "FP16/BF16 tensor");
  }
  return out;
}

ChartGeometry chart_geometry(const RooflineChart& c) {
  ChartGeometry g;
  const size_t n = c.roofs.size();
  g.main_roof.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (!(c.roofs[i].value > 0)) continue;
    bool twin_measured = false;
    for (auto& o : c.roofs)
      if (o.metric == c.roofs[i].metric && o.measured && o.value > 0) twin_measured = true;
    g.main_roof[i] = c.roofs[i].measured || !twin_measured;
  }
  double b_max = 0, b_min = std::numeric_limits<double>::infinity(), p_max = 0;
  int dram = -1;
  for (size_t i = 0; i < n; ++i) {
    const Roof& r = c.roofs[i];
    if (!(r.value > 0)) continue;
    if (r.kind == Roof::Kind::memory) {
      b_max = std::max(b_max, r.value), b_min = std::min(b_min, r.value);
      if (r.metric == metric::dram && g.main_roof[i] && dram < 0) dram = int(i);
    } else {
      p_max = std::max(p_max, r.value);
    }
  }
  if (dram < 0) // no DRAM roof: ridges against the slowest memory roof
    for (size_t i = 0; i < n; ++i)
      if (c.roofs[i].kind == Roof::Kind::memory && c.roofs[i].value == b_min) dram = int(i);

  // What must be on the chart: every point, every ridge of the main DRAM roof, with room around.
  double x_min = std::numeric_limits<double>::infinity(), x_max = 0;
  double y_min = std::numeric_limits<double>::infinity(), y_max = 0;
  for (auto& p : c.points) {
    if (!(p.intensity > 0) || !(p.gflops > 0)) continue;
    x_min = std::min(x_min, p.intensity / 2), x_max = std::max(x_max, p.intensity * 2);
    y_min = std::min(y_min, p.gflops / 2), y_max = std::max(y_max, p.gflops * 2);
  }
  if (dram >= 0)
    for (size_t i = 0; i < n; ++i)
      if (c.roofs[i].kind == Roof::Kind::compute && g.main_roof[i] && c.roofs[i].value > 0) {
        double x = ridge_point(c.roofs[i].value, c.roofs[dram].value);
        x_min = std::min(x_min, x / 30), x_max = std::max(x_max, x * 5);
      }
  if (!(x_max > 0)) x_min = 0.01, x_max = 1000;
  auto [xl, xh] = decade_range(x_min, x_max);
  g.x_lo = xl, g.x_hi = xh;
  if (p_max > 0) y_max = std::max(y_max, p_max * 2);
  if (b_min < std::numeric_limits<double>::infinity()) y_min = std::min(y_min, b_min * g.x_lo);
  if (!(y_max > 0)) y_min = 10, y_max = 1e7;
  if (!(y_min > 0) || y_min == std::numeric_limits<double>::infinity()) y_min = y_max / 1e6;
  y_min = std::max(y_min, y_max / 1e9); // at most nine decades up the side
  auto [yl, yh] = decade_range(y_min, y_max);
  g.y_lo = yl, g.y_hi = yh;
  g.x_ticks = log_ticks(g.x_lo, g.x_hi, false);
  g.y_ticks = log_ticks(g.y_lo * 1e9, g.y_hi * 1e9, true); // labelled in FLOP/s
  for (auto& t : g.y_ticks) t.value /= 1e9;

  // Roofs, clipped to the axes.
  for (size_t i = 0; i < n; ++i) {
    const Roof& r = c.roofs[i];
    if (!(r.value > 0)) continue;
    ChartGeometry::Segment s;
    s.roof = i;
    if (r.kind == Roof::Kind::memory) {
      // Up from the left edge until it meets the highest compute roof.
      double x0 = std::max(g.x_lo, g.y_lo / r.value);
      double x1 = std::min({g.x_hi, g.y_hi / r.value, p_max > 0 ? p_max / r.value : g.x_hi});
      if (!(x1 > x0)) continue;
      s.x0 = x0, s.y0 = r.value * x0, s.x1 = x1, s.y1 = r.value * x1;
    } else {
      // Across from where the fastest memory roof meets it.
      if (r.value < g.y_lo || r.value > g.y_hi) continue;
      double x0 = std::max(g.x_lo, b_max > 0 ? r.value / b_max : g.x_lo);
      if (!(g.x_hi > x0)) continue;
      s.x0 = x0, s.y0 = r.value, s.x1 = g.x_hi, s.y1 = r.value;
    }
    g.segments.push_back(s);
  }

  // Ridges of the main DRAM roof.
  double p_main = 0;
  if (dram >= 0) {
    for (size_t i = 0; i < n; ++i) {
      const Roof& r = c.roofs[i];
      if (r.kind != Roof::Kind::compute || !g.main_roof[i] || !(r.value > 0)) continue;
      p_main = std::max(p_main, r.value);
      double x = ridge_point(r.value, c.roofs[dram].value);
      // Roofs within 3% of each other (FP16 and BF16 tensor) share one ridge marker.
      bool twin = std::any_of(g.ridges.begin(), g.ridges.end(),
                              [&](auto& o) { return std::fabs(o.intensity / x - 1) < 0.03; });
      if (!twin && x >= g.x_lo && x <= g.x_hi && r.value >= g.y_lo && r.value <= g.y_hi)
        g.ridges.push_back({size_t(dram), i, x, r.value});
    }
  }
  for (auto& p : c.points) {
    bool above = false;
    if (dram >= 0 && p.intensity > 0) {
      double bound =
          attainable_gflops(p.intensity, c.roofs[dram].value,
                            p_main > 0 ? p_main : std::numeric_limits<double>::infinity());
      above = p.gflops > 1.05 * bound;
    }
    g.above_roof.push_back(above);
  }
  return g;
}

std::vector<Shape> chart_shapes(const RooflineChart& c, int width, int height) {
  const ChartGeometry g = chart_geometry(c);
  std::vector<Shape> out;
  const double W = width, H = height;
  const double legend_w = std::min(260.0, W * 0.3);
  const PlotFrame f(g, {78, 70, W - legend_w, H - 56});
  const double L = f.rect.x0, R = f.rect.x1, T = f.rect.y0, B = f.rect.y1;
  const Rgb ink{34, 34, 34}, grey{110, 110, 110}, grid_major{221, 221, 221},
      grid_minor{240, 240, 240}, white{255, 255, 255}, warn{214, 39, 40};
  auto line = [&](double x0, double y0, double x1, double y1, Rgb col, double w, bool dashed,
                  std::string role, std::string title = {}) {
    Shape s;
    s.type = Shape::Type::line;
    s.x0 = x0, s.y0 = y0, s.x1 = x1, s.y1 = y1;
    s.stroke = col, s.width = w, s.dashed = dashed, s.role = std::move(role),
    s.title = std::move(title);
    out.push_back(std::move(s));
  };
  auto text = [&](double x, double y, std::string t, double size, Rgb col, int anchor,
                  std::string role, bool bold = false) {
    Shape s;
    s.type = Shape::Type::text;
    s.x0 = x, s.y0 = y, s.text = std::move(t), s.size = size, s.fill = col, s.anchor = anchor;
    s.role = std::move(role), s.bold = bold, s.stroked = false, s.filled = true;
    out.push_back(std::move(s));
  };
  auto circle = [&](double x, double y, double r, Rgb fill, bool filled, Rgb stroke, double w,
                    std::string role, std::string title = {}) {
    Shape s;
    s.type = Shape::Type::circle;
    s.x0 = x, s.y0 = y, s.radius = r, s.fill = fill, s.filled = filled, s.stroke = stroke,
    s.width = w;
    s.role = std::move(role), s.title = std::move(title);
    out.push_back(std::move(s));
  };
  // Text measured by the estimate that holds for every font the files may be drawn with.
  const MeasureText measure = [](const std::string& t, double size) {
    return estimate_text(t, size);
  };
  const ChartLabels labels = place_chart_labels(c, g, f, {0, 0, W, H}, measure, LabelSizes{});
  // A placed label, drawn from its anchor edge on the baseline the estimate assumed.
  auto label = [&](const ChartLabel& l, Rgb col, const char* role) {
    double x = l.anchor < 0 ? l.box.x0 : l.anchor == 0 ? (l.box.x0 + l.box.x1) / 2 : l.box.x1;
    text(x, l.box.y0 + estimate_baseline(l.size), l.text, l.size, col, l.anchor, role);
  };

  // Background, title.
  {
    Shape bg;
    bg.type = Shape::Type::rect;
    bg.x0 = 0, bg.y0 = 0, bg.x1 = W, bg.y1 = H, bg.fill = white, bg.filled = true,
    bg.stroked = false;
    bg.role = "background";
    out.push_back(bg);
  }
  const double title_w = W - L - 8;
  text(L, 26, fit_text(c.title.empty() ? "Roofline" : c.title, 17, title_w / 1.12 - 1, measure), 17,
       ink, -1, "title", true);
  if (!c.subtitle.empty())
    text(L, 46, fit_text(c.subtitle, 11.5, title_w, measure), 11.5, grey, -1, "subtitle");

  // Grid, then the tick labels that had room.
  for (auto& t : g.x_ticks) {
    double x = f.px(t.value);
    line(x, T, x, B, t.major ? grid_major : grid_minor, 1, false,
         t.major ? "grid major" : "grid minor");
  }
  for (auto& t : g.y_ticks) {
    double y = f.py(t.value);
    line(L, y, R, y, t.major ? grid_major : grid_minor, 1, false,
         t.major ? "grid major" : "grid minor");
  }
  for (auto& l : labels.placed) {
    if (l.kind == ChartLabel::Kind::tick_x) label(l, ink, "tick x");
    if (l.kind == ChartLabel::Kind::tick_y) label(l, ink, "tick y");
  }
  {
    Shape frame;
    frame.type = Shape::Type::rect;
    frame.x0 = L, frame.y0 = T, frame.x1 = R, frame.y1 = B, frame.stroke = grey, frame.width = 1;
    frame.filled = false, frame.role = "frame";
    out.push_back(frame);
  }
  text((L + R) / 2, B + 38, "arithmetic intensity (FLOP per byte of DRAM traffic)", 12, ink, 0,
       "axis-title x");
  text(L - 6, T - 12, "FLOP/s", 12, ink, 1, "axis-title y");

  // Roofs: datasheet (dashed) under measured (solid).
  for (int pass = 0; pass < 2; ++pass)
    for (auto& s : g.segments) {
      const Roof& r = c.roofs[s.roof];
      if (r.measured != (pass == 1)) continue;
      std::string role = fmt::format("roof {} {}", r.measured ? "measured" : "datasheet",
                                     r.kind == Roof::Kind::memory ? "memory" : "compute");
      line(f.px(s.x0), f.py(s.y0), f.px(s.x1), f.py(s.y1), roof_color(r), r.measured ? 2.2 : 1.6,
           !r.measured, role, r.label());
    }
  // Ridge points of the main DRAM roof.
  for (auto& rd : g.ridges)
    circle(f.px(rd.intensity), f.py(rd.gflops), 4, white, true, ink, 1.3, "ridge",
           fmt::format("ridge point: {} meets {} at {}", c.roofs[rd.memory_roof].name,
                       c.roofs[rd.compute_roof].name, intensity_text(rd.intensity)));
  // Points.
  for (size_t i = 0; i < c.points.size(); ++i) {
    const RoofPoint& p = c.points[i];
    if (!(p.intensity > 0) || !(p.gflops > 0)) continue;
    double x = f.px(std::clamp(p.intensity, g.x_lo, g.x_hi)),
           y = f.py(std::clamp(p.gflops, g.y_lo, g.y_hi));
    bool above = i < g.above_roof.size() && g.above_roof[i];
    std::string tip = fmt::format("{}: {}, {}{}", p.label, intensity_text(p.intensity),
                                  flops_text(p.gflops), above ? " (above the roof)" : "");
    if (above) circle(x, y, 9, white, false, warn, 1.5, "flag above-roof");
    bool hollow = p.kind == "predicted";
    circle(x, y, 5.5, point_color(p.kind), !hollow, hollow ? point_color(p.kind) : white,
           hollow ? 2 : 1.2, "point " + (p.kind.empty() ? std::string("attempt") : p.kind), tip);
  }
  // The labels that found a spot on the plot.
  for (auto& l : labels.placed) {
    if (l.kind == ChartLabel::Kind::roof) label(l, roof_color(c.roofs[l.index]), "roof-label");
    if (l.kind == ChartLabel::Kind::ridge) label(l, grey, "ridge-label");
    if (l.kind == ChartLabel::Kind::point) label(l, ink, "point-label");
  }

  // Legend, down the right: every roof, the kinds of point, and the labels with no room on the
  // plot. It ends where the plot does (the last x tick label may reach under it); what does not
  // fit is left out, with a count.
  const double lx = R + 18;
  double ly = T + 4;
  int left_out = 0;
  auto room = [&](double need) { return ly + need <= B; };
  auto legend_text = [&](double x, const std::string& t, double size, Rgb col, bool bold = false) {
    text(x, ly, fit_text(t, size, (W - x - 4) / (bold ? 1.12 : 1.0) - (bold ? 1 : 0), measure),
         size, col, -1, "legend", bold);
  };
  legend_text(lx, "Roofs", 12, ink, true);
  ly += 14;
  legend_text(lx, "solid: measured, dashed: datasheet", 9.5, grey);
  ly += 17;
  for (auto& r : c.roofs) {
    if (!(r.value > 0)) continue;
    if (!room(15)) {
      ++left_out;
      continue;
    }
    line(lx, ly - 4, lx + 26, ly - 4, roof_color(r), r.measured ? 2.2 : 1.6, !r.measured,
         fmt::format("legend roof {}", r.measured ? "measured" : "datasheet"));
    legend_text(lx + 32, r.short_label(), 11, ink);
    ly += 15;
  }
  std::vector<std::string> kinds;
  for (auto& p : c.points)
    if (p.intensity > 0 && p.gflops > 0 &&
        std::find(kinds.begin(), kinds.end(), p.kind) == kinds.end())
      kinds.push_back(p.kind);
  if (!kinds.empty() && !room(24 + 17)) left_out += int(kinds.size());
  if (!kinds.empty() && room(24 + 17)) {
    ly += 6;
    legend_text(lx, "Kernels", 12, ink, true);
    ly += 18;
    for (auto& k : kinds) {
      if (!room(17)) {
        ++left_out;
        continue;
      }
      bool hollow = k == "predicted";
      circle(lx + 13, ly - 4, 5, point_color(k), !hollow, hollow ? point_color(k) : white,
             hollow ? 2 : 1.2, "legend point");
      legend_text(lx + 32, k.empty() ? "attempt" : k, 11, ink);
      ly += 17;
    }
  }
  if (std::any_of(g.above_roof.begin(), g.above_roof.end(), [](bool b) { return b; }) &&
      room(4 + 26)) {
    ly += 4;
    legend_text(lx, "(!) above the roof: a wrong", 10, warn);
    ly += 13;
    legend_text(lx, "[cost], or data from cache", 10, warn);
    ly += 13;
  }
  // Roofs are listed above already; ridges and points whose labels had no room, here.
  bool heading = false;
  for (auto& l : labels.legend) {
    if (l.kind == ChartLabel::Kind::roof) continue;
    if (!heading && room(6 + 16 + 14)) {
      ly += 6;
      legend_text(lx, "No room on the plot", 11, ink, true);
      ly += 16;
      heading = true;
    }
    if (!heading || !room(14)) {
      ++left_out;
      continue;
    }
    legend_text(lx + 8, l.text, 10.5, l.kind == ChartLabel::Kind::ridge ? grey : ink);
    ly += 14;
  }
  if (left_out > 0) {
    ly = std::max(ly, B);
    legend_text(lx, fmt::format("({} more: a larger image shows them)", left_out), 10, grey);
  }
  return out;
}

std::string chart_svg(const RooflineChart& c, int width, int height) {
  return shapes_svg(chart_shapes(c, width, height), width, height,
                    c.title.empty() ? "Roofline" : c.title);
}

std::string shapes_svg(const std::vector<Shape>& shapes, int width, int height,
                       const std::string& title) {
  std::string s = fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
                              "height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                              "font-family=\"DejaVu Sans, Verdana, sans-serif\">\n",
                              width, height);
  s += fmt::format("<title>{}</title>\n", esc(title));
  for (const Shape& sh : shapes) {
    std::string cls = sh.role.empty() ? "" : fmt::format(" class=\"{}\"", esc(sh.role));
    std::string stroke =
        sh.stroked ? fmt::format(" stroke=\"{}\" stroke-width=\"{:.2f}\"", hex(sh.stroke), sh.width)
                   : " stroke=\"none\"";
    std::string fill = sh.filled ? fmt::format(" fill=\"{}\"", hex(sh.fill)) : " fill=\"none\"";
    std::string dash = sh.dashed ? " stroke-dasharray=\"7 5\"" : "";
    std::string body;
    std::string tag;
    switch (sh.type) {
    case Shape::Type::line:
      tag = "line";
      body = fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"{}{}{}",
                         sh.x0, sh.y0, sh.x1, sh.y1, stroke, dash, cls);
      break;
    case Shape::Type::rect:
      tag = "rect";
      body = fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"{}{}{}",
                         sh.x0, sh.y0, sh.x1 - sh.x0, sh.y1 - sh.y0, fill, stroke, cls);
      break;
    case Shape::Type::circle:
      tag = "circle";
      body = fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\"{}{}{}", sh.x0, sh.y0,
                         sh.radius, fill, stroke, cls);
      break;
    case Shape::Type::text:
      tag = "text";
      body =
          fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{:.1f}\" fill=\"{}\"{}{}{}>{}",
                      sh.x0, sh.y0, sh.size, hex(sh.fill),
                      sh.anchor == 0  ? " text-anchor=\"middle\""
                      : sh.anchor > 0 ? " text-anchor=\"end\""
                                      : "",
                      sh.bold ? " font-weight=\"bold\"" : "", cls, esc(sh.text));
      s += body + "</text>\n";
      continue;
    }
    if (sh.title.empty())
      s += body + "/>\n";
    else
      s += fmt::format("{}><title>{}</title></{}>\n", body, esc(sh.title), tag);
  }
  s += "</svg>\n";
  return s;
}

} // namespace wb
