// Fonts: DejaVu (Debian's fonts-dejavu-core) at the sizes the views use, with glyphs for every
// character the catalog's lessons and puzzles write (QKᵀ, ≤, µs, box drawing), so none of them
// renders as "?". ImGui 1.86 bakes glyphs into an atlas up front: the ranges are decided here.
#include "app.hpp"

#include <cmath>
#include <fstream>
#include <imgui_internal.h>
#include <unistd.h>

namespace wb::gui {

namespace {

// Packaged fonts, found at run time: Debian's fonts-dejavu-core and the usual other places.
std::string find_font(const char* file) {
  std::vector<std::string> dirs;
  if (const char* d = std::getenv("WARPBOOK_FONT_DIR"); d && *d) dirs.push_back(d);
  dirs.insert(dirs.end(), {"/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/TTF",
                           "/usr/share/fonts/dejavu", "/usr/share/fonts/dejavu-sans-fonts",
                           "/usr/share/fonts/dejavu-sans-mono-fonts", "/usr/local/share/fonts",
                           "/usr/share/fonts/truetype", "/opt/homebrew/share/fonts"});
  if (const char* h = std::getenv("HOME"); h && *h)
    dirs.push_back(std::string(h) + "/.local/share/fonts");
  for (auto& d : dirs) {
    std::string p = d + "/" + file;
    if (access(p.c_str(), R_OK) == 0) return p;
  }
  return {};
}

// Font files stay in memory for the atlas; each is read once even when used at several sizes.
std::vector<std::vector<char>>& font_blobs() {
  static std::vector<std::vector<char>> b;
  return b;
}

ImFont* add_font(const std::string& path, float px, const ImWchar* ranges) {
  if (path.empty()) return nullptr;
  static std::map<std::string, size_t> loaded;
  auto it = loaded.find(path);
  if (it == loaded.end()) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.empty()) return nullptr;
    font_blobs().push_back(std::move(data));
    it = loaded.emplace(path, font_blobs().size() - 1).first;
  }
  auto& blob = font_blobs()[it->second];
  ImFontConfig cfg;
  cfg.FontDataOwnedByAtlas = false;
  cfg.OversampleH = 2;
  cfg.OversampleV = 1;
  cfg.PixelSnapH = true;
  return ImGui::GetIO().Fonts->AddFontFromMemoryTTF(blob.data(), int(blob.size()), px, &cfg,
                                                    ranges);
}

void add_utf8(ImFontGlyphRangesBuilder& b, const std::string& text) {
  b.AddText(text.data(), text.data() + text.size());
}

} // namespace

std::set<unsigned> catalog_characters(const fs::path& root) {
  std::set<unsigned> out;
  for (const char* dir : {"lessons", "puzzles"}) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root / dir, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (!it->is_regular_file()) continue;
      std::ifstream in(it->path(), std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const char* p = text.data();
      const char* e = p + text.size();
      while (p < e) {
        unsigned c = 0;
        int n = ImTextCharFromUtf8(&c, p, e);
        if (n <= 0) break;
        p += n;
        if (c >= 0x80) out.insert(c);
      }
    }
  }
  return out;
}

const ImWchar* text_glyph_ranges(const fs::path& catalog_root) {
  // Latin, Greek, punctuation, super- and subscripts, arrows, maths, boxes, shapes and ticks: what
  // lessons write and the window draws, then every other character the catalog holds.
  static const ImWchar base[] = {0x0020, 0x024F, 0x0300, 0x036F, 0x0370, 0x03FF, 0x1D00,
                                 0x1DBF, 0x2000, 0x206F, 0x2070, 0x209F, 0x2100, 0x218F,
                                 0x2190, 0x23FF, 0x2500, 0x25FF, 0x2600, 0x26FF, 0x2700,
                                 0x27BF, 0x2C60, 0x2C7F, 0};
  static ImVector<ImWchar> ranges;
  ImFontGlyphRangesBuilder b;
  b.AddRanges(base);
  for (unsigned c : catalog_characters(catalog_root))
    if (c <= 0xFFFF) b.AddChar(ImWchar(c)); // ImGui 1.86 is built with 16-bit ImWchar
  add_utf8(b, "…µ×·≤≥≈→");
  ranges.clear();
  b.BuildRanges(&ranges);
  return ranges.Data;
}

void load_fonts(App& app, float scale) {
  ImGuiIO& io = ImGui::GetIO();
  const ImWchar* ranges = text_glyph_ranges(app.catalog.root);
  float px = std::round(app.settings.font_size * scale);
  std::string sans = find_font("DejaVuSans.ttf"), bold = find_font("DejaVuSans-Bold.ttf"),
              italic = find_font("DejaVuSans-Oblique.ttf"), mono = find_font("DejaVuSansMono.ttf");
  Fonts& f = app.fonts;
  f.sans_path = sans;
  f.mono_path = mono;
  f.ui = add_font(sans, px, ranges);
  if (!f.ui) {
    // No packaged font: ImGui's own, scaled, for every role.
    ImFontConfig cfg;
    cfg.SizePixels = std::round(13 * scale);
    f.ui = io.Fonts->AddFontDefault(&cfg);
    f.bold = f.italic = f.mono = f.small = f.h1 = f.h2 = f.h3 = f.ui;
    f.packaged = false;
    return;
  }
  f.packaged = true;
  f.bold = add_font(bold, px, ranges);
  f.italic = add_font(italic, px, ranges);
  f.mono = add_font(mono, px, ranges);
  f.small = add_font(sans, std::round(px * 0.87f), ranges);
  f.h1 = add_font(bold, std::round(px * 1.6f), ranges);
  f.h2 = add_font(bold, std::round(px * 1.3f), ranges);
  f.h3 = add_font(bold, std::round(px * 1.12f), ranges);
  for (ImFont** x : {&f.bold, &f.italic, &f.mono, &f.small, &f.h1, &f.h2, &f.h3})
    if (!*x) *x = f.ui;
  io.FontDefault = f.ui;
}

} // namespace wb::gui
