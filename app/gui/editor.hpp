// The kernel editor: a text model (lines, cursor, selection, undo) with no UI, and an ImGui widget
// that draws it with line numbers, diagnostics markers and the simulator's per-line counters.
// The model is separate so the headless tests can drive it without a window.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

struct ImFont;

namespace wb::gui {

struct TextPos {
  int line = 0; // 0-based
  int col = 0;  // byte offset in the line (always at a UTF-8 character boundary)
  auto operator<=>(const TextPos&) const = default;
};

struct EditorMarker {
  int line = 1;     // 1-based, as diagnostics count
  int column = 0;   // 1-based; 0: the whole line
  int severity = 0; // 0 error, 1 warning, 2 note
  std::string message;
};

class TextModel {
public:
  TextModel() : lines_{""} {}

  // Replaces everything and forgets the undo history (a freshly opened file).
  void set_text(std::string_view text);
  // Replaces everything as one undoable edit (a reload of a file changed elsewhere).
  void replace_all(std::string_view text);
  std::string text() const;
  const std::vector<std::string>& lines() const { return lines_; }
  int line_count() const { return int(lines_.size()); }
  // Bumped by every change of the text: autosave and "is it dirty" compare it.
  uint64_t version() const { return version_; }

  TextPos cursor() const { return cursor_; }
  TextPos anchor() const { return anchor_; }
  bool has_selection() const { return cursor_ != anchor_; }
  std::string selected_text() const;
  void set_cursor(TextPos p, bool extend_selection = false);
  void select(TextPos a, TextPos b);
  void select_all();
  void select_word_at(TextPos p);
  TextPos clamp(TextPos p) const;

  // Editing at the cursor; each replaces the selection. Typing coalesces into one undo step
  // until the cursor moves or a different kind of edit happens.
  void type(std::string_view chars);
  void newline(); // keeps the current line's indentation
  void backspace();
  void del();
  // Tab: spaces to the next tab stop, or with a multi-line selection indents every line in it.
  void tab(int width);
  void untab(int width);
  void paste(std::string_view s);
  std::string cut();

  // Moves; `extend` keeps the anchor (Shift).
  void move_left(bool extend, bool word = false);
  void move_right(bool extend, bool word = false);
  void move_up(bool extend, int n = 1);
  void move_down(bool extend, int n = 1);
  void move_home(bool extend); // first non-blank, then column 0
  void move_end(bool extend);
  void move_to_start(bool extend);
  void move_to_end(bool extend);

  bool undo();
  bool redo();
  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }

  // Where a 1-based (line, column) of a diagnostic lands in the text, clamped to what exists:
  // markers from a compile of an older version still point somewhere sensible.
  TextPos from_diagnostic(int line, int column) const;

private:
  struct Edit {
    TextPos start;
    std::string removed, inserted;
    TextPos cursor_before, anchor_before, cursor_after, anchor_after;
    int kind = 0; // 1 typing (coalesces), 2 backspace, 3 delete, 0 other
  };
  TextPos insert_at(TextPos p, std::string_view s); // returns the end
  std::string erase(TextPos a, TextPos b);
  TextPos end_of(TextPos start, std::string_view inserted) const;
  void apply(TextPos a, TextPos b, std::string_view with, int kind, TextPos new_cursor,
             bool place_cursor_at_end);
  void replace_selection(std::string_view with, int kind);
  void break_coalescing() { coalesce_ = false; }

  std::vector<std::string> lines_;
  TextPos cursor_, anchor_;
  int preferred_x_ = -1; // column kept while moving up and down
  std::vector<Edit> undo_, redo_;
  bool coalesce_ = false;
  bool last_typed_word_ = false;
  uint64_t version_ = 0;
};

// Per-line figures for the gutter, from a check's counters.by_line.
struct GutterFigure {
  char mark = 'M';     // the gutter's letter: gutter_legend() says what each means
  std::string text;    // the figure, on hover: "60 of 473 B per request"
  std::string tooltip; // every counter of the line
  float badness = 0;   // 0 fine .. 1 bad: colours the mark
};
// What the gutter's letters mean, for a legend under the editor.
const char* gutter_legend();

// Builds the gutter figures from the simulator's per-line counters: sectors per request
// against the ideal, bank conflicts, divergent branches.
std::map<int, GutterFigure>
gutter_figures(const std::map<int, std::map<std::string, double>>& by_line);

struct EditorFrame {
  bool run_requested = false;  // Ctrl+Enter
  bool save_requested = false; // Ctrl+S
  bool changed = false;        // the text changed this frame
};

struct EditorView {
  std::vector<EditorMarker> markers;
  std::map<int, GutterFigure> figures; // by 1-based line
  int tab_width = 4;
  bool read_only = false;
  ImFont* font = nullptr;
  // Ask the widget to show this 1-based line (and put the cursor at its column) next frame.
  int goto_line = 0, goto_column = 0;
  // Filled while drawing, for tests and scripts: where the text area starts, the line height.
  float origin_x = 0, origin_y = 0, line_height = 0, char_w = 0, gutter_w = 0;
  int first_visible = 0, last_visible = 0;
  int hovered_marker_line = 0;
  // The lines of the source that markers and figures describe: where the editor's text no longer
  // has that line, they are dropped (prune_annotations), so a newly loaded file shows none.
  std::vector<std::string> described;
  uint64_t pruned_at_version = 0;
};

// Drops the markers and figures of lines whose text differs from the source they describe.
void prune_annotations(EditorView& v, const TextModel& m);

// Draws the editor filling the available region. Reads keys only while it has focus.
EditorFrame draw_editor(const char* id, TextModel& model, EditorView& view);

} // namespace wb::gui
