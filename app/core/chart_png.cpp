// The PNG form of the roofline chart: chart_shapes() drawn by a small anti-aliased software
// rasteriser (lines, dashes, circles, rectangles), text through stb_truetype with a font found at
// run time, and stb_image_write for the file. stb is compiled into this file with static linkage,
// so that it never clashes with the copy Dear ImGui's library links.
#include "chart.hpp"
#include "chart_labels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#if __has_include(<stb/stb_truetype.h>) && __has_include(<stb/stb_image_write.h>)
#define WB_HAVE_STB 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#define STBTT_STATIC
#define STB_TRUETYPE_IMPLEMENTATION
#include <stb/stb_truetype.h>
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop
#else
#define WB_HAVE_STB 0
#endif

namespace wb {

namespace {

class Canvas {
public:
  Canvas(int w, int h) : w_(w), h_(h), px_(size_t(w) * h * 3, 255) {}

  // Mixes `c` into one pixel with coverage `a` (0..1).
  void blend(int x, int y, Rgb c, double a) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_ || a <= 0) return;
    a = std::min(a, 1.0);
    uint8_t* p = &px_[(size_t(y) * w_ + x) * 3];
    p[0] = uint8_t(std::lround(p[0] + (c.r - p[0]) * a));
    p[1] = uint8_t(std::lround(p[1] + (c.g - p[1]) * a));
    p[2] = uint8_t(std::lround(p[2] + (c.b - p[2]) * a));
  }

  // A segment `w` pixels wide; coverage from the distance of each pixel centre to the segment.
  void segment(double x0, double y0, double x1, double y1, double w, Rgb c, double opacity) {
    const double hw = w / 2;
    int xa = int(std::floor(std::min(x0, x1) - hw - 1)),
        xb = int(std::ceil(std::max(x0, x1) + hw + 1));
    int ya = int(std::floor(std::min(y0, y1) - hw - 1)),
        yb = int(std::ceil(std::max(y0, y1) + hw + 1));
    xa = std::max(xa, 0), ya = std::max(ya, 0), xb = std::min(xb, w_ - 1),
    yb = std::min(yb, h_ - 1);
    const double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
    for (int y = ya; y <= yb; ++y)
      for (int x = xa; x <= xb; ++x) {
        double cx = x + 0.5, cy = y + 0.5;
        double t = len2 > 0 ? std::clamp(((cx - x0) * dx + (cy - y0) * dy) / len2, 0.0, 1.0) : 0;
        double ex = cx - (x0 + t * dx), ey = cy - (y0 + t * dy);
        double d = std::sqrt(ex * ex + ey * ey);
        blend(x, y, c, std::clamp(hw + 0.5 - d, 0.0, 1.0) * opacity);
      }
  }

  void line(const Shape& s) {
    if (!s.dashed) return segment(s.x0, s.y0, s.x1, s.y1, s.width, s.stroke, s.opacity);
    // 7 on, 5 off, as the SVG's stroke-dasharray.
    const double dx = s.x1 - s.x0, dy = s.y1 - s.y0, len = std::sqrt(dx * dx + dy * dy);
    if (len <= 0) return;
    for (double t = 0; t < len; t += 12) {
      double e = std::min(t + 7, len);
      segment(s.x0 + dx * t / len, s.y0 + dy * t / len, s.x0 + dx * e / len, s.y0 + dy * e / len,
              s.width, s.stroke, s.opacity);
    }
  }

  void circle(const Shape& s) {
    const double r = s.radius, hw = s.stroked ? s.width / 2 : 0;
    int xa = int(std::floor(s.x0 - r - hw - 1)), xb = int(std::ceil(s.x0 + r + hw + 1));
    int ya = int(std::floor(s.y0 - r - hw - 1)), yb = int(std::ceil(s.y0 + r + hw + 1));
    for (int y = ya; y <= yb; ++y)
      for (int x = xa; x <= xb; ++x) {
        double d = std::hypot(x + 0.5 - s.x0, y + 0.5 - s.y0);
        if (s.filled) blend(x, y, s.fill, std::clamp(r + 0.5 - d, 0.0, 1.0) * s.opacity);
        if (s.stroked)
          blend(x, y, s.stroke, std::clamp(hw + 0.5 - std::fabs(d - r), 0.0, 1.0) * s.opacity);
      }
  }

  void rect(const Shape& s) {
    if (s.filled)
      for (int y = std::max(0, int(s.y0)); y < std::min(h_, int(std::ceil(s.y1))); ++y)
        for (int x = std::max(0, int(s.x0)); x < std::min(w_, int(std::ceil(s.x1))); ++x)
          blend(x, y, s.fill, s.opacity);
    if (s.stroked) {
      Shape e = s;
      e.dashed = false;
      auto edge = [&](double a, double b, double c, double d) {
        e.x0 = a, e.y0 = b, e.x1 = c, e.y1 = d;
        line(e);
      };
      // Half-pixel offsets put a 1-pixel border on whole pixels.
      double x0 = std::floor(s.x0) + 0.5, y0 = std::floor(s.y0) + 0.5;
      double x1 = std::floor(s.x1) + 0.5, y1 = std::floor(s.y1) + 0.5;
      edge(x0, y0, x1, y0), edge(x1, y0, x1, y1), edge(x1, y1, x0, y1), edge(x0, y1, x0, y0);
    }
  }

  int width() const { return w_; }
  int height() const { return h_; }
  std::vector<uint8_t>& pixels() { return px_; }

private:
  int w_, h_;
  std::vector<uint8_t> px_;
};

