// Lessons' Markdown: what md4c's callbacks become, how spans flow into a width, and that links
// and quizzes work under a headless ImGui.
#include "gui/markdown.hpp"
#include "headless.hpp"

#include <algorithm>
#include <cmath>
#include <doctest/doctest.h>

using namespace wb::gui;

TEST_CASE("blocks and spans from md4c") {
  MdDoc d = parse_markdown("# Title\n\nSome *em* and **strong** and `code` and "
                           "[a puzzle](puzzle:01-vector-add).\n\n"
                           "- one\n- two\n  1. nested\n\n"
                           "```cuda\nint x;\n```\n\n"
                           "| a | b |\n|---|--:|\n| 1 | 2 |\n\n"
                           "> quoted\n\n---\n\n![a grid](assets/lessons/grid.png)\n");
  REQUIRE(d.blocks.size() >= 8);
  CHECK(d.blocks[0].kind == MdBlock::Kind::heading);
  CHECK(d.blocks[0].level == 1);
  const MdBlock& p = d.blocks[1];
  CHECK(p.kind == MdBlock::Kind::paragraph);
  bool em = false, strong = false, code = false, link = false;
  for (auto& s : p.spans) {
    em |= s.text == "em" && (s.style & md_italic);
    strong |= s.text == "strong" && (s.style & md_bold);
    code |= s.text == "code" && (s.style & md_code);
    link |= s.link >= 0 && s.text == "a puzzle";
  }
  CHECK(em);
  CHECK(strong);
  CHECK(code);
  CHECK(link);
  REQUIRE(d.links.size() == 1);
  CHECK(d.links[0] == "puzzle:01-vector-add");
  CHECK(d.blocks[2].bullet == "\xE2\x80\xA2");
  CHECK(d.blocks[2].indent == 1);
  CHECK(d.blocks[4].bullet == "1.");
  CHECK(d.blocks[4].indent == 2);
  const MdBlock* codeb = nullptr;
  const MdBlock* table = nullptr;
  const MdBlock* quote = nullptr;
  for (auto& b : d.blocks) {
    if (b.kind == MdBlock::Kind::code) codeb = &b;
    if (b.kind == MdBlock::Kind::table) table = &b;
    if (b.quote > 0) quote = &b;
  }
  REQUIRE(codeb);
  CHECK(codeb->lang == "cuda");
  CHECK(codeb->code == "int x;");
  REQUIRE(table);
  CHECK(table->table.rows.size() == 2);
  CHECK(table->table.head_rows == 1);
  CHECK(table->table.align == std::vector<int>{0, 3});
  REQUIRE(quote);
  REQUIRE(d.images.size() == 1);
  CHECK(d.images[0].src == "assets/lessons/grid.png");
  CHECK(d.images[0].alt == "a grid");
}

TEST_CASE("quiz blocks become quizzes; malformed ones stay code with a warning") {
  MdDoc d = parse_markdown(
      "```quiz\nquestion: Which?\n- [x] this\n- [ ] that -- no\nwhy: because\n```\n\n"
      "```quiz\nquestion: broken\n- [x] only\n```\n");
  REQUIRE(d.quizzes.size() == 1);
  CHECK(d.blocks[0].kind == MdBlock::Kind::quiz);
  CHECK(d.quizzes[0].choices[1].explanation == "no");
  CHECK(d.blocks[1].kind == MdBlock::Kind::code);
  CHECK(d.blocks[1].warning.find("malformed") != std::string::npos);
}

