#include "markdown.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <imgui_internal.h>
#include <md4c.h>

namespace wb::gui {

// ---- parsing
// --------------------------------------------------------------------------------------

namespace {

std::string attr(const MD_ATTRIBUTE& a) {
  return a.text ? std::string(a.text, a.size) : std::string();
}

std::string entity(std::string_view e) {
  if (e == "&amp;") return "&";
  if (e == "&lt;") return "<";
  if (e == "&gt;") return ">";
  if (e == "&quot;") return "\"";
  if (e == "&apos;" || e == "&#39;") return "'";
  if (e == "&nbsp;") return "\xC2\xA0";
  if (e.size() > 3 && e[1] == '#') {
    unsigned cp = e[2] == 'x' || e[2] == 'X'
                      ? unsigned(std::strtoul(std::string(e.substr(3)).c_str(), nullptr, 16))
                      : unsigned(std::strtoul(std::string(e.substr(2)).c_str(), nullptr, 10));
    char buf[5] = {};
    return ImTextCharToUtf8(buf, cp);
  }
  return std::string(e);
}

struct Builder {
  MdDoc doc;
  struct List {
    bool ordered;
    unsigned next;
  };
  std::vector<List> lists;
  int quote = 0;
  std::string pending_bullet; // set by LI, taken by the item's first block
  MdBlock* cur = nullptr;     // the block receiving text
  std::vector<MdSpan>* target = nullptr;
  // Inline style stack.
  uint8_t style = 0;
  std::vector<int> link_stack;
  int image = -1; // inside ![alt](src): text goes to the alt
  bool br = false;
  bool in_code_block = false;
  bool in_table = false;

  MdBlock& open(MdBlock::Kind k) {
    doc.blocks.push_back({});
    MdBlock& b = doc.blocks.back();
    b.kind = k;
    b.indent = int(lists.size());
    b.quote = quote;
    b.bullet = std::move(pending_bullet);
    pending_bullet.clear();
    cur = &b;
    target = &b.spans;
    return b;
  }

