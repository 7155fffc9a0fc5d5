#include "editor.hpp"
#include "core/format_figure.hpp"

#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_internal.h>

namespace wb::gui {

namespace {

bool is_cont(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}
bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80);
}
bool is_space(char c) {
  return c == ' ' || c == '\t';
}

int next_char(const std::string& s, int col) {
  if (col >= int(s.size())) return int(s.size());
  ++col;
  while (col < int(s.size()) && is_cont(s[size_t(col)])) ++col;
  return col;
}
int prev_char(const std::string& s, int col) {
  if (col <= 0) return 0;
  --col;
  while (col > 0 && is_cont(s[size_t(col)])) --col;
  return col;
}

std::vector<std::string> split_lines(std::string_view t) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    size_t nl = t.find('\n', pos);
    if (nl == std::string_view::npos) {
      out.emplace_back(t.substr(pos));
      return out;
    }
    out.emplace_back(t.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

int leading_spaces(const std::string& s) {
  int n = 0;
  while (n < int(s.size()) && is_space(s[size_t(n)])) ++n;
  return n;
}

} // namespace

// ---- the model ---------------------------------------------------------------------------------

void TextModel::set_text(std::string_view text) {
  lines_ = split_lines(text);
  cursor_ = anchor_ = {};
  undo_.clear();
  redo_.clear();
  coalesce_ = false;
  ++version_;
}

void TextModel::replace_all(std::string_view text) {
  TextPos end{line_count() - 1, int(lines_.back().size())};
  TextPos keep = cursor_;
  apply({0, 0}, end, text, 0, {}, false);
  cursor_ = anchor_ = clamp(keep);
  undo_.back().cursor_after = undo_.back().anchor_after = cursor_;
  break_coalescing();
}

std::string TextModel::text() const {
  std::string out;
  size_t n = 0;
  for (auto& l : lines_) n += l.size() + 1;
  out.reserve(n);
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (i) out += '\n';
    out += lines_[i];
  }
  return out;
}

TextPos TextModel::clamp(TextPos p) const {
  p.line = std::clamp(p.line, 0, line_count() - 1);
  const std::string& l = lines_[size_t(p.line)];
  p.col = std::clamp(p.col, 0, int(l.size()));
  while (p.col > 0 && p.col < int(l.size()) && is_cont(l[size_t(p.col)])) --p.col;
  return p;
}

std::string TextModel::selected_text() const {
  if (!has_selection()) return {};
  TextPos a = std::min(cursor_, anchor_), b = std::max(cursor_, anchor_);
  if (a.line == b.line) return lines_[size_t(a.line)].substr(size_t(a.col), size_t(b.col - a.col));
  std::string out = lines_[size_t(a.line)].substr(size_t(a.col));
  for (int l = a.line + 1; l < b.line; ++l) out += "\n" + lines_[size_t(l)];
  out += "\n" + lines_[size_t(b.line)].substr(0, size_t(b.col));
  return out;
}

void TextModel::set_cursor(TextPos p, bool extend) {
  cursor_ = clamp(p);
  if (!extend) anchor_ = cursor_;
  preferred_x_ = -1;
  break_coalescing();
}

void TextModel::select(TextPos a, TextPos b) {
  anchor_ = clamp(a);
  cursor_ = clamp(b);
  preferred_x_ = -1;
  break_coalescing();
}

void TextModel::select_all() {
  select({0, 0}, {line_count() - 1, int(lines_.back().size())});
}

void TextModel::select_word_at(TextPos p) {
  p = clamp(p);
  const std::string& l = lines_[size_t(p.line)];
  int a = p.col, b = p.col;
  if (a < int(l.size()) && is_word(l[size_t(a)])) {
    while (a > 0 && is_word(l[size_t(a - 1)])) --a;
    while (b < int(l.size()) && is_word(l[size_t(b)])) ++b;
  } else {
    b = next_char(l, b);
  }
  select({p.line, a}, {p.line, b});
}

TextPos TextModel::end_of(TextPos start, std::string_view s) const {
  size_t nl = s.rfind('\n');
  if (nl == std::string_view::npos) return {start.line, start.col + int(s.size())};
  return {start.line + int(std::count(s.begin(), s.end(), '\n')), int(s.size() - nl - 1)};
}

TextPos TextModel::insert_at(TextPos p, std::string_view s) {
  std::string& l = lines_[size_t(p.line)];
  if (s.find('\n') == std::string_view::npos) {
    l.insert(size_t(p.col), s);
    return {p.line, p.col + int(s.size())};
  }
  std::vector<std::string> parts = split_lines(s);
  std::string tail = l.substr(size_t(p.col));
  l = l.substr(0, size_t(p.col)) + parts.front();
  int end_col = int(parts.back().size());
  parts.back() += tail;
  lines_.insert(lines_.begin() + p.line + 1, std::make_move_iterator(parts.begin() + 1),
                std::make_move_iterator(parts.end()));
  return {p.line + int(parts.size()) - 1, end_col};
}

