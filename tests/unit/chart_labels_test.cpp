// The roofline chart's text never collides: for the H200's and the H100's roofs (datasheet alone,
// and measured beside the datasheet) at the window sizes Warpbook supports and the SVG's default,
// no two text boxes of chart_shapes() intersect and every one lies inside the image; every label
// that finds no spot on the plot is in the legend instead. The boxes come from the same
// conservative estimate the layout uses, and that estimate is held to the PNG's font here.
#include "core/chart.hpp"
#include "core/chart_labels.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace wb;

namespace {

RooflineChart chart_for(const std::string& gpu, bool measured) {
  const GpuProfile* prof = find_profile(gpu);
  REQUIRE(prof);
  std::vector<MeasuredCeiling> m;
  if (measured && gpu == "h200")
    m = {{metric::dram, 4410, 4380, "GB/s"},          {metric::l2, 11000, 10800, "GB/s"},
         {metric::shared, 30000, 29500, "GB/s"},      {metric::fp32, 64500, 64000, "GFLOP/s"},
         {metric::fp64, 33000, 32800, "GFLOP/s"},     {metric::fp16_tc, 805000, 790000, "GFLOP/s"},
         {metric::bf16_tc, 800000, 790000, "GFLOP/s"}};
  else if (measured)
    m = {{metric::dram, 3010, 2990, "GB/s"},          {metric::l2, 9000, 8800, "GB/s"},
         {metric::shared, 28000, 27500, "GB/s"},      {metric::fp32, 60000, 59000, "GFLOP/s"},
         {metric::fp64, 25500, 25300, "GFLOP/s"},     {metric::fp16_tc, 720000, 700000, "GFLOP/s"},
         {metric::bf16_tc, 715000, 700000, "GFLOP/s"}};
  RooflineChart c;
  c.title = prof->name + ": roofline";
  c.subtitle = measured ? "measured 2026-11-21 (solid), datasheet (dashed)" : "datasheet (dashed)";
  c.roofs = device_roofs(m, prof);
  // Points where the puzzles put them: two pairs close together, one above the roof.
  c.points = {{"01 solution, 92%", 1.0 / 12, 340, "solution"},
              {"01 starter (wrong)", 1.0 / 12, 20, "starter"},
              {"02 solution", 0.25, 1000, "solution"},
              {"03 solution", 0.625, 2500, "predicted"},
              {"03 starter", 0.6, 2300, "predicted"},
              {"17 solution", 40, 45000, "solution"},
              {"cached", 0.1, 5000, "attempt"}};
  return c;
}

TextBox box_of(const Shape& s) {
  TextExtent e = estimate_text(s.text, s.size, s.bold);
  double left = s.anchor < 0 ? s.x0 : s.anchor == 0 ? s.x0 - e.w / 2 : s.x0 - e.w;
  double top = s.y0 - estimate_baseline(s.size);
  return {left, top, left + e.w, top + e.h};
}

std::string box_text(const Shape& s) {
  TextBox b = box_of(s);
  return fmt::format("'{}' ({}) at [{:.1f}, {:.1f}]-[{:.1f}, {:.1f}]", s.text, s.role, b.x0, b.y0,
                     b.x1, b.y1);
}

const int kSizes[][2] = {{1280, 800}, {1600, 1000}, {1920, 1080}, {2560, 1440}, {1000, 640}};

} // namespace

TEST_CASE("roofline text: no two boxes intersect, all inside the image, none dropped") {
  for (const char* gpu : {"h200", "h100-sxm"})
    for (bool measured : {false, true})
      for (auto& wh : kSizes) {
        const int W = wh[0], H = wh[1];
        CAPTURE(std::string(gpu));
        CAPTURE(measured);
        CAPTURE(W);
        CAPTURE(H);
        RooflineChart c = chart_for(gpu, measured);
        std::vector<Shape> texts;
        for (auto& s : chart_shapes(c, W, H))
          if (s.type == Shape::Type::text) texts.push_back(s);
        REQUIRE(texts.size() > 20);
        const TextBox image{0, 0, double(W), double(H)};
        for (size_t i = 0; i < texts.size(); ++i) {
          INFO(box_text(texts[i]));
          CHECK(box_of(texts[i]).within(image));
          for (size_t j = i + 1; j < texts.size(); ++j) {
            INFO(box_text(texts[j]));
            CHECK_FALSE(box_of(texts[i]).overlaps(box_of(texts[j])));
          }
        }
        // Each main roof's, ridge's and point's label is on the chart or in the legend.
        ChartGeometry g = chart_geometry(c);
        auto shown = [&](const std::string& t) {
          for (auto& s : texts)
            if (s.text.rfind(t, 0) == 0) return true;
          return false;
        };
        for (size_t i = 0; i < c.roofs.size(); ++i)
          if (g.main_roof[i]) CHECK_MESSAGE(shown(c.roofs[i].short_label()), c.roofs[i].label());
        for (auto& rd : g.ridges) CHECK(shown(ridge_label_text(rd)));
        for (auto& p : c.points) CHECK_MESSAGE(shown(p.label), p.label);
      }
}