  void text(MD_TEXTTYPE type, std::string_view t) {
    if (in_code_block) {
      if (cur) cur->code.append(t);
      return;
    }
    if (image >= 0) {
      doc.images[size_t(image)].alt.append(t);
      return;
    }
    // Text directly in a tight list item (no paragraph block) starts the item's block.
    if (!target) open(MdBlock::Kind::paragraph);
    std::string s;
    switch (type) {
    case MD_TEXT_BR:
      br = true;
      return;
    case MD_TEXT_SOFTBR:
      s = " ";
      break;
    case MD_TEXT_ENTITY:
      s = entity(t);
      break;
    case MD_TEXT_NULLCHAR:
      s = "\xEF\xBF\xBD";
      break;
    case MD_TEXT_HTML:
      return; // no raw HTML in lessons
    default:
      s = std::string(t);
    }
    int link = link_stack.empty() ? -1 : link_stack.back();
    // Merge with the previous span when the style is the same.
    if (!target->empty() && !br && target->back().style == style && target->back().link == link &&
        target->back().image < 0) {
      target->back().text += s;
      return;
    }
    MdSpan sp;
    sp.text = std::move(s);
    sp.style = style;
    sp.link = link;
    sp.hard_break = br;
    br = false;
    target->push_back(std::move(sp));
  }
};

int enter_block(MD_BLOCKTYPE type, void* detail, void* user) {
  Builder& b = *static_cast<Builder*>(user);
  switch (type) {
  case MD_BLOCK_QUOTE:
    ++b.quote;
    break;
  case MD_BLOCK_UL:
    b.lists.push_back({false, 0});
    b.target = nullptr;
    break;
  case MD_BLOCK_OL:
    b.lists.push_back({true, static_cast<MD_BLOCK_OL_DETAIL*>(detail)->start});
    b.target = nullptr;
    break;
  case MD_BLOCK_LI:
    if (!b.lists.empty()) {
      auto& l = b.lists.back();
      b.pending_bullet = l.ordered ? fmt::format("{}.", l.next++) : "\xE2\x80\xA2"; // •
    }
    b.target = nullptr;
    break;
  case MD_BLOCK_HR:
    b.open(MdBlock::Kind::rule);
    b.target = nullptr;
    break;
  case MD_BLOCK_H:
    b.open(MdBlock::Kind::heading).level = int(static_cast<MD_BLOCK_H_DETAIL*>(detail)->level);
    break;
  case MD_BLOCK_CODE: {
    auto* d = static_cast<MD_BLOCK_CODE_DETAIL*>(detail);
    MdBlock& c = b.open(MdBlock::Kind::code);
    c.lang = attr(d->lang);
    b.in_code_block = true;
    break;
  }
  case MD_BLOCK_P:
    if (!b.in_table) b.open(MdBlock::Kind::paragraph);
    break;
  case MD_BLOCK_TABLE:
    b.open(MdBlock::Kind::table);
    b.in_table = true;
    b.target = nullptr;
    break;
  case MD_BLOCK_TR:
    if (b.cur && b.cur->kind == MdBlock::Kind::table) b.cur->table.rows.emplace_back();
    break;
  case MD_BLOCK_TH:
  case MD_BLOCK_TD:
    if (b.cur && b.cur->kind == MdBlock::Kind::table && !b.cur->table.rows.empty()) {
      auto& t = b.cur->table;
      auto& row = t.rows.back();
      row.emplace_back();
      b.target = &row.back();
      if (type == MD_BLOCK_TH) t.head_rows = int(t.rows.size());
      if (t.rows.size() == 1) {
        int a = static_cast<MD_BLOCK_TD_DETAIL*>(detail)->align;
        t.align.push_back(a == MD_ALIGN_LEFT     ? 1
                          : a == MD_ALIGN_CENTER ? 2
                          : a == MD_ALIGN_RIGHT  ? 3
                                                 : 0);
      }
    }
    break;
  default:
    break;
  }
  return 0;
}

int leave_block(MD_BLOCKTYPE type, void*, void* user) {
  Builder& b = *static_cast<Builder*>(user);
  switch (type) {
  case MD_BLOCK_QUOTE:
    --b.quote;
    b.target = nullptr;
    break;
  case MD_BLOCK_UL:
  case MD_BLOCK_OL:
    b.lists.pop_back();
    b.target = nullptr;
    break;
  case MD_BLOCK_CODE: {
    b.in_code_block = false;
    MdBlock& c = *b.cur;
    if (!c.code.empty() && c.code.back() == '\n') c.code.pop_back();
    if (c.lang == "quiz") {
      QuizError err;
      if (auto q = parse_quiz(c.code, &err)) {
        c.kind = MdBlock::Kind::quiz;
        c.quiz = int(b.doc.quizzes.size());
        b.doc.quizzes.push_back(std::move(*q));
      } else {
        c.warning =
            fmt::format("This quiz is malformed (line {} of the block: {}); shown as written.",
                        err.line, err.message);
      }
    }
    b.target = nullptr;
    break;
  }
  case MD_BLOCK_TABLE:
    b.in_table = false;
    b.target = nullptr;
    break;
  case MD_BLOCK_TH:
  case MD_BLOCK_TD:
    b.target = nullptr;
    break;
  case MD_BLOCK_P:
  case MD_BLOCK_H:
  case MD_BLOCK_LI:
    if (!b.in_table) b.target = nullptr;
    break;
  default:
    break;
  }
  return 0;
}

int enter_span(MD_SPANTYPE type, void* detail, void* user) {
  Builder& b = *static_cast<Builder*>(user);
  switch (type) {
  case MD_SPAN_EM:
    b.style |= md_italic;
    break;
  case MD_SPAN_STRONG:
    b.style |= md_bold;
    break;
  case MD_SPAN_CODE:
    b.style |= md_code;
    break;
  case MD_SPAN_DEL:
    b.style |= md_strike;
    break;
  case MD_SPAN_A:
    b.link_stack.push_back(int(b.doc.links.size()));
    b.doc.links.push_back(attr(static_cast<MD_SPAN_A_DETAIL*>(detail)->href));
    break;
  case MD_SPAN_IMG: {
    if (!b.target) b.open(MdBlock::Kind::paragraph);
    b.image = int(b.doc.images.size());
    b.doc.images.push_back({attr(static_cast<MD_SPAN_IMG_DETAIL*>(detail)->src), {}});
    MdSpan sp;
    sp.image = b.image;
    sp.hard_break = true;
    b.target->push_back(std::move(sp));
    break;
  }
  default:
    break;
  }
  return 0;
}

int leave_span(MD_SPANTYPE type, void*, void* user) {
  Builder& b = *static_cast<Builder*>(user);
  switch (type) {
  case MD_SPAN_EM:
    b.style &= uint8_t(~md_italic);
    break;
  case MD_SPAN_STRONG:
    b.style &= uint8_t(~md_bold);
    break;
  case MD_SPAN_CODE:
    b.style &= uint8_t(~md_code);
    break;
  case MD_SPAN_DEL:
    b.style &= uint8_t(~md_strike);
    break;
  case MD_SPAN_A:
    if (!b.link_stack.empty()) b.link_stack.pop_back();
    break;
  case MD_SPAN_IMG:
    if (b.image >= 0 && b.target) {
      // The alt text rides on the image span; a break after it puts following text below.
      for (auto& s : *b.target)
        if (s.image == b.image) s.text = b.doc.images[size_t(b.image)].alt;
      b.br = true;
    }
    b.image = -1;
    break;
  default:
    break;
  }
  return 0;
}

int on_text(MD_TEXTTYPE type, const MD_CHAR* text, MD_SIZE size, void* user) {
  static_cast<Builder*>(user)->text(type, std::string_view(text, size));
  return 0;
}

} // namespace

MdDoc parse_markdown(std::string_view text) {
  Builder b;
  MD_PARSER p{};
  p.abi_version = 0;
  p.flags =
      MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | MD_FLAG_NOHTML | MD_FLAG_PERMISSIVEURLAUTOLINKS;
  p.enter_block = enter_block;
  p.leave_block = leave_block;
  p.enter_span = enter_span;
  p.leave_span = leave_span;
  p.text = on_text;
  // `cur` points into the blocks: reserve more than the lines could ever make so it never moves.
  size_t estimate = 16 + 2 * size_t(std::count(text.begin(), text.end(), '\n'));
  b.doc.blocks.reserve(estimate);
  md_parse(text.data(), MD_SIZE(text.size()), &p, &b);
  // Paragraphs left empty (a list item that only held a nested list) are dropped.
  std::erase_if(b.doc.blocks, [](const MdBlock& x) {
    return x.kind == MdBlock::Kind::paragraph && x.spans.empty() && x.bullet.empty();
  });
  return std::move(b.doc);
}

std::vector<MdSpan> parse_inline(std::string_view text) {
  MdDoc d = parse_markdown(text);
  std::vector<MdSpan> out;
  for (auto& blk : d.blocks) {
    if (!out.empty()) out.push_back({" ", 0});
    for (auto& s : blk.spans) {
      MdSpan c = s;
      c.link = -1; // no links inside quizzes
      c.image = -1;
      out.push_back(std::move(c));
    }
  }
  return out;
}

// ---- layout
// -----------------------------------------------------------------------------------------

namespace {

const ImU32 kText = IM_COL32(225, 225, 225, 255);
const ImU32 kLink = IM_COL32(110, 170, 255, 255);
const ImU32 kCode = IM_COL32(230, 190, 140, 255);
const ImU32 kCodeBg = IM_COL32(255, 255, 255, 22);

ImFont* font_for(const MdFonts& f, ImFont* base, uint8_t style) {
  if (style & md_code) return f.mono;
  if (base != f.regular) return base; // headings keep their font
  if (style & md_bold) return f.bold;
  if (style & md_italic) return f.italic;
  return f.regular;
}

bool is_ws(char c) {
  return c == ' ' || c == '\t';
}

} // namespace

MdLayout layout_spans(const std::vector<MdSpan>& spans, const MdFonts& f, ImFont* base, float width,
                      float indent, const std::function<MdImage(int)>& image_size) {
  MdLayout out;
  float line_h = std::floor(base->FontSize * 1.35f);
  float x = indent, y = 0, used = indent;
  auto newline = [&]() {
    x = indent;
    y += line_h;
  };
  for (int si = 0; si < int(spans.size()); ++si) {
    const MdSpan& s = spans[size_t(si)];
    if (s.hard_break && x > indent) newline();
    if (s.image >= 0) {
      MdImage im = image_size ? image_size(s.image) : MdImage{nullptr, 0, 0, true};
      float avail = std::max(10.f, width - indent);
      if (!im.failed && im.width > 0) {
        // Never smaller than its PNG, which is drawn with its smallest text at the body size
        // (assets/lessons/check_pictures.py), scaled with the body text: a picture wider than
        // the column scrolls sideways rather than shrinking its text out of reach.
        float k = f.regular->FontSize / kPictureBodyPx;
        float w = float(im.width) * k, h = float(im.height) * k;
        MdRun r;
        r.kind = MdRun::Kind::image;
        r.a = ImVec2(indent, y + 4);
        r.b = ImVec2(indent + w, y + 4 + h);
        r.image = s.image;
        r.view = std::min(w, avail);
        out.runs.push_back(r);
        used = std::max(used, indent + r.view);
        y += h + 8 + (r.view < w ? ImGui::GetStyle().ScrollbarSize : 0);
      } else {
        // Not loaded (yet, or ever): a box with the alt text.
        MdRun r;
        r.kind = MdRun::Kind::box;
        r.a = ImVec2(indent, y + 2);
        r.b = ImVec2(indent + std::min(avail, 240.f), y + 2 + line_h * 2);
        r.image = s.image;
        out.runs.push_back(r);
        MdRun t;
        t.kind = MdRun::Kind::text;
        t.font = f.italic;
        t.color = IM_COL32(170, 170, 170, 255);
        t.a = ImVec2(indent + 6, y + 2 + line_h * 0.5f);
        t.span = si;
        t.begin = 0;
        t.end = uint32_t(s.text.size());
        // Alt text may be long: keep to the box.
        const char* e = f.italic->CalcWordWrapPositionA(
            1.0f, s.text.data(), s.text.data() + s.text.size(), std::min(avail, 240.f) - 12);
        t.end = uint32_t(e - s.text.data());
        out.runs.push_back(t);
        y += line_h * 2 + 6;
      }
      x = indent;
      continue;
    }
    ImFont* font = font_for(f, base, s.style);
    float size = font->FontSize;
    float yoff = (line_h - size) * 0.5f;
    const std::string& t = s.text;
    size_t i = 0;
    while (i < t.size()) {
      // A word with its trailing spaces.
      size_t j = i;
      while (j < t.size() && !is_ws(t[j])) ++j;
      size_t k = j;
      while (k < t.size() && is_ws(t[k])) ++k;
      const char* a = t.data() + i;
      float w = font->CalcTextSizeA(size, FLT_MAX, 0, a, t.data() + j).x;
      float ws = font->CalcTextSizeA(size, FLT_MAX, 0, t.data() + j, t.data() + k).x;
      if (x + w > width && x > indent) {
        newline();
        if (j == i) { // only spaces: drop them at the start of a line
          i = k;
          continue;
        }
      }
      if (x + w > width && x <= indent && j > i) {
        // Longer than a whole line: break it where it no longer fits.
        const char* e = font->CalcWordWrapPositionA(1.0f, a, t.data() + j, width - x);
        if (e == a) e = a + 1;
        while (e < t.data() + j && (static_cast<unsigned char>(*e) & 0xC0) == 0x80) ++e;
        j = k = size_t(e - t.data());
        w = font->CalcTextSizeA(size, FLT_MAX, 0, a, e).x;
        ws = 0;
      }
      MdRun r;
      r.kind = MdRun::Kind::text;
      r.a = ImVec2(x, y + yoff);
      r.font = font;
      r.color = s.link >= 0 ? kLink : (s.style & md_code) ? kCode : kText;
      r.span = si;
      r.begin = uint32_t(i);
      r.end = uint32_t(k);
      r.link = s.link;
      if (s.style & md_code) {
        MdRun bg;
        bg.kind = MdRun::Kind::code_bg;
        bg.a = ImVec2(x - 2, y + yoff - 1);
        bg.b = ImVec2(x + w + 2, y + yoff + size + 1);
        bg.color = kCodeBg;
        out.runs.push_back(bg);
      }
      out.runs.push_back(r);
      if (s.link >= 0 || (s.style & md_strike)) {
        MdRun u;
        u.kind = MdRun::Kind::underline;
        float uy = (s.style & md_strike) ? y + yoff + size * 0.55f : y + yoff + size;
        u.a = ImVec2(x, uy);
        u.b = ImVec2(x + w, uy);
        u.color = r.color;
        u.link = s.link;
        out.runs.push_back(u);
      }
      x += w + ws;
      used = std::max(used, x - ws);
      i = k;
      if (x > width && k < t.size()) newline();
    }
  }
  if (x > indent || out.runs.empty()) y += line_h;
  out.size = ImVec2(used, y);
  return out;
}

// ---- drawing
// ------------------------------------------------------------------------------------------

namespace {

ImFont* heading_font(const MdFonts& f, int level) {
  return level <= 1 ? f.h1 : level == 2 ? f.h2 : f.h3;
}

void draw_runs(const MdLayout& L, const std::vector<MdSpan>& spans, ImVec2 origin, MdView& v,
               const MdDoc* doc) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (auto& r : L.runs) {
    ImVec2 a(origin.x + r.a.x, origin.y + r.a.y), b(origin.x + r.b.x, origin.y + r.b.y);
    switch (r.kind) {
    case MdRun::Kind::text: {
      const std::string& t = spans[size_t(r.span)].text;
      dl->AddText(r.font, r.font->FontSize, a, r.color, t.data() + r.begin, t.data() + r.end);
      if (spans[size_t(r.span)].style & md_bold && r.font == v.fonts.regular)
        dl->AddText(r.font, r.font->FontSize, ImVec2(a.x + 0.6f, a.y), r.color, t.data() + r.begin,
                    t.data() + r.end);
      if (r.link >= 0) {
        float w =
            r.font
                ->CalcTextSizeA(r.font->FontSize, FLT_MAX, 0, t.data() + r.begin, t.data() + r.end)
                .x;
        v.link_rects.push_back(ImVec4(a.x, a.y, a.x + w, a.y + r.font->FontSize));
        v.link_ids.push_back(r.link);
      }
      break;
    }
    case MdRun::Kind::code_bg:
      dl->AddRectFilled(a, b, r.color, 3);
      break;
    case MdRun::Kind::underline:
      dl->AddLine(a, b, r.color, 1);
      break;
    case MdRun::Kind::rule:
      dl->AddLine(a, b, IM_COL32(255, 255, 255, 50), 1);
      break;
    case MdRun::Kind::box:
      dl->AddRect(a, b, IM_COL32(255, 255, 255, 60), 3);
      break;
    case MdRun::Kind::image:
      if (doc && v.image) {
        MdImage im = v.image(doc->images[size_t(r.image)].src);
        if (!im.texture) break;
        if (r.view >= b.x - a.x) {
          dl->AddImage(im.texture, a, b);
          break;
        }
        // Wider than the column: a strip that scrolls sideways (the scrollbar, Shift+wheel, or
        // a drag on the picture); the page's own wheel still scrolls the page.
        ImVec2 keep = ImGui::GetCursorScreenPos();
        ImGui::SetCursorScreenPos(a);
        ImGui::PushID(r.image);
        ImGui::BeginChild("##picture", ImVec2(r.view, b.y - a.y + ImGui::GetStyle().ScrollbarSize),
                          false, ImGuiWindowFlags_HorizontalScrollbar);
        ImGui::Image(im.texture, ImVec2(b.x - a.x, b.y - a.y));
        if (ImGui::IsItemHovered() && ImGui::IsMouseDragging(ImGuiMouseButton_Left))
          ImGui::SetScrollX(ImGui::GetScrollX() - ImGui::GetIO().MouseDelta.x);
        ImGui::EndChild();
        ImGui::PopID();
        ImGui::SetCursorScreenPos(keep);
      }
      break;
    }
  }
}

// Handles clicks on the links recorded this frame.
void link_clicks(MdView& v, const MdDoc& doc, size_t from) {
  if (!ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) return;
  ImVec2 m = ImGui::GetIO().MousePos;
  for (size_t i = from; i < v.link_rects.size(); ++i) {
    ImVec4 r = v.link_rects[i];
    if (m.x >= r.x && m.x < r.z && m.y >= r.y && m.y < r.w) {
      ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
      const std::string& url = doc.links[size_t(v.link_ids[i])];
      ImGui::SetTooltip("%s", url.c_str());
      if (ImGui::IsMouseClicked(0) && v.on_link) v.on_link(url);
    }
  }
}

void draw_spans_widget(const std::vector<MdSpan>& spans, MdView& v, float width, const MdDoc* doc) {
  MdLayout L = layout_spans(spans, v.fonts, v.fonts.regular, width, 0);
  ImVec2 o = ImGui::GetCursorScreenPos();
  draw_runs(L, spans, o, v, doc);
  ImGui::Dummy(ImVec2(std::max(1.f, L.size.x), L.size.y));
}

void draw_quiz(const MdDoc& doc, const MdBlock& blk, MdView& v, float width) {
  const Quiz& q = doc.quizzes[size_t(blk.quiz)];
  if (v.quizzes.size() < doc.quizzes.size()) v.quizzes.resize(doc.quizzes.size());
  MdQuizState& st = v.quizzes[size_t(blk.quiz)];
  st.chosen.resize(q.choices.size());
  ImGui::PushID(blk.quiz);
  ImVec2 top = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->ChannelsSplit(2);
  dl->ChannelsSetCurrent(1);
  ImGui::Indent(10);
  ImGui::Dummy(ImVec2(0, 4));
  ImGui::TextColored(ImVec4(0.55f, 0.75f, 1, 1), "Quiz");
  draw_spans_widget(parse_inline(q.question), v, width - 20, nullptr);
  bool multi = q.multi();
  bool right = st.checked && quiz_answer_right(q, st.chosen);
  for (size_t i = 0; i < q.choices.size(); ++i) {
    ImGui::PushID(int(i));
    bool on = st.chosen[i];
    if (st.checked) ImGui::BeginDisabled();
    if (multi) {
      if (ImGui::Checkbox("##c", &on)) st.chosen[i] = on;
    } else if (ImGui::RadioButton("##r", on)) {
      std::fill(st.chosen.begin(), st.chosen.end(), false);
      st.chosen[i] = true;
    }
    if (st.checked) ImGui::EndDisabled();
    if (v.mark) v.mark(fmt::format("quiz{}-choice{}", blk.quiz + 1, i + 1));
    ImGui::SameLine();
    if (st.checked) {
      const QuizChoice& c = q.choices[i];
      if (c.correct)
        ImGui::TextColored(ImVec4(0.4f, 0.85f, 0.4f, 1), "right");
      else if (on)
        ImGui::TextColored(ImVec4(0.95f, 0.4f, 0.35f, 1), "wrong");
      else
        ImGui::TextDisabled("     ");
      ImGui::SameLine();
    }
    float x0 = ImGui::GetCursorPosX();
    draw_spans_widget(parse_inline(q.choices[i].text), v, width - x0 - 10, nullptr);
    if (st.checked && (on || q.choices[i].correct) && !q.choices[i].explanation.empty()) {
      ImGui::SetCursorPosX(x0);
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(180, 180, 180, 255));
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width - x0 - 20);
      ImGui::TextWrapped("%s", q.choices[i].explanation.c_str());
      ImGui::PopTextWrapPos();
      ImGui::PopStyleColor();
    }
    ImGui::PopID();
  }
  bool any = std::find(st.chosen.begin(), st.chosen.end(), true) != st.chosen.end();
  if (!st.checked) {
    if (!any) ImGui::BeginDisabled();
    if (ImGui::Button("Check")) {
      st.checked = true;
      if (v.on_quiz) v.on_quiz(blk.quiz, st.chosen, quiz_answer_right(q, st.chosen));
    }
    if (v.mark) v.mark(fmt::format("quiz{}-check", blk.quiz + 1));
    if (!any) ImGui::EndDisabled();
  } else {
    ImGui::TextColored(right ? ImVec4(0.4f, 0.85f, 0.4f, 1) : ImVec4(0.95f, 0.55f, 0.35f, 1), "%s",
                       right   ? "Right."
                       : multi ? "Not quite: the right set is marked."
                               : "Not quite.");
    draw_spans_widget(parse_inline(q.why), v, width - 20, nullptr);
    if (ImGui::Button("Try again")) {
      st.checked = false;
      std::fill(st.chosen.begin(), st.chosen.end(), false);
    }
  }
  ImGui::Dummy(ImVec2(0, 4));
  ImGui::Unindent(10);
  dl->ChannelsSetCurrent(0);
  ImVec2 bot = ImGui::GetCursorScreenPos();
  dl->AddRectFilled(top, ImVec2(top.x + width, bot.y), IM_COL32(60, 90, 140, 40), 6);
  dl->AddRect(top, ImVec2(top.x + width, bot.y), IM_COL32(90, 130, 200, 110), 6);
  dl->ChannelsMerge();
  ImGui::PopID();
}

