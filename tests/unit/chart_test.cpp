// The roofline chart: roofs from ceilings, geometry (ranges, clipping, ridges, flags), the SVG
// (well-formed XML with the roofs and points where they belong) and the PNG raster.
#include "core/chart.hpp"

#include <cmath>
#include <doctest/doctest.h>
#include <fstream>
#include <regex>
#include <unistd.h>

using namespace wb;

namespace {

// A small XML well-formedness check: balanced tags, quoted attributes, only the five predefined
// entities, one root element. Returns an empty string when well formed, else what is wrong.
std::string xml_problem(const std::string& s) {
  std::vector<std::string> stack;
  size_t i = 0, roots = 0;
  if (s.rfind("<?xml", 0) == 0) i = s.find("?>") + 2;
  while (i < s.size()) {
    if (s[i] == '<') {
      size_t end = s.find('>', i);
      if (end == std::string::npos) return "unterminated tag";
      std::string tag = s.substr(i + 1, end - i - 1);
      if (tag.empty()) return "empty tag";
      if (tag[0] == '/') {
        std::string name = tag.substr(1);
        if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
        stack.pop_back();
      } else {
        bool self = tag.back() == '/';
        std::string name = tag.substr(0, tag.find_first_of(" /\n"));
        // Attributes: name="value" pairs with no raw < or & inside.
        std::string attrs = tag.substr(name.size(), tag.size() - name.size() - (self ? 1 : 0));
        static const std::regex attr(R"(^(\s+[A-Za-z_:][-\w:.]*="[^"<&]*")*\s*$)");
        if (!std::regex_match(attrs, attr)) return "bad attributes in <" + name + ">";
        if (stack.empty()) ++roots;
        if (!self) stack.push_back(name);
      }
      i = end + 1;
    } else if (s[i] == '&') {
      size_t semi = s.find(';', i);
      std::string ent = s.substr(i, semi == std::string::npos ? 1 : semi - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;")
        return "bad entity " + ent;
      i = semi + 1;
    } else {
      if (stack.empty() && !std::isspace(static_cast<unsigned char>(s[i])))
        return "text outside the root";
      ++i;
    }
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  if (roots != 1) return "not exactly one root element";
  return {};
}

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

RooflineChart h200_chart() {
  RooflineChart c;
  c.title = "NVIDIA H200: roofline";
  c.subtitle = "solid: measured; dashed: datasheet";
  std::vector<MeasuredCeiling> m = {{metric::dram, 4410, 4380, "GB/s"},
                                    {metric::l2, 11000, 10800, "GB/s"},
                                    {metric::shared, 30000, 29500, "GB/s"},
                                    {metric::fp32, 64500, 64000, "GFLOP/s"},
                                    {metric::bf16_tc, 800000, 790000, "GFLOP/s"}};
  c.roofs = device_roofs(m, find_profile("h200"));
  c.points = {{"01 solution, 92%", 1.0 / 12, 340, "solution"},
              {"01 starter (wrong)", 1.0 / 12, 20, "starter"},
              {"03 solution <&>", 0.625, 2500, "solution"},
              {"no point", 0, 0, "attempt"}};
  return c;
}

} // namespace

TEST_CASE("the xml checker itself") {
  CHECK(xml_problem("<a><b x=\"1\"/>t &amp; u</a>").empty());
  CHECK(!xml_problem("<a><b></a>").empty());
  CHECK(!xml_problem("<a x=1></a>").empty());
  CHECK(!xml_problem("<a>&nbsp;</a>").empty());
  CHECK(!xml_problem("<a/><b/>").empty());
}

TEST_CASE("roofs come from the measured ceilings and the datasheet") {
  RooflineChart c = h200_chart();
  int measured = 0, datasheet = 0;
  for (auto& r : c.roofs) (r.measured ? measured : datasheet)++;
  CHECK(measured == 5);
  CHECK(datasheet == 5); // DRAM, shared, FP32, FP64, FP16/BF16 tensor
  CHECK(c.roofs[0].metric == metric::dram);
  CHECK(c.roofs[0].kind == Roof::Kind::memory);
  CHECK(c.roofs[0].label() == "DRAM 4.41 TB/s measured");
  CHECK(device_roofs({}, nullptr).empty());
  CHECK(device_roofs({}, find_profile("t4")).size() == 5);
}

TEST_CASE("geometry: ranges hold every point and ridge, roofs are clipped, flags set") {
  RooflineChart c = h200_chart();
  c.points.push_back({"cached", 0.1, 5000, "attempt"}); // 0.1 FLOP/B x 4410 GB/s = 441 at most
  ChartGeometry g = chart_geometry(c);
  CHECK(g.x_lo <= 1.0 / 24);
  CHECK(g.x_hi >= 800000 / 4410.0);
  CHECK(std::fabs(std::log10(g.x_lo) - std::round(std::log10(g.x_lo))) < 1e-9); // whole decades
  CHECK(g.y_hi >= 800000 * 1.5);
  CHECK(g.y_lo <= 10);
  for (auto& p : c.points)
    if (p.intensity > 0) {
      CHECK(p.intensity >= g.x_lo);
      CHECK(p.intensity <= g.x_hi);
      CHECK(p.gflops >= g.y_lo);
      CHECK(p.gflops <= g.y_hi);
    }
  // Every roof with a value is drawn, inside the axes.
  CHECK(g.segments.size() == c.roofs.size());
  for (auto& s : g.segments) {
    CHECK(s.x0 >= g.x_lo * (1 - 1e-9));
    CHECK(s.x1 <= g.x_hi * (1 + 1e-9));
    CHECK(s.y1 <= g.y_hi * (1 + 1e-9));
    const Roof& r = c.roofs[s.roof];
    if (r.kind == Roof::Kind::memory)
      CHECK(s.y1 / s.x1 == doctest::Approx(r.value));
    else
      CHECK(s.y0 == r.value);
  }
  // Ridges: the measured DRAM roof against each main compute roof (measured FP32, measured BF16,
  // datasheet FP64 and FP16/BF16 tensor, which have no measured twin).
  CHECK(g.ridges.size() == 4);
  for (auto& rd : g.ridges) {
    CHECK(c.roofs[rd.memory_roof].measured);
    CHECK(c.roofs[rd.memory_roof].metric == metric::dram);
    CHECK(rd.intensity == doctest::Approx(c.roofs[rd.compute_roof].value / 4410));
  }
  bool fp32_ridge = false;
  for (auto& rd : g.ridges) fp32_ridge |= rd.intensity == doctest::Approx(64500 / 4410.0);
  CHECK(fp32_ridge);
  REQUIRE(g.above_roof.size() == c.points.size());
  CHECK(!g.above_roof[0]);
  CHECK(g.above_roof.back()); // served from cache, or a wrong [cost]
  // The datasheet DRAM roof is not the main one; the datasheet FP64 roof is.
  for (size_t i = 0; i < c.roofs.size(); ++i) {
    if (c.roofs[i].metric == metric::dram) CHECK(g.main_roof[i] == c.roofs[i].measured);
    if (c.roofs[i].metric == metric::fp64) CHECK(g.main_roof[i]);
  }
}

TEST_CASE("the SVG is well-formed XML with the roofs, ridges and points") {
  RooflineChart c = h200_chart();
  std::string svg = chart_svg(c);
  CHECK(xml_problem(svg) == "");
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  // Measured roofs solid, datasheet roofs dashed.
  CHECK(count(svg, "class=\"roof measured memory\"") == 3);
  CHECK(count(svg, "class=\"roof measured compute\"") == 2);
  CHECK(count(svg, "class=\"roof datasheet memory\"") == 2);
  CHECK(count(svg, "class=\"roof datasheet compute\"") == 3);
  std::regex datasheet_line(R"(<line [^>]*stroke-dasharray="7 5" class="roof datasheet)");
  std::regex measured_dashed(R"(<line [^>]*stroke-dasharray[^>]*class="roof measured)");
  CHECK(std::distance(std::sregex_iterator(svg.begin(), svg.end(), datasheet_line),
                      std::sregex_iterator()) == 5);
  CHECK(!std::regex_search(svg, measured_dashed));
  // Points with a position, each labelled; the one without none.
  CHECK(count(svg, "class=\"point solution\"") == 2);
  CHECK(count(svg, "class=\"point starter\"") == 1);
  CHECK(count(svg, "class=\"point attempt\"") == 0);
  CHECK(svg.find(">01 solution, 92%</text>") != std::string::npos);
  CHECK(svg.find(">01 starter (wrong)</text>") != std::string::npos);
  CHECK(svg.find("03 solution &lt;&amp;&gt;") != std::string::npos); // escaped
  CHECK(svg.find("no point") == std::string::npos);
  CHECK(count(svg, "class=\"ridge\"") == 4);
  CHECK(svg.find(">ridge 14.6 FLOP/B</text>") != std::string::npos); // 64500 / 4410
  CHECK(svg.find("DRAM 4.41 TB/s") != std::string::npos);
  CHECK(svg.find("NVIDIA H200: roofline") != std::string::npos);
  // Axes: labelled decades.
  CHECK(svg.find(">0.01</text>") != std::string::npos);
  CHECK(svg.find(">1T</text>") != std::string::npos);

  RooflineChart empty;
  CHECK(xml_problem(chart_svg(empty)) == "");
}

TEST_CASE("the points sit where the axes say") {
  RooflineChart c = h200_chart();
  ChartGeometry g = chart_geometry(c);
  auto shapes = chart_shapes(c, 1000, 640);
  double left = 1e9, right = -1e9;
  for (auto& s : shapes)
    if (s.role == "frame") left = s.x0, right = s.x1;
  REQUIRE(right > left);
  // The first solution point: its x is log-proportional across the frame.
  for (auto& s : shapes)
    if (s.type == Shape::Type::circle && s.title.rfind("01 solution", 0) == 0) {
      double t =
          (std::log10(1.0 / 12) - std::log10(g.x_lo)) / (std::log10(g.x_hi) - std::log10(g.x_lo));
      CHECK(s.x0 == doctest::Approx(left + t * (right - left)));
    }
}

TEST_CASE("the PNG raster shows the points in their colours") {
  RooflineChart c = h200_chart();
  Image img = render_chart(c, 800, 500);
  REQUIRE(img.width == 800);
  REQUIRE(img.height == 500);
  REQUIRE(img.rgb.size() == size_t(800) * 500 * 3);
  auto px = [&](double x, double y) {
    size_t k = (size_t(y) * 800 + size_t(x)) * 3;
    return Rgb{img.rgb[k], img.rgb[k + 1], img.rgb[k + 2]};
  };
  CHECK(px(1, 1).r == 255); // white background
  int solutions = 0;
  for (auto& s : chart_shapes(c, 800, 500))
    if (s.type == Shape::Type::circle && s.role == "point solution") {
      Rgb p = px(s.x0, s.y0);
      CHECK(p.g > p.r + 40); // green
      ++solutions;
    }
  CHECK(solutions == 2);
  // Text is drawn where a font was found (DejaVu Sans here, or none).
  CHECK(img.has_text == (chart_png_supported() && !chart_font_path().empty()));

  char tmpl[] = "/tmp/warpbook-chart-XXXXXX";
  fs::path dir = mkdtemp(tmpl);
  std::string why;
  fs::path png = dir / "r.png";
  if (write_chart_png(c, png.string(), why)) {
    std::ifstream in(png, std::ios::binary);
    char sig[8] = {};
    in.read(sig, 8);
    CHECK(std::string(sig + 1, 3) == "PNG");
  } else {
    CHECK(!chart_png_supported());
    CHECK(why.find("PNG") != std::string::npos);
  }
  CHECK(!write_chart_png(c, (dir / "no" / "such" / "r.png").string(), why));
  fs::remove_all(dir);
}
