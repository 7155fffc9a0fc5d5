// The window's fonts have a glyph for every character the lessons and puzzles write: none of them
// renders as "?" (lesson 0010's "QKᵀ" once did).
#include "gui/app.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <imgui.h>

using namespace wb;
using namespace wb::gui;

TEST_CASE("every character in lessons/ and puzzles/ has a glyph in the window's fonts") {
  ImGui::CreateContext();
  {
    App app;
    app.catalog.root = WARPBOOK_SOURCE_ROOT;
    load_fonts(app, 1);
    REQUIRE_MESSAGE(app.fonts.packaged, "DejaVu not found (Debian: fonts-dejavu-core)");
    unsigned char* px;
    int w, h;
    ImGui::GetIO().Fonts->GetTexDataAsRGBA32(&px, &w, &h);

    std::set<unsigned> chars = catalog_characters(app.catalog.root);
    REQUIRE(chars.size() > 20);
    CHECK(chars.count(0x1D40)); // ᵀ, in lesson 0010
    const Fonts& f = app.fonts;
    for (auto [name, font] : {std::pair{"text", f.ui},
                              {"bold", f.bold},
                              {"italic", f.italic},
                              {"code", f.mono},
                              {"heading", f.h1},
                              {"small", f.small}}) {
      std::string missing;
      for (unsigned c : chars)
        if (c > 0xFFFF || !font->FindGlyphNoFallback(ImWchar(c)))
          missing += fmt::format(" U+{:04X}", c);
      INFO("the ", name, " font lacks", missing);
      CHECK(missing.empty());
    }
    // The check can fail: a character the fonts were not given has no glyph.
    CHECK(f.ui->FindGlyphNoFallback(ImWchar(0x4E2D)) == nullptr);
  }
  ImGui::DestroyContext();
}