void draw_table(const MdBlock& blk, MdView& v, float width, const MdDoc& doc) {
  const MdTable& t = blk.table;
  size_t cols = 0;
  for (auto& r : t.rows) cols = std::max(cols, r.size());
  if (cols == 0) return;
  ImGui::PushID(&blk);
  if (ImGui::BeginTable("##t", int(cols),
                        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                            ImGuiTableFlags_SizingStretchProp,
                        ImVec2(width, 0))) {
    for (size_t ri = 0; ri < t.rows.size(); ++ri) {
      ImGui::TableNextRow(ri < size_t(t.head_rows) ? ImGuiTableRowFlags_Headers : 0);
      for (size_t ci = 0; ci < cols; ++ci) {
        ImGui::TableSetColumnIndex(int(ci));
        if (ci >= t.rows[ri].size()) continue;
        std::vector<MdSpan> cell = t.rows[ri][ci];
        if (ri < size_t(t.head_rows))
          for (auto& s : cell) s.style |= md_bold;
        float w = ImGui::GetContentRegionAvail().x;
        MdLayout L = layout_spans(cell, v.fonts, v.fonts.regular, w, 0);
        int align = ci < t.align.size() ? t.align[ci] : 0;
        ImVec2 o = ImGui::GetCursorScreenPos();
        if (align == 3)
          o.x += std::max(0.f, w - L.size.x);
        else if (align == 2)
          o.x += std::max(0.f, (w - L.size.x) * 0.5f);
        draw_runs(L, cell, o, v, &doc);
        ImGui::Dummy(ImVec2(std::max(1.f, std::min(w, L.size.x)), L.size.y));
      }
    }
    ImGui::EndTable();
  }
  ImGui::PopID();
}

} // namespace