TEST_CASE("spans flow into the width and wrap") {
  wb::test::Headless ui;
  MdFonts f = MdFonts::all(ui.font());
  f.h1 = ui.big;
  MdDoc d = parse_markdown(
      "The quick brown fox jumps over the lazy dog, and `then_a_very_long_identifier` "
      "runs off with a [link](https://example.org) to somewhere.\n");
  const auto& spans = d.blocks[0].spans;
  MdLayout wide = layout_spans(spans, f, f.regular, 2000);
  MdLayout narrow = layout_spans(spans, f, f.regular, 150);
  CHECK(narrow.size.y > 3 * wide.size.y);
  float lh = std::floor(f.regular->FontSize * 1.35f);
  CHECK(wide.size.y == doctest::Approx(lh));
  for (auto& r : narrow.runs) {
    if (r.kind != MdRun::Kind::text) continue;
    const std::string& t = spans[size_t(r.span)].text;
    // A run's text without its trailing spaces fits in the width.
    std::string s = t.substr(r.begin, r.end - r.begin);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    float w = r.font->CalcTextSizeA(r.font->FontSize, FLT_MAX, 0, s.c_str()).x;
    CHECK(r.a.x + w <= 150.5f);
  }
  int underlines = 0;
  for (auto& r : narrow.runs) underlines += r.kind == MdRun::Kind::underline && r.link == 0;
  CHECK(underlines >= 1);
  // A heading lays out in its own, bigger font.
  MdDoc h = parse_markdown("# A heading\n");
  MdLayout hl = layout_spans(h.blocks[0].spans, f, f.h1, 500);
  CHECK(hl.size.y > wide.size.y);
  // A word longer than the line is broken, not left sticking out.
  MdDoc longw =
      parse_markdown("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
  MdLayout ll = layout_spans(longw.blocks[0].spans, f, f.regular, 100);
  CHECK(ll.size.x <= 100.5f);
  CHECK(ll.size.y > 2 * lh);
}

TEST_CASE("a picture is never shrunk below its PNG: one wider than the column scrolls sideways") {
  wb::test::Headless ui;
  MdFonts f = MdFonts::all(ui.font());
  MdDoc d = parse_markdown("![a chart](assets/lessons/chart.png)\n");
  int png_w = 1200, png_h = 400;
  auto image = [&](int) { return MdImage{nullptr, png_w, png_h, false}; };
  // Shown at its own size times the body text's share of the size the PNGs are drawn for.
  const float k = f.regular->FontSize / kPictureBodyPx;
  for (float column : {300.f, 437.f, 2000.f}) {
    CAPTURE(column);
    MdLayout L = layout_spans(d.blocks[0].spans, f, f.regular, column, 0, image);
    const MdRun* pic = nullptr;
    for (auto& r : L.runs)
      if (r.kind == MdRun::Kind::image) pic = &r;
    REQUIRE(pic);
    CHECK(pic->b.x - pic->a.x == doctest::Approx(png_w * k));
    CHECK(pic->b.y - pic->a.y == doctest::Approx(png_h * k));
    CHECK(pic->view == doctest::Approx(std::min(png_w * k, column)));
    CHECK(L.size.x <= column + 0.5f); // the strip keeps to the column
    if (png_w * k > column) CHECK(L.size.y > png_h * k + ImGui::GetStyle().ScrollbarSize);
  }
}

TEST_CASE("a drawn lesson follows its links when clicked") {
  wb::test::Headless ui;
  MdDoc d = parse_markdown("## Next\n\nTry [vector add](puzzle:01-vector-add) now.\n\n"
                           "```quiz\nquestion: Sure?\n- [x] yes\n- [ ] no\nwhy: yes\n```\n");
  MdView v;
  v.fonts = MdFonts::all(ui.font());
  std::string followed;
  v.on_link = [&](const std::string& u) { followed = u; };
  auto body = [&] { draw_markdown(d, v, 600); };
  ui.frame(body);
  REQUIRE(v.link_rects.size() >= 1);
  ImVec4 r = v.link_rects[0];
  ui.click(ImVec2((r.x + r.z) / 2, (r.y + r.w) / 2), body);
  CHECK(followed == "puzzle:01-vector-add");
  CHECK(v.quizzes.size() == 1);
  CHECK(v.total_height > 0);
}
