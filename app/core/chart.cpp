#include "chart.hpp"

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
  // GB/s and GFLOP/s in, the largest unit that keeps the number at or above 1 out.
  const char* unit_g = k == Roof::Kind::memory ? "GB/s" : "GFLOP/s";
  const char* unit_t = k == Roof::Kind::memory ? "TB/s" : "TFLOP/s";
  const char* unit_p = k == Roof::Kind::memory ? "PB/s" : "PFLOP/s";
  if (v >= 1e6) return fmt::format("{:.3g} {}", v / 1e6, unit_p);
  if (v >= 1e3) return fmt::format("{:.3g} {}", v / 1e3, unit_t);
  return fmt::format("{:.3g} {}", v, unit_g);
}

// Text width without a font at hand: DejaVu Sans averages a little over half an em.
double text_width(const std::string& s, double size) {
  size_t chars = 0;
  for (unsigned char ch : s)
    if ((ch & 0xc0) != 0x80) ++chars; // count UTF-8 code points
  return 0.56 * size * double(chars);
}

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

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

double chart_text_width(const std::string& text, double size) {
  return text_width(text, size);
}

std::string Roof::label() const {
  return fmt::format("{} {} {}", name, value_text(value, kind),
                     measured ? "measured" : "datasheet");
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
  const double L = 78, R = W - legend_w, T = 70, B = H - 56;
  auto px = [&](double x) {
    return L + (std::log10(x) - std::log10(g.x_lo)) / (std::log10(g.x_hi) - std::log10(g.x_lo)) *
                   (R - L);
  };
  auto py = [&](double y) {
    return B - (std::log10(y) - std::log10(g.y_lo)) / (std::log10(g.y_hi) - std::log10(g.y_lo)) *
                   (B - T);
  };
  const Rgb ink{34, 34, 34}, grey{110, 110, 110}, grid_major{221, 221, 221},
      grid_minor{240, 240, 240}, white{255, 255, 255};
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
  // Labels placed so far (pixels), so later ones step aside.
  std::vector<Box> placed;
  // The first of the candidate spots (nudged up or down by up to a few lines) where the text
  // overlaps no label or marker placed so far.
  struct Spot {
    double x, y;
    int anchor;
  };
  auto place = [&](std::initializer_list<Spot> spots, const std::string& t, double size) {
    const double w = text_width(t, size);
    auto box = [&](const Spot& s, double yy) {
      double left = s.anchor < 0 ? s.x : s.anchor == 0 ? s.x - w / 2 : s.x - w;
      return Box{left - 1, yy - size, left + w + 1, yy + 3};
    };
    // Every spot unmoved first, then every spot one line off, and so on.
    for (int k = 0; k <= 8; ++k)
      for (const Spot& s : spots) {
        double yy = s.y + (k % 2 ? 1 : -1) * ((k + 1) / 2) * (size + 2);
        Box b = box(s, yy);
        if (b.y0 < T || b.y1 > B || b.x0 < L || b.x1 > R) continue;
        if (std::any_of(placed.begin(), placed.end(), [&](auto& o) { return o.overlaps(b); }))
          continue;
        placed.push_back(b);
        return Spot{s.x, yy, s.anchor};
      }
    const Spot& s = *spots.begin();
    placed.push_back(box(s, s.y));
    return s;
  };
  // The points' markers are in the way of every label.
  for (auto& p : c.points)
    if (p.intensity > 0 && p.gflops > 0) {
      double x = px(std::clamp(p.intensity, g.x_lo, g.x_hi)),
             y = py(std::clamp(p.gflops, g.y_lo, g.y_hi));
      placed.push_back({x - 6, y - 6, x + 6, y + 6});
    }

  // Background, title.
  {
    Shape bg;
    bg.type = Shape::Type::rect;
    bg.x0 = 0, bg.y0 = 0, bg.x1 = W, bg.y1 = H, bg.fill = white, bg.filled = true,
    bg.stroked = false;
    bg.role = "background";
    out.push_back(bg);
  }
  text(L, 26, c.title.empty() ? "Roofline" : c.title, 17, ink, -1, "title", true);
  if (!c.subtitle.empty()) text(L, 46, c.subtitle, 11.5, grey, -1, "subtitle");

  // Grid and ticks.
  for (auto& t : g.x_ticks) {
    double x = px(t.value);
    line(x, T, x, B, t.major ? grid_major : grid_minor, 1, false,
         t.major ? "grid major" : "grid minor");
    if (!t.label.empty()) text(x, B + 17, t.label, 11, ink, 0, "tick x");
  }
  for (auto& t : g.y_ticks) {
    double y = py(t.value);
    line(L, y, R, y, t.major ? grid_major : grid_minor, 1, false,
         t.major ? "grid major" : "grid minor");
    if (!t.label.empty()) text(L - 6, y + 4, t.label, 11, ink, 1, "tick y");
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
  text(L - 6, T - 10, "FLOP/s", 12, ink, 1, "axis-title y");

  // Roofs: datasheet (dashed) under measured (solid).
  for (int pass = 0; pass < 2; ++pass)
    for (auto& s : g.segments) {
      const Roof& r = c.roofs[s.roof];
      if (r.measured != (pass == 1)) continue;
      std::string role = fmt::format("roof {} {}", r.measured ? "measured" : "datasheet",
                                     r.kind == Roof::Kind::memory ? "memory" : "compute");
      line(px(s.x0), py(s.y0), px(s.x1), py(s.y1), roof_color(r), r.measured ? 2.2 : 1.6,
           !r.measured, role, r.label());
    }
  // Labels of the main roofs, on the chart: compute ones over their right end, memory ones under
  // their line near its left end (the line rises away from the text; points sit further right).
  for (auto& s : g.segments) {
    const Roof& r = c.roofs[s.roof];
    if (!g.main_roof[s.roof]) continue;
    std::string t = fmt::format("{} {}", r.name, value_text(r.value, r.kind));
    if (r.kind == Roof::Kind::compute) {
      Spot sp = place({{R - 4, py(s.y0) - 5, 1}, {R - 4, py(s.y0) + 15, 1}}, t, 11);
      text(sp.x, sp.y, t, 11, roof_color(r), sp.anchor, "roof-label");
    } else {
      // Above and to the left of a point on the line: the line falls away under the text. The
      // point sits one label's width in from where the line enters the chart.
      double w = text_width(t, 11);
      double x = std::min(px(s.x0) + w + 12, px(s.x1));
      double xd =
          std::pow(10.0, std::log10(g.x_lo) + (x - L) / (R - L) * std::log10(g.x_hi / g.x_lo));
      Spot sp = place({{x - 4, py(r.value * xd) - 6, 1}}, t, 11);
      text(sp.x, sp.y, t, 11, roof_color(r), sp.anchor, "roof-label");
    }
  }
  // Ridge points of the main DRAM roof.
  for (auto& rd : g.ridges) {
    double x = px(rd.intensity), y = py(rd.gflops);
    circle(x, y, 4, white, true, ink, 1.3, "ridge",
           fmt::format("ridge point: {} meets {} at {:.3g} FLOP/byte", c.roofs[rd.memory_roof].name,
                       c.roofs[rd.compute_roof].name, rd.intensity));
    std::string t = fmt::format("ridge {:.3g} FLOP/B", rd.intensity);
    Spot sp = place({{x + 7, y + 15, -1}, {x - 7, y + 15, 1}}, t, 10);
    text(sp.x, sp.y, t, 10, grey, sp.anchor, "ridge-label");
  }
  // Points, then their labels.
  for (size_t i = 0; i < c.points.size(); ++i) {
    const RoofPoint& p = c.points[i];
    if (!(p.intensity > 0) || !(p.gflops > 0)) continue;
    double x = px(std::clamp(p.intensity, g.x_lo, g.x_hi)),
           y = py(std::clamp(p.gflops, g.y_lo, g.y_hi));
    bool above = i < g.above_roof.size() && g.above_roof[i];
    std::string tip = fmt::format("{}: {:.3g} FLOP/B, {}FLOP/s{}", p.label, p.intensity,
                                  si_number(p.gflops * 1e9), above ? " (above the roof)" : "");
    if (above) circle(x, y, 9, white, false, {214, 39, 40}, 1.5, "flag above-roof");
    bool hollow = p.kind == "predicted";
    circle(x, y, 5.5, point_color(p.kind), !hollow, hollow ? point_color(p.kind) : white,
           hollow ? 2 : 1.2, "point " + (p.kind.empty() ? std::string("attempt") : p.kind), tip);
  }
  for (size_t i = 0; i < c.points.size(); ++i) {
    const RoofPoint& p = c.points[i];
    if (!(p.intensity > 0) || !(p.gflops > 0)) continue;
    double x = px(std::clamp(p.intensity, g.x_lo, g.x_hi)),
           y = py(std::clamp(p.gflops, g.y_lo, g.y_hi));
    bool above = i < g.above_roof.size() && g.above_roof[i];
    std::string t = p.label + (above ? " (!)" : "");
    Spot sp = place({{x + 9, y + 4, -1}, {x - 9, y + 4, 1}}, t, 11);
    text(sp.x, sp.y, t, 11, ink, sp.anchor, "point-label");
  }

  // Legend.
  double lx = R + 18, ly = T + 4;
  text(lx, ly, "Roofs", 12, ink, -1, "legend", true);
  ly += 18;
  for (auto& r : c.roofs) {
    if (!(r.value > 0)) continue;
    line(lx, ly - 4, lx + 26, ly - 4, roof_color(r), r.measured ? 2.2 : 1.6, !r.measured,
         fmt::format("legend roof {}", r.measured ? "measured" : "datasheet"));
    text(lx + 32, ly, fmt::format("{} {}", r.name, value_text(r.value, r.kind)), 11, ink, -1,
         "legend");
    ly += 15;
    text(lx + 32, ly, r.measured ? "measured" : "datasheet", 9.5, grey, -1, "legend");
    ly += 16;
  }
  std::vector<std::string> kinds;
  for (auto& p : c.points)
    if (p.intensity > 0 && p.gflops > 0 &&
        std::find(kinds.begin(), kinds.end(), p.kind) == kinds.end())
      kinds.push_back(p.kind);
  if (!kinds.empty()) {
    ly += 6;
    text(lx, ly, "Kernels", 12, ink, -1, "legend", true);
    ly += 18;
    for (auto& k : kinds) {
      bool hollow = k == "predicted";
      circle(lx + 13, ly - 4, 5, point_color(k), !hollow, hollow ? point_color(k) : white,
             hollow ? 2 : 1.2, "legend point");
      text(lx + 32, ly, k.empty() ? "attempt" : k, 11, ink, -1, "legend");
      ly += 17;
    }
  }
  if (std::any_of(g.above_roof.begin(), g.above_roof.end(), [](bool b) { return b; })) {
    ly += 4;
    text(lx, ly, "(!) above the roof: a wrong", 10, {214, 39, 40}, -1, "legend");
    text(lx, ly + 13, "[cost], or data from cache", 10, {214, 39, 40}, -1, "legend");
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
