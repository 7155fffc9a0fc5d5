// Markdown for lessons and puzzle statements: md4c parses once into a small document of blocks
// and styled spans (parse_markdown); a layout pass flows the spans into positioned runs for a
// width (layout_spans, cached per block); drawing puts the runs on the draw list. Quizzes, tables
// and buttons are ImGui widgets. docs/lessons.md is the contract for what lessons may contain.
#pragma once
#include "core/quiz.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

namespace wb::gui {

enum MdStyle : uint8_t { md_bold = 1, md_italic = 2, md_code = 4, md_strike = 8 };

struct MdSpan {
  std::string text;
  uint8_t style = 0;
  int link = -1;           // index into MdDoc::links
  int image = -1;          // index into MdDoc::images; `text` is the alt text
  bool hard_break = false; // a line break before this span's text
};

struct MdImageRef {
  std::string src, alt;
};

struct MdTable {
  std::vector<std::vector<std::vector<MdSpan>>> rows; // rows of cells of spans
  int head_rows = 0;
  std::vector<int> align; // 0 default, 1 left, 2 centre, 3 right, per column
};

struct MdBlock {
  enum class Kind : uint8_t { paragraph, heading, code, quiz, rule, table };
  Kind kind = Kind::paragraph;
  int level = 0;      // heading 1..6
  int indent = 0;     // list nesting
  int quote = 0;      // block-quote nesting
  std::string bullet; // "•" or "3." on a list item's first block
  std::vector<MdSpan> spans;
  std::string code, lang; // code blocks
  int quiz = -1;          // index into MdDoc::quizzes
  std::string warning;    // a malformed quiz, shown above it as code
  MdTable table;
};

struct MdDoc {
  std::vector<MdBlock> blocks;
  std::vector<std::string> links;
  std::vector<MdImageRef> images;
  std::vector<Quiz> quizzes;
};

MdDoc parse_markdown(std::string_view text);
// Inline Markdown only (a quiz's question or choice): the spans of its first paragraph.
std::vector<MdSpan> parse_inline(std::string_view text);

// Fonts by role; any may be the same font (the tests use ImGui's default for all).
struct MdFonts {
  ImFont* regular = nullptr;
  ImFont* bold = nullptr;
  ImFont* italic = nullptr;
  ImFont* mono = nullptr;
  ImFont* h1 = nullptr;
  ImFont* h2 = nullptr;
  ImFont* h3 = nullptr;
  static MdFonts all(ImFont* f) { return {f, f, f, f, f, f, f}; }
};

// One positioned piece of text (or a box) relative to the block's top-left.
struct MdRun {
  enum class Kind : uint8_t { text, code_bg, underline, image, rule, box } kind = Kind::text;
  ImVec2 a, b; // text: a = position; boxes: a..b
  ImFont* font = nullptr;
  ImU32 color = 0;
  int span = -1;               // text: which span
  uint32_t begin = 0, end = 0; // text: byte range in the span's text
  int link = -1;
  int image = -1;
  float view = 0; // image: the width shown; less than b.x - a.x when it scrolls sideways
};

struct MdLayout {
  std::vector<MdRun> runs;
  ImVec2 size; // width used, height
};

// The body text size, in pixels, the pictures are drawn for: a PNG is shown at its own size when
// the body text is this size (settings.hpp's default), and scaled with the body text otherwise.
inline constexpr float kPictureBodyPx = 15;

struct MdImage {
  ImTextureID texture = nullptr;
  int width = 0, height = 0;
  bool failed = false; // show the alt text
};

// Flows spans into `width` pixels starting at x = `indent`. `base` is the paragraph font (a
// heading's, for headings). Long words that do not fit on a line of their own are broken.
MdLayout layout_spans(const std::vector<MdSpan>& spans, const MdFonts& f, ImFont* base, float width,
                      float indent = 0, const std::function<MdImage(int image)>& image_size = {});

// Per-document view state: layout caches and the learner's quiz answers.
struct MdQuizState {
  std::vector<bool> chosen;
  bool checked = false;
};

struct MdView {
  MdFonts fonts;
  std::function<void(const std::string& url)> on_link;
  std::function<MdImage(const std::string& src)> image; // may be empty: images show their alt text
  std::function<void(int quiz, const std::vector<bool>& chosen, bool right)> on_quiz;
  // Called after each quiz widget with a name ("quiz1-choice2", "quiz1-check"), so scripts can
  // click them.
  std::function<void(const std::string& name)> mark;
  std::vector<MdQuizState> quizzes;
  // Cache: layouts by block for `cached_width`.
  float cached_width = -1;
  const MdDoc* cached_doc = nullptr;
  std::vector<MdLayout> layouts;
  // Where each block and link landed in the last frame (screen space), for tests and scripts.
  std::vector<ImVec4> link_rects;
  std::vector<int> link_ids;
  float total_height = 0;
};

// Draws the document at the cursor, `width` wide (0: the available width).
void draw_markdown(const MdDoc& doc, MdView& view, float width = 0);

} // namespace wb::gui
