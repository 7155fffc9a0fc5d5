// The roofline chart, made once in the core and drawn three ways: an SVG file, a PNG file (a
// small software rasteriser), and the GUI's roofline window, which can draw chart_shapes() onto an
// ImGui draw list or lay it out itself from chart_geometry().
//
//   RooflineChart c;
//   c.roofs = device_roofs(store.ceilings(uuid, driver), profile_for_device(device));
//   c.points.push_back({"01 solution", intensity, gflops, "solution"});
//   std::string svg = chart_svg(c);
//
// Log-log axes: FLOP per byte across, FLOP/s up. Measured roofs are solid, datasheet roofs dashed,
// the ridge points of the main DRAM roof are marked and labelled.
#pragma once
#include "roofline.hpp"
#include "store.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace wb {

struct Roof {
  enum class Kind { memory, compute };
  Kind kind = Kind::memory;
  std::string metric; // roofline.hpp's metric name: "dram_gbps", "fp32_gflops" ...
  std::string name;   // "DRAM", "FP32", "FP16 tensor"
  double value = 0;   // GB/s (memory) or GFLOP/s (compute)
  bool measured = false;
  // "DRAM 4.41 TB/s measured", "FP32 67 TFLOP/s datasheet"
  std::string label() const;
  // "DRAM 4.41 TB/s": on the chart, where the line's dash says which
  std::string short_label() const;
};

struct RoofPoint {
  std::string label;    // "01 solution"
  double intensity = 0; // FLOP/byte
  double gflops = 0;    // achieved (or modelled) GFLOP/s
  std::string kind;     // "solution", "starter", "attempt", "reference", "predicted"
};

struct RooflineChart {
  std::string title;    // "NVIDIA H200: roofline"
  std::string subtitle; // "measured 2026-11-21 (solid), datasheet (dashed)"
  std::vector<Roof> roofs;
  std::vector<RoofPoint> points;
};

// Roofs for a device: every measured ceiling of DRAM, L2, shared memory, FP32, FP64 and the FP16
// and BF16 tensor cores (solid), and the datasheet's DRAM, shared memory, FP32, FP64 and FP16/BF16
// tensor figures (dashed). Either argument may be empty / nullptr.
std::vector<Roof> device_roofs(const std::vector<MeasuredCeiling>& measured,
                               const GpuProfile* prof);

// The chart in data coordinates (intensity, GFLOP/s).
struct ChartGeometry {
  double x_lo = 0.01, x_hi = 1000, y_lo = 10, y_hi = 1e7;
  std::vector<Tick> x_ticks, y_ticks; // y ticks are labelled in FLOP/s with SI prefixes
  struct Segment {
    size_t roof = 0;
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  };
  std::vector<Segment> segments; // each roof clipped to the axes (a roof off the chart has none)
  struct Ridge {
    size_t memory_roof = 0, compute_roof = 0;
    double intensity = 0, gflops = 0;
  };
  std::vector<Ridge> ridges; // the main DRAM roof meeting each main compute roof
  // Per point: above the attainable bound of the main roofs (a wrong [cost], or cache hits).
  std::vector<bool> above_roof;
  // Per roof: the roof its family is drawn with (measured where there is one); ridges use these.
  std::vector<bool> main_roof;
};
ChartGeometry chart_geometry(const RooflineChart& c);

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

// A drawing primitive in pixels (origin top-left).
struct Shape {
  enum class Type { line, circle, rect, text };
  Type type = Type::line;
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0; // line ends; rect corners; circle centre / text anchor
  double radius = 0;                     // circle
  double width = 1;                      // stroke width
  Rgb stroke, fill;
  bool stroked = true, filled = false;
  bool dashed = false;
  double opacity = 1;
  std::string text; // text
  double size = 12; // font size in pixels
  int anchor = -1;  // text: -1 start, 0 middle, 1 end (x0 is that point; y0 the baseline)
  bool bold = false;
  std::string role;  // SVG class: "roof measured memory", "point solution", "ridge", "grid" ...
  std::string title; // a tooltip (SVG <title>)
};

std::vector<Shape> chart_shapes(const RooflineChart& c, int width = 1000, int height = 640);

// A standalone SVG document (UTF-8, valid XML).
std::string chart_svg(const RooflineChart& c, int width = 1000, int height = 640);

// An 8-bit RGB image of the chart. Text needs a TrueType font (DejaVu Sans, found at run time, or
// $WARPBOOK_FONT); without one the chart is drawn without text and `has_text` is false.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb; // row-major, 3 bytes a pixel
  bool has_text = false;
};
Image render_chart(const RooflineChart& c, int width = 1000, int height = 640);
// Writes render_chart() as a PNG. Returns false with `why` set when it cannot (no PNG support in
// this build, or the file cannot be written).
bool write_chart_png(const RooflineChart& c, const std::string& path, std::string& why,
                     int width = 1000, int height = 640);

// The same for any drawing made of shapes (the sweep chart): an SVG document, an image, a PNG.
std::string shapes_svg(const std::vector<Shape>& shapes, int width, int height,
                       const std::string& title);
Image render_shapes(const std::vector<Shape>& shapes, int width, int height);
bool write_shapes_png(const std::vector<Shape>& shapes, const std::string& path, std::string& why,
                      int width, int height);

// False when this build has no PNG writer and no text rasteriser (stb was not found at build time).
bool chart_png_supported();

// The TrueType font the PNG uses: $WARPBOOK_FONT, else DejaVu Sans where Debian and others keep
// it. Empty when none is found.
std::string chart_font_path();

} // namespace wb