std::string TextModel::erase(TextPos a, TextPos b) {
  if (a == b) return {};
  std::string removed;
  if (a.line == b.line) {
    std::string& l = lines_[size_t(a.line)];
    removed = l.substr(size_t(a.col), size_t(b.col - a.col));
    l.erase(size_t(a.col), size_t(b.col - a.col));
    return removed;
  }
  removed = lines_[size_t(a.line)].substr(size_t(a.col));
  for (int i = a.line + 1; i < b.line; ++i) removed += "\n" + lines_[size_t(i)];
  removed += "\n" + lines_[size_t(b.line)].substr(0, size_t(b.col));
  lines_[size_t(a.line)] = lines_[size_t(a.line)].substr(0, size_t(a.col)) +
                           lines_[size_t(b.line)].substr(size_t(b.col));
  lines_.erase(lines_.begin() + a.line + 1, lines_.begin() + b.line + 1);
  return removed;
}

void TextModel::apply(TextPos a, TextPos b, std::string_view with, int kind, TextPos new_cursor,
                      bool place_at_end) {
  if (a > b) std::swap(a, b);
  Edit e;
  e.start = a;
  e.cursor_before = cursor_;
  e.anchor_before = anchor_;
  e.kind = kind;
  e.removed = erase(a, b);
  e.inserted = std::string(with);
  TextPos end = insert_at(a, with);
  cursor_ = anchor_ = place_at_end ? end : clamp(new_cursor);
  e.cursor_after = e.anchor_after = cursor_;
  redo_.clear();
  ++version_;
  preferred_x_ = -1;
  // Typing runs and runs of backspaces or deletes become one undo step.
  if (coalesce_ && !undo_.empty() && kind != 0 && undo_.back().kind == kind) {
    Edit& last = undo_.back();
    if (kind == 1 && e.removed.empty() && end_of(last.start, last.inserted) == a) {
      last.inserted += e.inserted;
      last.cursor_after = last.anchor_after = cursor_;
      return;
    }
    if (kind == 2 && e.inserted.empty() && last.inserted.empty() && b == last.start) {
      last.removed = e.removed + last.removed;
      last.start = a;
      last.cursor_after = last.anchor_after = cursor_;
      return;
    }
    if (kind == 3 && e.inserted.empty() && last.inserted.empty() && a == last.start) {
      last.removed += e.removed;
      last.cursor_after = last.anchor_after = cursor_;
      return;
    }
  }
  undo_.push_back(std::move(e));
  if (undo_.size() > 2000) undo_.erase(undo_.begin());
  coalesce_ = kind != 0;
}

void TextModel::replace_selection(std::string_view with, int kind) {
  // A new word starts a new typing run, so undo takes back a word (and the spaces after it) at a
  // time.
  if (kind == 1 && !with.empty()) {
    bool word = is_word(with[0]);
    if (word && !last_typed_word_) break_coalescing();
    last_typed_word_ = is_word(with.back());
  }
  if (has_selection()) break_coalescing();
  apply(anchor_, cursor_, with, kind, {}, true);
}

void TextModel::type(std::string_view chars) {
  replace_selection(chars, 1);
}

void TextModel::newline() {
  const std::string& l = lines_[size_t(std::min(cursor_, anchor_).line)];
  int indent = std::min(leading_spaces(l), std::min(cursor_, anchor_).col);
  std::string ins = "\n" + l.substr(0, size_t(indent));
  // After an opening brace, indent one level more.
  TextPos a = std::min(cursor_, anchor_);
  int k = a.col - 1;
  while (k >= 0 && is_space(l[size_t(k)])) --k;
  if (k >= 0 && l[size_t(k)] == '{') ins += "  ";
  break_coalescing();
  apply(anchor_, cursor_, ins, 0, {}, true);
}

void TextModel::backspace() {
  if (has_selection()) return replace_selection("", 0);
  if (cursor_ == TextPos{0, 0}) return;
  TextPos a = cursor_;
  if (a.col == 0)
    a = {a.line - 1, int(lines_[size_t(a.line - 1)].size())};
  else
    a.col = prev_char(lines_[size_t(a.line)], a.col);
  apply(a, cursor_, "", 2, a, false);
}

void TextModel::del() {
  if (has_selection()) return replace_selection("", 0);
  TextPos b = cursor_;
  const std::string& l = lines_[size_t(b.line)];
  if (b.col >= int(l.size())) {
    if (b.line + 1 >= line_count()) return;
    b = {b.line + 1, 0};
  } else {
    b.col = next_char(l, b.col);
  }
  apply(cursor_, b, "", 3, cursor_, false);
}

void TextModel::tab(int width) {
  TextPos a = std::min(cursor_, anchor_), b = std::max(cursor_, anchor_);
  if (a.line == b.line) {
    int n = width - (a.col % width);
    replace_selection(std::string(size_t(n), ' '), 0);
    break_coalescing();
    return;
  }
  // Indent every line touched by the selection, as one undo step.
  int last = b.col == 0 ? b.line - 1 : b.line;
  std::string block;
  for (int i = a.line; i <= last; ++i) {
    if (i > a.line) block += '\n';
    block += std::string(size_t(width), ' ') + lines_[size_t(i)];
  }
  TextPos from{a.line, 0}, to{last, int(lines_[size_t(last)].size())};
  break_coalescing();
  apply(from, to, block, 0, {}, true);
  anchor_ = {a.line, 0};
  cursor_ = {last, int(lines_[size_t(last)].size())};
  undo_.back().cursor_after = cursor_;
  undo_.back().anchor_after = anchor_;
}