void draw_markdown(const MdDoc& doc, MdView& v, float width) {
  if (width <= 0) width = ImGui::GetContentRegionAvail().x;
  width = std::max(width, 50.f);
  const MdFonts& f = v.fonts;
  if (v.cached_width != width || v.cached_doc != &doc || v.layouts.size() != doc.blocks.size()) {
    v.layouts.assign(doc.blocks.size(), MdLayout{});
    v.cached_width = width;
    v.cached_doc = &doc;
  }
  v.link_rects.clear();
  v.link_ids.clear();
  float para_gap = std::floor(f.regular->FontSize * 0.6f);
  float indent_step = std::floor(f.regular->FontSize * 1.4f);
  ImVec2 clip_min = ImGui::GetWindowDrawList()->GetClipRectMin();
  ImVec2 clip_max = ImGui::GetWindowDrawList()->GetClipRectMax();
  float start_y = ImGui::GetCursorPosY();
  auto image_size = [&](int idx) -> MdImage {
    if (!v.image) return {nullptr, 0, 0, true};
    return v.image(doc.images[size_t(idx)].src);
  };

  for (size_t bi = 0; bi < doc.blocks.size(); ++bi) {
    const MdBlock& blk = doc.blocks[bi];
    float indent = float(blk.indent) * indent_step + float(blk.quote) * indent_step;
    ImVec2 o = ImGui::GetCursorScreenPos();
    switch (blk.kind) {
    case MdBlock::Kind::paragraph:
    case MdBlock::Kind::heading: {
      ImFont* base = blk.kind == MdBlock::Kind::heading ? heading_font(f, blk.level) : f.regular;
      MdLayout& L = v.layouts[bi];
      // Images that are still loading change size when they arrive: lay those out every frame.
      bool has_image = false;
      for (auto& s : blk.spans) has_image |= s.image >= 0;
      if (L.runs.empty() || has_image)
        L = layout_spans(blk.spans, f, base, width, indent, image_size);
      if (blk.kind == MdBlock::Kind::heading)
        ImGui::Dummy(ImVec2(0, para_gap * (blk.level <= 2 ? 1.2f : 0.6f)));
      o = ImGui::GetCursorScreenPos();
      bool visible = o.y + L.size.y >= clip_min.y && o.y <= clip_max.y;
      if (visible) {
        size_t before = v.link_rects.size();
        if (!blk.bullet.empty()) {
          ImDrawList* dl = ImGui::GetWindowDrawList();
          float bw =
              f.regular->CalcTextSizeA(f.regular->FontSize, FLT_MAX, 0, blk.bullet.c_str()).x;
          float ly = (std::floor(base->FontSize * 1.35f) - base->FontSize) * 0.5f;
          dl->AddText(f.regular, f.regular->FontSize, ImVec2(o.x + indent - bw - 6, o.y + ly),
                      IM_COL32(170, 170, 170, 255), blk.bullet.c_str());
        }
        if (blk.quote > 0)
          ImGui::GetWindowDrawList()->AddRectFilled(
              ImVec2(o.x + indent - indent_step * 0.6f, o.y),
              ImVec2(o.x + indent - indent_step * 0.6f + 3, o.y + L.size.y),
              IM_COL32(120, 140, 180, 160));
        draw_runs(L, blk.spans, o, v, &doc);
        link_clicks(v, doc, before);
      }
      ImGui::Dummy(ImVec2(std::max(1.f, L.size.x), L.size.y));
      if (blk.kind == MdBlock::Kind::heading && blk.level <= 2) {
        ImVec2 p = ImGui::GetCursorScreenPos();
        ImGui::GetWindowDrawList()->AddLine(ImVec2(p.x, p.y - 2), ImVec2(p.x + width, p.y - 2),
                                            IM_COL32(255, 255, 255, 40));
      }
      bool tight_next =
          bi + 1 < doc.blocks.size() && !doc.blocks[bi + 1].bullet.empty() && !blk.bullet.empty();
      ImGui::Dummy(ImVec2(0, tight_next ? 1 : para_gap));
      break;
    }
    case MdBlock::Kind::code:
    case MdBlock::Kind::quiz: {
      if (blk.kind == MdBlock::Kind::quiz) {
        draw_quiz(doc, blk, v, width - indent);
        ImGui::Dummy(ImVec2(0, para_gap));
        break;
      }
      if (!blk.warning.empty()) {
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
        ImGui::TextColored(ImVec4(0.95f, 0.6f, 0.3f, 1), "%s", blk.warning.c_str());
        ImGui::PopTextWrapPos();
        o = ImGui::GetCursorScreenPos();
      }
      ImFont* mono = f.mono;
      float lh = std::floor(mono->FontSize * 1.3f);
      // Long lines wrap (at spaces where possible) rather than disappear past the edge.
      float avail = std::max(40.f, width - indent - 16);
      std::vector<std::pair<size_t, size_t>> vis;
      for (size_t pos = 0; pos <= blk.code.size();) {
        size_t nl = blk.code.find('\n', pos);
        if (nl == std::string::npos) nl = blk.code.size();
        size_t a = pos;
        do {
          const char* e =
              mono->CalcWordWrapPositionA(1.0f, blk.code.data() + a, blk.code.data() + nl, avail);
          size_t b = size_t(e - blk.code.data());
          if (b <= a) b = std::min(nl, a + 1);
          vis.emplace_back(a, b);
          a = b;
          while (a < nl && blk.code[a] == ' ' && vis.back().second != nl) ++a;
        } while (a < nl);
        pos = nl + 1;
      }
      float h = float(vis.size()) * lh + 12;
      ImVec2 a(o.x + indent, o.y), b(o.x + width, o.y + h);
      bool visible = b.y >= clip_min.y && a.y <= clip_max.y;
      if (visible) {
        ImDrawList* dl = ImGui::GetWindowDrawList();
        dl->AddRectFilled(a, b, IM_COL32(0, 0, 0, 90), 4);
        dl->PushClipRect(a, b, true);
        for (size_t li = 0; li < vis.size(); ++li)
          dl->AddText(mono, mono->FontSize, ImVec2(a.x + 8, a.y + 6 + float(li) * lh),
                      IM_COL32(215, 215, 200, 255), blk.code.data() + vis[li].first,
                      blk.code.data() + vis[li].second);
        dl->PopClipRect();
        // Copy the block: lessons say what to run.
        ImGui::SetCursorScreenPos(ImVec2(b.x - 48, a.y + 3));
        ImGui::PushID(int(bi));
        if (ImGui::IsMouseHoveringRect(a, b) && ImGui::SmallButton("copy"))
          ImGui::SetClipboardText(blk.code.c_str());
        ImGui::PopID();
        ImGui::SetCursorScreenPos(o);
      }
      ImGui::Dummy(ImVec2(width - indent, h));
      ImGui::Dummy(ImVec2(0, para_gap));
      break;
    }
    case MdBlock::Kind::rule: {
      ImGui::Dummy(ImVec2(0, para_gap));
      ImVec2 p = ImGui::GetCursorScreenPos();
      ImGui::GetWindowDrawList()->AddLine(p, ImVec2(p.x + width, p.y), IM_COL32(255, 255, 255, 60));
      ImGui::Dummy(ImVec2(0, para_gap));
      break;
    }
    case MdBlock::Kind::table:
      if (indent > 0) ImGui::Indent(indent);
      draw_table(blk, v, width - indent, doc);
      if (indent > 0) ImGui::Unindent(indent);
      ImGui::Dummy(ImVec2(0, para_gap));
      break;
    }
  }
  v.total_height = ImGui::GetCursorPosY() - start_y;
}

} // namespace wb::gui