std::vector<int> codepoints(const std::string& s) {
  std::vector<int> out;
  for (const CodePoint& c : utf8_code_points(s)) out.push_back(int(c.value));
  return out;
}

#if WB_HAVE_STB
class Font {
public:
  bool load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    data_.assign(std::istreambuf_iterator<char>(in), {});
    if (data_.empty()) return false;
    auto* d = reinterpret_cast<const unsigned char*>(data_.data());
    return stbtt_InitFont(&info_, d, stbtt_GetFontOffsetForIndex(d, 0)) != 0;
  }

  // The line's ascent to descent spans 1.2 font sizes, as a browser's line of DejaVu Sans does.
  float scale(double size) const { return stbtt_ScaleForPixelHeight(&info_, float(size) * 1.2f); }

  double width(const std::string& text, double size) const {
    const float sc = scale(size);
    std::vector<int> cps = codepoints(text);
    double w = 0;
    for (size_t i = 0; i < cps.size(); ++i) {
      int adv = 0, lsb = 0;
      stbtt_GetCodepointHMetrics(&info_, cps[i], &adv, &lsb);
      w += adv * sc;
      if (i + 1 < cps.size()) w += stbtt_GetCodepointKernAdvance(&info_, cps[i], cps[i + 1]) * sc;
    }
    return w;
  }

  // Draws `t` with its baseline at y; x is the start, middle or end as `anchor` says. Bold is
  // drawn twice, a third of a pixel apart.
  void draw(Canvas& cv, const Shape& s) {
    const float sc = scale(s.size);
    std::vector<int> cps = codepoints(s.text);
    double w = width(s.text, s.size);
    double x = s.anchor < 0 ? s.x0 : s.anchor == 0 ? s.x0 - w / 2 : s.x0 - w;
    for (int pass = 0; pass < (s.bold ? 2 : 1); ++pass) {
      double pen = x + pass * 0.35;
      for (size_t i = 0; i < cps.size(); ++i) {
        int adv = 0, lsb = 0;
        stbtt_GetCodepointHMetrics(&info_, cps[i], &adv, &lsb);
        // Render at the pen's sub-pixel offset so that spacing stays even.
        float shift = float(pen - std::floor(pen));
        int bw = 0, bh = 0, xoff = 0, yoff = 0;
        unsigned char* bmp = stbtt_GetCodepointBitmapSubpixel(&info_, sc, sc, shift, 0.f, cps[i],
                                                              &bw, &bh, &xoff, &yoff);
        if (bmp) {
          int ox = int(std::floor(pen)) + xoff, oy = int(std::lround(s.y0)) + yoff;
          for (int r = 0; r < bh; ++r)
            for (int cc = 0; cc < bw; ++cc)
              cv.blend(ox + cc, oy + r, s.fill, bmp[r * bw + cc] / 255.0 * s.opacity);
          stbtt_FreeBitmap(bmp, nullptr);
        }
        pen += adv * sc;
        if (i + 1 < cps.size())
          pen += stbtt_GetCodepointKernAdvance(&info_, cps[i], cps[i + 1]) * sc;
      }
    }
  }

private:
  std::vector<char> data_;
  stbtt_fontinfo info_{};
};
#endif

} // namespace

bool chart_png_supported() {
  return WB_HAVE_STB != 0;
}

std::string chart_font_path() {
  std::error_code ec;
  if (const char* e = std::getenv("WARPBOOK_FONT");
      e && *e && std::filesystem::is_regular_file(e, ec))
    return e;
  for (const char* p :
       {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
        "/usr/local/share/fonts/DejaVuSans.ttf"})
    if (std::filesystem::is_regular_file(p, ec)) return p;
  return {};
}

MeasureText chart_font_measure() {
#if WB_HAVE_STB
  auto font = std::make_shared<Font>();
  std::string path = chart_font_path();
  if (path.empty() || !font->load(path)) return {};
  return [font](const std::string& text, double size) {
    return TextExtent{font->width(text, size), 1.2 * size};
  };
#else
  return {};
#endif
}

Image render_chart(const RooflineChart& c, int width, int height) {
  return render_shapes(chart_shapes(c, width, height), width, height);
}

Image render_shapes(const std::vector<Shape>& shapes, int width, int height) {
  Canvas cv(width, height);
  Image img;
#if WB_HAVE_STB
  Font font;
  std::string fp = chart_font_path();
  img.has_text = !fp.empty() && font.load(fp);
#endif
  for (const Shape& s : shapes) {
    switch (s.type) {
    case Shape::Type::line:
      cv.line(s);
      break;
    case Shape::Type::circle:
      cv.circle(s);
      break;
    case Shape::Type::rect:
      cv.rect(s);
      break;
    case Shape::Type::text:
#if WB_HAVE_STB
      if (img.has_text) font.draw(cv, s);
#endif
      break;
    }
  }
  img.width = width;
  img.height = height;
  img.rgb = std::move(cv.pixels());
  return img;
}

bool write_chart_png(const RooflineChart& c, const std::string& path, std::string& why, int width,
                     int height) {
  return write_shapes_png(chart_shapes(c, width, height), path, why, width, height);
}

bool write_shapes_png(const std::vector<Shape>& shapes, const std::string& path, std::string& why,
                      int width, int height) {
#if WB_HAVE_STB
  Image img = render_shapes(shapes, width, height);
  if (!stbi_write_png(path.c_str(), img.width, img.height, 3, img.rgb.data(), img.width * 3)) {
    why = "could not write " + path;
    return false;
  }
  return true;
#else
  (void)shapes, (void)path, (void)width, (void)height;
  why = "this build has no PNG support (stb headers were not found when it was built); use --svg";
  return false;
#endif
}

} // namespace wb