TEST_CASE("the text estimate holds what the PNG's font draws") {
  MeasureText font = chart_font_measure();
  if (!font) {
    MESSAGE("no font for the PNG here: nothing to hold the estimate to");
    return;
  }
  for (double size : {9.5, 10.0, 11.0, 12.0, 17.0}) {
    for (char ch = ' '; ch <= '~'; ++ch) {
      std::string s(1, ch);
      CAPTURE(s);
      CHECK(estimate_text(s, size).w >= font(s, size).w);
    }
    for (const char* s :
         {"FP16/BF16 tensor 989 TFLOP/s", "ridge 14.6 FLOP/B", "shared memory 33 TB/s",
          "arithmetic intensity (FLOP per byte of DRAM traffic)", "100T", "0.001"}) {
      CAPTURE(s);
      CHECK(estimate_text(s, size).w >= font(s, size).w);
      CHECK(estimate_text(s, size).h >= font(s, size).h);
    }
  }
}

TEST_CASE("fit_text cuts a label short to a width") {
  auto m = [](const std::string& t, double size) { return estimate_text(t, size); };
  CHECK(fit_text("DRAM 4.8 TB/s", 11, 1000, m) == "DRAM 4.8 TB/s");
  std::string cut = fit_text("shared memory 33 TB/s", 11, 60, m);
  CHECK(cut.size() < std::string("shared memory 33 TB/s").size());
  CHECK(cut.substr(cut.size() - 3) == "...");
  CHECK(estimate_text(cut, 11).w <= 60);
  CHECK(fit_text("anything", 11, 5, m).empty());
}

TEST_CASE("the window's pane layout: the plot shrinks for the legend and nothing collides") {
  auto m = [](const std::string& t, double size) { return estimate_text(t, size); };
  for (const char* gpu : {"h200", "h100-sxm"})
    for (bool measured : {false, true})
      // The regions the window's pane gives the chart at 1280x800, 1600x1000 and 2560x1440.
      for (auto [w, h] : {std::pair{282.0, 265.0}, {359.0, 350.0}, {588.0, 530.0}}) {
        CAPTURE(std::string(gpu));
        CAPTURE(measured);
        CAPTURE(w);
        // The window labels the learner's kernel and the reference solution only.
        RooflineChart c = chart_for(gpu, measured);
        c.points.resize(2);
        ChartGeometry g = chart_geometry(c);
        const TextBox region{10, 40, 10 + w, 40 + h};
        ChartPane p = layout_chart_pane(c, g, region, m, 13);
        CHECK(p.frame.rect.within(region));
        // Every label the plot had no room for is in the legend. The estimate runs wider than
        // the window's font: the smallest pane, in that font, is for the gui tests.
        CHECK(int(p.legend.size()) + p.legend_left_out == int(p.labels.legend.size()));
        if (w > 300) CHECK(p.legend_left_out == 0);
        std::vector<ChartLabel> all = p.labels.placed;
        all.push_back(p.axis_title);
        for (auto& e : p.legend) {
          all.push_back(e.label);
          CHECK_FALSE(e.swatch.overlaps(e.label.box));
          CHECK(e.swatch.y0 >= p.axis_title.box.y1);
        }
        for (size_t i = 0; i < all.size(); ++i) {
          CAPTURE(all[i].text);
          CHECK(all[i].box.within(region));
          for (size_t j = i + 1; j < all.size(); ++j) {
            CAPTURE(all[j].text);
            CHECK_FALSE(all[i].box.overlaps(all[j].box));
          }
        }
        for (auto& l : p.labels.placed)
          if (l.kind != ChartLabel::Kind::tick_x && l.kind != ChartLabel::Kind::tick_y)
            CHECK(l.box.within(p.frame.rect));
      }
}