void TextModel::untab(int width) {
  TextPos a = std::min(cursor_, anchor_), b = std::max(cursor_, anchor_);
  int last = (b.col == 0 && b.line > a.line) ? b.line - 1 : b.line;
  std::string block;
  bool any = false;
  for (int i = a.line; i <= last; ++i) {
    const std::string& l = lines_[size_t(i)];
    int n = std::min(width, leading_spaces(l));
    any |= n > 0;
    if (i > a.line) block += '\n';
    block += l.substr(size_t(n));
  }
  if (!any) return;
  TextPos from{a.line, 0}, to{last, int(lines_[size_t(last)].size())};
  break_coalescing();
  apply(from, to, block, 0, {}, true);
  anchor_ = {a.line, 0};
  cursor_ = clamp({last, int(lines_[size_t(last)].size())});
  undo_.back().cursor_after = cursor_;
  undo_.back().anchor_after = anchor_;
}

void TextModel::paste(std::string_view s) {
  std::string clean;
  clean.reserve(s.size());
  for (char c : s)
    if (c != '\r') clean += c;
  break_coalescing();
  apply(anchor_, cursor_, clean, 0, {}, true);
}

std::string TextModel::cut() {
  std::string s = selected_text();
  if (!s.empty()) replace_selection("", 0);
  return s;
}

void TextModel::move_left(bool extend, bool word) {
  if (has_selection() && !extend) {
    TextPos a = std::min(cursor_, anchor_);
    return set_cursor(a);
  }
  TextPos p = cursor_;
  const std::string& l = lines_[size_t(p.line)];
  if (p.col == 0) {
    if (p.line > 0) p = {p.line - 1, int(lines_[size_t(p.line - 1)].size())};
  } else if (word) {
    while (p.col > 0 && is_space(l[size_t(p.col - 1)])) --p.col;
    bool w = p.col > 0 && is_word(l[size_t(p.col - 1)]);
    while (p.col > 0 && !is_space(l[size_t(p.col - 1)]) && is_word(l[size_t(p.col - 1)]) == w)
      --p.col;
  } else {
    p.col = prev_char(l, p.col);
  }
  set_cursor(p, extend);
}

void TextModel::move_right(bool extend, bool word) {
  if (has_selection() && !extend) {
    TextPos b = std::max(cursor_, anchor_);
    return set_cursor(b);
  }
  TextPos p = cursor_;
  const std::string& l = lines_[size_t(p.line)];
  if (p.col >= int(l.size())) {
    if (p.line + 1 < line_count()) p = {p.line + 1, 0};
  } else if (word) {
    bool w = is_word(l[size_t(p.col)]);
    while (p.col < int(l.size()) && !is_space(l[size_t(p.col)]) && is_word(l[size_t(p.col)]) == w)
      ++p.col;
    while (p.col < int(l.size()) && is_space(l[size_t(p.col)])) ++p.col;
  } else {
    p.col = next_char(l, p.col);
  }
  set_cursor(p, extend);
}

void TextModel::move_up(bool extend, int n) {
  int want = preferred_x_ >= 0 ? preferred_x_ : cursor_.col;
  TextPos p{std::max(0, cursor_.line - n), want};
  if (cursor_.line == 0) p.col = 0;
  set_cursor(p, extend);
  preferred_x_ = want;
}

void TextModel::move_down(bool extend, int n) {
  int want = preferred_x_ >= 0 ? preferred_x_ : cursor_.col;
  TextPos p{std::min(line_count() - 1, cursor_.line + n), want};
  if (cursor_.line == line_count() - 1) p.col = int(lines_.back().size());
  set_cursor(p, extend);
  preferred_x_ = want;
}

void TextModel::move_home(bool extend) {
  int first = leading_spaces(lines_[size_t(cursor_.line)]);
  set_cursor({cursor_.line, cursor_.col == first ? 0 : first}, extend);
}
void TextModel::move_end(bool extend) {
  set_cursor({cursor_.line, int(lines_[size_t(cursor_.line)].size())}, extend);
}
void TextModel::move_to_start(bool extend) {
  set_cursor({0, 0}, extend);
}
void TextModel::move_to_end(bool extend) {
  set_cursor({line_count() - 1, int(lines_.back().size())}, extend);
}

bool TextModel::undo() {
  if (undo_.empty()) return false;
  Edit e = std::move(undo_.back());
  undo_.pop_back();
  erase(e.start, end_of(e.start, e.inserted));
  insert_at(e.start, e.removed);
  cursor_ = clamp(e.cursor_before);
  anchor_ = clamp(e.anchor_before);
  redo_.push_back(std::move(e));
  ++version_;
  coalesce_ = false;
  return true;
}

bool TextModel::redo() {
  if (redo_.empty()) return false;
  Edit e = std::move(redo_.back());
  redo_.pop_back();
  erase(e.start, end_of(e.start, e.removed));
  insert_at(e.start, e.inserted);
  cursor_ = clamp(e.cursor_after);
  anchor_ = clamp(e.anchor_after);
  undo_.push_back(std::move(e));
  ++version_;
  coalesce_ = false;
  return true;
}

TextPos TextModel::from_diagnostic(int line, int column) const {
  TextPos p{std::clamp(line - 1, 0, line_count() - 1), 0};
  const std::string& l = lines_[size_t(p.line)];
  p.col = column > 0 ? std::min(column - 1, int(l.size())) : leading_spaces(l);
  return clamp(p);
}

// ---- gutter figures
// ------------------------------------------------------------------------------

const char* gutter_legend() {
  return "Gutter: M memory, B bank conflicts, D divergence, W waiting; red is waste; hover for "
         "figures";
}

void prune_annotations(EditorView& v, const TextModel& m) {
  if (v.pruned_at_version == m.version()) return;
  v.pruned_at_version = m.version();
  auto same = [&](int line) { // 1-based
    size_t i = size_t(line - 1);
    return line >= 1 && i < v.described.size() && i < m.lines().size() &&
           v.described[i] == m.lines()[i];
  };
  std::erase_if(v.markers, [&](const EditorMarker& mk) { return !same(mk.line); });
  std::erase_if(v.figures, [&](const auto& f) { return !same(f.first); });
}

std::map<int, GutterFigure>
gutter_figures(const std::map<int, std::map<std::string, double>>& by_line) {
  std::map<int, GutterFigure> out;
  for (auto& [line, c] : by_line) {
    auto get = [&](const char* k) {
      auto it = c.find(k);
      return it == c.end() ? 0.0 : it->second;
    };
    GutterFigure f;
    double req = get("global_load_requests") + get("global_store_requests");
    double sec = get("global_load_sectors") + get("global_store_sectors");
    double ideal = get("global_load_ideal_sectors") + get("global_store_ideal_sectors");
    double bank = get("shared_bank_conflicts");
    double waves = get("shared_wavefronts");
    double div = get("divergent_branches");
    if (req > 0) {
      // Bytes a request needed (its sectors, were it coalesced) of the bytes it fetched.
      f.mark = 'M';
      f.text = fmt::format("{:.0f} of {:.0f} B used per request", 32 * ideal / req, 32 * sec / req);
      // More sectors than the ideal: uncoalesced. 2x the ideal is already bad.
      if (ideal > 0 && sec > ideal) f.badness = float(std::min(1.0, (sec / ideal - 1.0)));
    }
    if (bank > 0) {
      std::string b = fmt::format("{:.0f} bank conflicts", bank);
      if (f.text.empty()) f.mark = 'B';
      f.text = f.text.empty() ? b : f.text + ", " + b;
      if (waves > 0)
        f.badness = std::max(f.badness, float(std::min(1.0, 2.0 * bank / waves)));
      else
        f.badness = std::max(f.badness, 0.5f);
    }
    if (f.text.empty() && div > 0) {
      f.mark = 'D';
      f.text = fmt::format("{:.0f} divergent branches", div);
      f.badness = 0.3f;
    }
    for (auto& [k, v] : c) f.tooltip += fmt::format("{:<28} {}\n", k, count_text(v, ""));
    if (ideal > 0 && req > 0)
      f.tooltip += fmt::format("\n{:.0f} sectors moved where {:.0f} would do ({:.0f}%)", sec, ideal,
                               100.0 * ideal / std::max(1.0, sec));
    if (!f.text.empty() || !f.tooltip.empty()) out[line] = std::move(f);
  }
  return out;
}

// ---- the widget
// -----------------------------------------------------------------------------------

namespace {

// A tiny C/CUDA highlighter: enough colour to read by, no parser.
enum Tok : uint8_t {
  t_text,
  t_keyword,
  t_type,
  t_number,
  t_string,
  t_comment,
  t_preproc,
  t_builtin
};

const ImU32 kTokColor[] = {
    IM_COL32(220, 220, 220, 255), // text
    IM_COL32(197, 134, 192, 255), // keyword
    IM_COL32(78, 201, 176, 255),  // type
    IM_COL32(181, 206, 168, 255), // number
    IM_COL32(206, 145, 120, 255), // string
    IM_COL32(106, 153, 85, 255),  // comment
    IM_COL32(155, 155, 220, 255), // preprocessor, @tune
    IM_COL32(86, 156, 214, 255),  // CUDA built-ins
};

bool in_list(std::string_view w, std::initializer_list<std::string_view> l) {
  for (auto x : l)
    if (w == x) return true;
  return false;
}

Tok classify(std::string_view w) {
  if (in_list(w, {"if",
                  "else",
                  "for",
                  "while",
                  "do",
                  "return",
                  "break",
                  "continue",
                  "switch",
                  "case",
                  "default",
                  "extern",
                  "static",
                  "const",
                  "constexpr",
                  "inline",
                  "struct",
                  "template",
                  "typename",
                  "using",
                  "namespace",
                  "sizeof",
                  "goto",
                  "volatile",
                  "auto",
                  "true",
                  "false",
                  "nullptr",
                  "__global__",
                  "__device__",
                  "__host__",
                  "__shared__",
                  "__constant__",
                  "__restrict__",
                  "__forceinline__",
                  "__launch_bounds__"}))
    return t_keyword;
  if (in_list(w, {"void",           "int",     "unsigned", "float",   "double",
                  "char",           "bool",    "long",     "short",   "size_t",
                  "int8_t",         "int32_t", "int64_t",  "uint8_t", "uint32_t",
                  "uint64_t",       "float2",  "float4",   "int2",    "int4",
                  "half",           "half2",   "__half",   "__half2", "__nv_bfloat16",
                  "__nv_bfloat162", "dim3"}))
    return t_type;
  if (in_list(
          w,
          {"threadIdx",      "blockIdx",      "blockDim",    "gridDim",          "warpSize",
           "__syncthreads",  "__syncwarp",    "__shfl_sync", "__shfl_down_sync", "__shfl_xor_sync",
           "__shfl_up_sync", "__ballot_sync", "__any_sync",  "__all_sync",       "__activemask",
           "atomicAdd",      "atomicMax",     "atomicMin",   "atomicCAS",        "atomicExch",
           "__ldg",          "__expf",        "expf",        "rsqrtf",           "sqrtf",
           "fmaxf",          "fminf",         "fabsf",       "__fdividef"}))
    return t_builtin;
  return t_text;
}

struct Run {
  int a, b;
  Tok t;
};

// Tokens of one line; `in_comment` carries a /* ... */ across lines.
void tokenize(const std::string& l, bool& in_comment, std::vector<Run>& out) {
  out.clear();
  int n = int(l.size()), i = 0;
  auto push = [&](int a, int b, Tok t) {
    if (b > a) out.push_back({a, b, t});
  };
  if (in_comment) {
    size_t e = l.find("*/");
    if (e == std::string::npos) return push(0, n, t_comment);
    push(0, int(e) + 2, t_comment);
    i = int(e) + 2;
    in_comment = false;
  }
  int first = leading_spaces(l);
  if (first < n && l[size_t(first)] == '#') return push(0, n, t_preproc);
  while (i < n) {
    char c = l[size_t(i)];
    if (c == '/' && i + 1 < n && l[size_t(i + 1)] == '/') {
      Tok t = l.find("@tune", size_t(i)) != std::string::npos ? t_preproc : t_comment;
      return push(i, n, t);
    }
    if (c == '/' && i + 1 < n && l[size_t(i + 1)] == '*') {
      size_t e = l.find("*/", size_t(i + 2));
      if (e == std::string::npos) {
        in_comment = true;
        return push(i, n, t_comment);
      }
      push(i, int(e) + 2, t_comment);
      i = int(e) + 2;
      continue;
    }
    if (c == '"' || c == '\'') {
      int j = i + 1;
      while (j < n && l[size_t(j)] != c) j += l[size_t(j)] == '\\' ? 2 : 1;
      j = std::min(n, j + 1);
      push(i, j, t_string);
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(l[size_t(i + 1)])))) {
      int j = i;
      while (j < n &&
             (std::isalnum(static_cast<unsigned char>(l[size_t(j)])) || l[size_t(j)] == '.'))
        ++j;
      push(i, j, t_number);
      i = j;
      continue;
    }
    if (is_word(c)) {
      int j = i;
      while (j < n && is_word(l[size_t(j)])) ++j;
      push(i, j, classify(std::string_view(l).substr(size_t(i), size_t(j - i))));
      i = j;
      continue;
    }
    int j = i;
    while (j < n && !is_word(l[size_t(j)]) && l[size_t(j)] != '"' && l[size_t(j)] != '\'' &&
           l[size_t(j)] != '/')
      ++j;
    if (j == i) ++j;
    push(i, j, t_text);
    i = j;
  }
}

float x_of(ImFont* f, float size, const std::string& l, int col) {
  if (col <= 0) return 0;
  return f
      ->CalcTextSizeA(size, FLT_MAX, 0, l.data(),
                      l.data() + std::min<size_t>(size_t(col), l.size()))
      .x;
}

int col_at_x(ImFont* f, float size, const std::string& l, float x) {
  int col = 0;
  float at = 0;
  while (col < int(l.size())) {
    int nx = next_char(l, col);
    float w = f->CalcTextSizeA(size, FLT_MAX, 0, l.data() + col, l.data() + nx).x;
    if (x < at + w * 0.5f) return col;
    at += w;
    col = nx;
  }
  return int(l.size());
}

bool key(ImGuiKey k, bool repeat = true) {
  return ImGui::IsKeyPressed(ImGui::GetKeyIndex(k), repeat);
}
// Letters not in ImGuiKey_ (1.86): GLFW numbers keys by their ASCII capital.
bool letter(char c) {
  return ImGui::IsKeyPressed(c, true);
}

ImU32 badness_color(float b) {
  b = std::clamp(b, 0.f, 1.f);
  // green -> amber -> red
  float r = b < 0.5f ? 0.45f + b * 1.1f : 1.0f;
  float g = b < 0.5f ? 0.85f : 0.85f - (b - 0.5f) * 1.3f;
  return ImGui::GetColorU32(ImVec4(r, g, 0.35f, 1.0f));
}

const ImU32 kSevColor[] = {IM_COL32(240, 80, 70, 255), IM_COL32(235, 180, 60, 255),
                           IM_COL32(90, 160, 240, 255)};

} // namespace

EditorFrame draw_editor(const char* id, TextModel& m, EditorView& v) {
  EditorFrame fr;
  ImGuiIO& io = ImGui::GetIO();
  ImFont* font = v.font ? v.font : ImGui::GetFont();
  float fsize = font->FontSize;
  float line_h = std::floor(fsize * 1.3f);
  float char_w = font->CalcTextSizeA(fsize, FLT_MAX, 0, "M").x;
  const auto& lines = m.lines();
  int n = m.line_count();

  // Gutter: markers, line numbers, per-line figures.
  int digits = std::max(3, int(std::log10(std::max(1, n))) + 1);
  float marker_w = char_w * 2;
  float numbers_w = char_w * float(digits + 1);
  float figures_w = v.figures.empty() ? 0 : char_w * 2; // one letter; the figure on hover
  float gutter_w = marker_w + numbers_w + figures_w + char_w;

  if (v.goto_line > 0) ImGui::SetNextWindowFocus();
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(30, 30, 34, 255));
  ImGui::BeginChild(id, ImVec2(0, 0), false,
                    ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoMove |
                        ImGuiWindowFlags_NoNavInputs);
  ImGui::PopStyleColor();
  ImGui::PushFont(font);
  ImGuiWindow* win = ImGui::GetCurrentWindow();
  bool focused = ImGui::IsWindowFocused();
  ImVec2 win_pos = ImGui::GetWindowPos();
  ImVec2 win_size = ImGui::GetWindowSize();
  float scroll_x = ImGui::GetScrollX(), scroll_y = ImGui::GetScrollY();
  float view_h = win_size.y - (win->ScrollbarX ? ImGui::GetStyle().ScrollbarSize : 0);

  // The whole text area is one invisible button: it takes clicks and drags and keeps the item
  // active while a selection is dragged.
  float max_w = 0;
  int first = std::max(0, int(scroll_y / line_h));
  int last = std::min(n - 1, first + int(view_h / line_h) + 1);
  for (int i = first; i <= last; ++i)
    max_w = std::max(max_w, x_of(font, fsize, lines[size_t(i)], int(lines[size_t(i)].size())));
  float inner_w = win_size.x - (win->ScrollbarY ? ImGui::GetStyle().ScrollbarSize : 0);
  // Wider than the window only when a line is: no horizontal scrollbar otherwise.
  float content_w = std::max(gutter_w + max_w + char_w * 4, inner_w);
  float content_h = float(n) * line_h;
  if (content_h > view_h) content_h += view_h * 0.5f; // the last line may scroll up to the middle
  ImGui::SetCursorPos(ImVec2(0, 0));
  ImGui::InvisibleButton("##text", ImVec2(content_w, content_h));
  bool hovered = ImGui::IsItemHovered();
  bool active = ImGui::IsItemActive();
  ImVec2 origin(win_pos.x + gutter_w - scroll_x, win_pos.y - scroll_y); // top-left of line 0's text
  v.origin_x = origin.x;
  v.gutter_w = gutter_w;
  v.origin_y = origin.y;
  v.line_height = line_h;
  v.char_w = char_w;
  v.first_visible = first;
  v.last_visible = last;

  auto pos_at = [&](ImVec2 p) {
    int line = std::clamp(int(std::floor((p.y - origin.y) / line_h)), 0, n - 1);
    return TextPos{line, col_at_x(font, fsize, lines[size_t(line)], p.x - origin.x)};
  };
  bool moved = false;
  bool in_gutter = io.MousePos.x < win_pos.x + gutter_w;
  if (hovered && !in_gutter && ImGui::IsMouseClicked(0)) {
    TextPos p = pos_at(io.MousePos);
    if (ImGui::IsMouseDoubleClicked(0))
      m.select_word_at(p);
    else
      m.set_cursor(p, io.KeyShift);
  } else if (active && !in_gutter && ImGui::IsMouseDragging(0, 1.0f) &&
             !ImGui::IsMouseDoubleClicked(0)) {
    m.set_cursor(pos_at(io.MousePos), true);
    moved = true;
  }
  if (hovered && !in_gutter) ImGui::SetMouseCursor(ImGuiMouseCursor_TextInput);

  if (v.goto_line > 0) {
    m.set_cursor(m.from_diagnostic(v.goto_line, v.goto_column));
    float y = float(m.cursor().line) * line_h;
    ImGui::SetScrollY(std::max(0.f, y - view_h * 0.35f));
    v.goto_line = v.goto_column = 0;
    focused = true;
  }

  // Keys, while the editor has focus.
  if (focused) {
    bool shift = io.KeyShift, ctrl = io.KeyCtrl;
    uint64_t before = m.version();
    TextPos cur_before = m.cursor();
    int page = std::max(1, int(view_h / line_h) - 1);
    if (ctrl && (key(ImGuiKey_Enter) || key(ImGuiKey_KeyPadEnter)))
      fr.run_requested = true;
    else if (ctrl && letter('S'))
      fr.save_requested = true;
    else if (ctrl && !shift && key(ImGuiKey_Z))
      m.undo();
    else if (ctrl && (key(ImGuiKey_Y) || (shift && key(ImGuiKey_Z))))
      m.redo();
    else if (ctrl && key(ImGuiKey_A))
      m.select_all();
    else if (ctrl && key(ImGuiKey_C)) {
      if (m.has_selection()) ImGui::SetClipboardText(m.selected_text().c_str());
    } else if (ctrl && key(ImGuiKey_X)) {
      if (!v.read_only && m.has_selection()) ImGui::SetClipboardText(m.cut().c_str());
    } else if (ctrl && key(ImGuiKey_V)) {
      if (!v.read_only)
        if (const char* c = ImGui::GetClipboardText()) m.paste(c);
    } else if (key(ImGuiKey_LeftArrow))
      m.move_left(shift, ctrl);
    else if (key(ImGuiKey_RightArrow))
      m.move_right(shift, ctrl);
    else if (key(ImGuiKey_UpArrow))
      m.move_up(shift);
    else if (key(ImGuiKey_DownArrow))
      m.move_down(shift);
    else if (key(ImGuiKey_PageUp))
      m.move_up(shift, page);
    else if (key(ImGuiKey_PageDown))
      m.move_down(shift, page);
    else if (key(ImGuiKey_Home))
      ctrl ? m.move_to_start(shift) : m.move_home(shift);
    else if (key(ImGuiKey_End))
      ctrl ? m.move_to_end(shift) : m.move_end(shift);
    else if (!v.read_only) {
      if (key(ImGuiKey_Enter) || key(ImGuiKey_KeyPadEnter))
        m.newline();
      else if (key(ImGuiKey_Backspace))
        m.backspace();
      else if (key(ImGuiKey_Delete))
        m.del();
      else if (key(ImGuiKey_Tab))
        shift ? m.untab(v.tab_width) : m.tab(v.tab_width);
    }
    if (!v.read_only && !ctrl && !io.KeyAlt) {
      std::string typed;
      for (ImWchar c : io.InputQueueCharacters) {
        if (c < 32 || c == 127) continue; // Enter and Tab come as keys
        char buf[5] = {};
        typed += ImTextCharToUtf8(buf, c);
      }
      if (!typed.empty()) m.type(typed);
    }
    io.InputQueueCharacters.resize(0);
    fr.changed = m.version() != before;
    moved = moved || fr.changed || m.cursor() != cur_before;
  }

  // Keep the cursor in view after keyboard moves.
  if (moved) {
    TextPos c = m.cursor();
    float cy = float(c.line) * line_h;
    if (cy < scroll_y)
      ImGui::SetScrollY(cy);
    else if (cy + line_h > scroll_y + view_h)
      ImGui::SetScrollY(cy + line_h - view_h);
    float cx = x_of(font, fsize, lines[size_t(c.line)], c.col);
    float text_w = win_size.x - gutter_w;
    if (cx < scroll_x)
      ImGui::SetScrollX(std::max(0.f, cx - char_w * 4));
    else if (cx > scroll_x + text_w - char_w * 2)
      ImGui::SetScrollX(cx - text_w + char_w * 6);
  }

  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 clip_a(win_pos.x + gutter_w, win_pos.y),
      clip_b(win_pos.x + win_size.x, win_pos.y + win_size.y);

  // Which lines carry markers (first marker per line wins the icon; all go in the tooltip).
  std::map<int, std::vector<const EditorMarker*>> by_line;
  for (auto& mk : v.markers) by_line[m.from_diagnostic(mk.line, mk.column).line].push_back(&mk);

  // Block-comment state up to the first visible line.
  bool in_comment = false;
  std::vector<Run> runs;
  for (int i = 0; i < first; ++i) tokenize(lines[size_t(i)], in_comment, runs);

  TextPos sa = std::min(m.cursor(), m.anchor()), sb = std::max(m.cursor(), m.anchor());
  dl->PushClipRect(clip_a, clip_b, true);
  for (int i = first; i <= last; ++i) {
    const std::string& l = lines[size_t(i)];
    float y = origin.y + float(i) * line_h;
    float ty = y + (line_h - fsize) * 0.5f;
    if (auto it = by_line.find(i); it != by_line.end()) {
      int sev = 2;
      for (auto* mk : it->second) sev = std::min(sev, mk->severity);
      ImU32 bg = sev == 0   ? IM_COL32(120, 30, 30, 70)
                 : sev == 1 ? IM_COL32(120, 100, 20, 60)
                            : IM_COL32(30, 60, 120, 50);
      dl->AddRectFilled(ImVec2(clip_a.x, y), ImVec2(clip_b.x, y + line_h), bg);
    } else if (i == m.cursor().line && !m.has_selection()) {
      dl->AddRectFilled(ImVec2(clip_a.x, y), ImVec2(clip_b.x, y + line_h),
                        IM_COL32(255, 255, 255, 10));
    }
    if (m.has_selection() && i >= sa.line && i <= sb.line) {
      float xa = i == sa.line ? x_of(font, fsize, l, sa.col) : 0;
      float xb = i == sb.line ? x_of(font, fsize, l, sb.col)
                              : x_of(font, fsize, l, int(l.size())) + char_w * 0.5f;
      dl->AddRectFilled(ImVec2(origin.x + xa, y), ImVec2(origin.x + xb, y + line_h),
                        IM_COL32(60, 100, 170, 130));
    }
    tokenize(l, in_comment, runs);
    float x = origin.x;
    for (auto& r : runs) {
      const char* a = l.data() + r.a;
      const char* b = l.data() + r.b;
      dl->AddText(font, fsize, ImVec2(x, ty), kTokColor[r.t], a, b);
      x += font->CalcTextSizeA(fsize, FLT_MAX, 0, a, b).x;
    }
    // Squiggles under the marked column's word.
    if (auto it = by_line.find(i); it != by_line.end())
      for (auto* mk : it->second) {
        TextPos p = m.from_diagnostic(mk->line, mk->column);
        int e = p.col;
        while (e < int(l.size()) && is_word(l[size_t(e)])) ++e;
        if (e == p.col) e = std::min(int(l.size()), p.col + 1);
        float xa = origin.x + x_of(font, fsize, l, p.col), xb = origin.x + x_of(font, fsize, l, e);
        if (xb <= xa) xb = xa + char_w;
        float wy = y + line_h - 2;
        for (float sx = xa; sx < xb; sx += 4)
          dl->AddLine(ImVec2(sx, wy), ImVec2(std::min(sx + 2, xb), wy - 2), kSevColor[mk->severity],
                      1.0f),
              dl->AddLine(ImVec2(std::min(sx + 2, xb), wy - 2), ImVec2(std::min(sx + 4, xb), wy),
                          kSevColor[mk->severity], 1.0f);
      }
  }
  // The caret, blinking while focused.
  if (focused) {
    TextPos c = m.cursor();
    if (c.line >= first && c.line <= last && std::fmod(ImGui::GetTime(), 1.0) < 0.6) {
      float cx = origin.x + x_of(font, fsize, lines[size_t(c.line)], c.col);
      float cy = origin.y + float(c.line) * line_h;
      dl->AddRectFilled(ImVec2(cx, cy + 1), ImVec2(cx + 2, cy + line_h - 1),
                        IM_COL32(255, 255, 255, 230));
    }
  }
  dl->PopClipRect();

  // The gutter, fixed while the text scrolls sideways.
  ImVec2 ga(win_pos.x, win_pos.y), gb(win_pos.x + gutter_w - char_w * 0.5f, win_pos.y + win_size.y);
  dl->PushClipRect(ga, ImVec2(gb.x, gb.y), true);
  dl->AddRectFilled(ga, gb, IM_COL32(38, 38, 44, 255));
  v.hovered_marker_line = 0;
  for (int i = first; i <= last; ++i) {
    float y = origin.y + float(i) * line_h;
    float ty = y + (line_h - fsize) * 0.5f;
    std::string num = std::to_string(i + 1);
    float nw = font->CalcTextSizeA(fsize, FLT_MAX, 0, num.c_str()).x;
    ImU32 ncol = i == m.cursor().line ? IM_COL32(220, 220, 220, 255) : IM_COL32(120, 120, 130, 255);
    dl->AddText(font, fsize, ImVec2(win_pos.x + marker_w + numbers_w - nw - char_w * 0.5f, ty),
                ncol, num.c_str());
    if (auto it = by_line.find(i); it != by_line.end()) {
      int sev = 2;
      for (auto* mk : it->second) sev = std::min(sev, mk->severity);
      ImVec2 c(win_pos.x + marker_w * 0.5f, y + line_h * 0.5f);
      float r = line_h * 0.3f;
      if (sev == 0)
        dl->AddCircleFilled(c, r, kSevColor[0]);
      else
        dl->AddTriangleFilled(ImVec2(c.x, c.y - r), ImVec2(c.x + r, c.y + r),
                              ImVec2(c.x - r, c.y + r), kSevColor[sev]);
      ImVec2 ha(win_pos.x, y), hb(win_pos.x + marker_w + numbers_w, y + line_h);
      if (ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) &&
          ImGui::IsMouseHoveringRect(ha, hb)) {
        v.hovered_marker_line = i + 1;
        // Identical messages once (cases are grouped when the markers are made); a capped width.
        ImGui::BeginTooltip();
        std::vector<std::string> said;
        for (auto* mk : it->second) {
          std::string t = fmt::format("{}:{}: {}: {}", mk->line, mk->column,
                                      mk->severity == 0   ? "error"
                                      : mk->severity == 1 ? "warning"
                                                          : "note",
                                      mk->message);
          if (std::find(said.begin(), said.end(), t) != said.end()) continue;
          said.push_back(t);
          text_wrap(t, ImGui::GetFontSize() * 36);
        }
        ImGui::TextDisabled("click to go there");
        ImGui::EndTooltip();
        if (ImGui::IsMouseClicked(0)) {
          m.set_cursor(m.from_diagnostic(it->second.front()->line, it->second.front()->column));
          ImGui::SetWindowFocus();
        }
      }
    }
    if (auto it = v.figures.find(i + 1); it != v.figures.end()) {
      // A letter on a chip coloured by how wasteful the line is; the figures on hover.
      const GutterFigure& f = it->second;
      float fx = win_pos.x + marker_w + numbers_w;
      ImVec2 ca(fx, y + line_h * 0.12f), cb(fx + char_w * 1.6f, y + line_h * 0.88f);
      dl->AddRectFilled(ca, cb, badness_color(f.badness), line_h * 0.2f);
      char mark[2] = {f.mark, 0};
      float mw = font->CalcTextSizeA(fsize * 0.8f, FLT_MAX, 0, mark).x;
      dl->AddText(font, fsize * 0.8f, ImVec2((ca.x + cb.x - mw) * 0.5f, ty + fsize * 0.1f),
                  IM_COL32(20, 20, 24, 255), mark);
      ImVec2 ha(fx, y), hb(fx + figures_w, y + line_h);
      if (ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) &&
          ImGui::IsMouseHoveringRect(ha, hb)) {
        ImGui::BeginTooltip();
        ImGui::TextUnformatted(fmt::format("line {} on the simulator: {}", i + 1, f.text).c_str());
        if (!f.tooltip.empty()) ImGui::TextUnformatted(f.tooltip.c_str());
        ImGui::EndTooltip();
      }
    }
  }
  dl->PopClipRect();

  ImGui::PopFont();
  ImGui::EndChild();
  ImGui::PopStyleVar();
  return fr;
}

} // namespace wb::gui
