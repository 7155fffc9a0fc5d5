// The window's state: small structs, one per pane, held by App. Views (view_*.cpp) draw from them;
// session.cpp holds the actions (open, run, save, runner events) that views and scripts call.
#pragma once
#include "core/catalog.hpp"
#include "core/chart.hpp"
#include "core/report.hpp"
#include "core/runner.hpp"
#include "core/store.hpp"
#include "core/sweep.hpp"
#include "core/tune.hpp"
#include "core/workspace.hpp"
#include "editor.hpp"
#include "markdown.hpp"
#include "roofline_view.hpp"
#include "settings.hpp"
#include "text.hpp"
#include "textures.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace wb::gui {

struct Fonts {
  ImFont* ui = nullptr;
  ImFont* bold = nullptr;
  ImFont* italic = nullptr;
  ImFont* mono = nullptr;
  ImFont* small = nullptr; // the roofline's labels: more of them fit a small pane
  ImFont* h1 = nullptr;
  ImFont* h2 = nullptr;
  ImFont* h3 = nullptr;
  bool packaged = false; // DejaVu found (else ImGui's built-in font everywhere)
  std::string sans_path, mono_path;
  MdFonts md() const { return {ui, bold, italic, mono, h1, h2, h3}; }
};

// A learner's standing on one puzzle, from the store.
struct PuzzleProgress {
  int attempts = 0;
  bool passed = false;
  std::string medal;            // best medal: earned on a GPU, else predicted on the simulator
  bool medal_predicted = false; // a prediction, not a medal
  double best_sol = 0;
};

struct LessonState {
  const Lesson* lesson = nullptr;
  MdDoc doc;
  MdView view;
};

struct PuzzleState {
  const Puzzle* puzzle = nullptr;
  MdDoc statement;
  MdView statement_view;
  std::vector<std::string> hints; // hints.md's "## N" sections, in order
  std::vector<MdDoc> hint_docs;
  MdView hints_view;
  int hints_shown = 0;
  bool solution_shown = false;
  std::string solution; // text, read when shown
  bool confirm_solution = false;
  bool confirm_reset = false;
  // The learner's file.
  TextModel text;
  EditorView editor;
  WatchedFile file;
  uint64_t synced_version = 0;   // the text version that is on disk
  double last_edit = 0;          // when the text last changed (s)
  double first_unsaved_edit = 0; // when the oldest edit not yet on disk was made (0: none)
  double next_disk_check = 0;
  bool conflict = false; // changed on disk and here: the learner chooses
  std::string save_error;
  double saved_at = 0;
  bool focus_editor = false;
};

// The request in flight, if any.
struct RunState {
  uint64_t id = 0;
  runner::Op op = runner::Op::check;
  bool reference = false; // a check of the puzzle's solution, for the roofline's reference point
  std::string puzzle, source, file;
  std::string phase;
  int done = 0, total = 0;
  double started = 0;
  bool cancelling = false;
  bool acknowledged = false; // the runner has reported on it (a progress or case event)
  // The request as sent, and how often it was sent again after its runner died: a learner's
  // request goes once more to a fresh runner; a second death is reported.
  runner::Request request;
  double timeout = 0;
  int resends = 0;
  std::string cache_key; // a reference check: its key in the store's cache of reference runs
};

struct ResultsState {
  std::optional<CheckReport> report;
  std::optional<TuneReport> tune;   // the Tune button's ranked table
  std::optional<SweepReport> sweep; // the Sweep button's chart
  std::string error;                // the runner could not answer
  bool runner_died = false;
  bool cancelled = false;
  bool compile_only = false;
  int64_t attempt = 0;         // the store row it came from / went to
  int attempt_number = 0;      // the learner's own checks of this puzzle's file, this one included
  bool solution_check = false; // the solution's check (the roofline's reference), not the learner's
  bool stale = false;          // a newer run of the learner's is in progress: this is the previous
  std::optional<CheckReport> incoming; // that run's cases while they all pass (shown on a failure)
  std::string when;                    // "just now", or an earlier attempt's time
  int selected_case = -1;
  double elapsed_ms = 0;
  int results_seq = 0; // bumped on every answer (scripts wait on it)
  // The report being filled in case by case while the check runs; the final answer replaces it.
  bool partial = false;
  int cases_total = 0;
};

struct DeviceState {
  bool hello = false;
  std::string version;
  std::vector<runner::BackendStatus> backends;
  std::string exit_note; // why the last runner ended
  double exit_at = 0;
  int runner_starts = 0;
  uint64_t probe_id = 0;
  std::string probe_error, probe_phase;
  std::vector<runner::ProbeFigure> probe;
  std::vector<MeasuredCeiling> measured; // the store's, for the device in use
  // The device that checks run on: the backend chosen in the settings, as the runner sees it.
  const runner::BackendStatus* active() const;
};

struct RoofState {
  RoofPanel panel;
  std::string for_puzzle;
  bool dirty = true;
  std::vector<ChartPoint> bench_points; // synthetic history for the benchmark
  ImVec4 pane;                          // the pane's rectangle last frame (x0, y0, x1, y1)
};

// Screen rectangles of named buttons, for scripted clicks ("run" -> its rect last frame).
struct Marks {
  std::map<std::string, ImVec4> rects;
  void add(const std::string& name);
};

struct App {
  // Where things are.
  std::string catalog_arg; // as given on the command line
  std::string data_dir;
  fs::path settings_path;
  Catalog catalog;
  Settings settings;
  Settings saved_settings; // what is on disk, to save only on change
  std::unique_ptr<Store> store;
  std::string store_error;
  std::unique_ptr<Workspace> workspace;
  std::unique_ptr<runner::Client> runner;
  Fonts fonts;
  float scale = 1;
  TextureCache textures;

  // What is open.
  LessonState lesson;
  PuzzleState puzzle;
  ResultsState results;
  RoofState roof;
  DeviceState device;
  std::optional<RunState> run;
  std::optional<RunState> queued_reference; // sent when the runner is idle
  std::set<std::string> reference_tried;    // reference cache keys checked (or queued) here
  std::set<uint64_t> superseded; // learner's requests cancelled by a second Run, not yet answered
  int runs_superseded = 0;       // of which the runner confirmed the cancel
  int stale_frames = 0;          // frames that drew a previous result dimmed (scripts check it)
  std::map<std::string, PuzzleProgress> progress;
  std::map<std::string, bool> lessons_read;
  std::vector<std::string> log;     // runner log lines, newest last
  std::vector<std::string> notices; // one-line messages at the status bar
  Marks marks;

  std::optional<float> lesson_scroll_to; // pixels, next frame
  int reading_tab_request = -1;          // select this tab of the reading column next frame
  double now = 0;                        // seconds, steady clock
  double next_settings_save = 0;
  int frame = 0;
  int draw_vertices = 0, draw_commands = 0; // the last frame's draw lists
  double build_ms = 0, render_ms = 0; // the last frame: ImGui's work, then OpenGL's and the swap
  bool quit = false;
  bool show_log = false;
  bool show_settings = false;
  bool show_about = false;
};

// ---- fonts.cpp
// Every character (code point >= 0x80) in the catalog's lessons/ and puzzles/ files.
std::set<unsigned> catalog_characters(const fs::path& root);
// The glyphs the fonts are baked with: the usual ranges and catalog_characters (kept alive).
const ImWchar* text_glyph_ranges(const fs::path& catalog_root);
// DejaVu at the sizes the views use (ImGui's own font when DejaVu is not found).
void load_fonts(App& app, float scale);

// ---- session.cpp: actions
// ------------------------------------------------------------------------- Loads settings, catalog
// and store, starts the runner; never slow (first frame within 1 s).
void init_app(App& app, const std::string& catalog, const std::string& data_dir);
void shutdown_app(App& app);     // saves the file and the settings
void tick(App& app, double now); // runner events, autosave, watching the file
void open_puzzle(App& app, const std::string& id);
void open_lesson(App& app, const std::string& id);
void open_link(App& app, const std::string& url);
void run_check(App& app);   // save, then check the learner's file
void run_compile(App& app); // save, then compile only
void run_tune(App& app);    // save, then try every combination of the tunables
void run_sweep(App& app);   // save, then run the kernel across sizes
void apply_tunables(App& app, const TuneConfig& config); // @tune lines into the editor (undoable)
void cancel_run(App& app);
void measure_ceilings(App& app);
bool save_now(App& app); // writes the learner's file if it changed
void keep_mine(App& app);
void take_disk(App& app);
void reset_to_starter(App& app);
void reveal_hint(App& app);
void show_solution(App& app);
void show_attempt(App& app, int64_t attempt_id); // an earlier attempt's report in Results
void refresh_progress(App& app);
void apply_runner_settings(App& app);
std::string runner_state_text(const App& app);
std::string verdict_title(const std::string& verdict);

// ---- the views (one file each)
// ----------------------------------------------------------------------
void draw(App& app); // the whole window: a list of calls
void draw_menu(App& app);
void draw_catalog(App& app);
// Puzzles in the order the catalog lists them (each lesson's, then the rest), and a step along it.
std::vector<const Puzzle*> catalog_order(const Catalog& c);
void open_next_puzzle(App& app, int step);
void draw_reading(App& app); // lesson and puzzle tabs
void draw_lesson(App& app);
void draw_puzzle(App& app);
void draw_editor_pane(App& app);
void draw_results(App& app);
void draw_tune_results(App& app);  // view_tune.cpp: the table, Results pane
void draw_sweep_results(App& app); // view_tune.cpp: the chart, Results pane
void draw_roofline(App& app);
void draw_device(App& app);
void draw_status_bar(App& app);
void draw_dialogs(App& app);

// Colours for verdicts and medals, shared by the views.
ImVec4 verdict_color(Verdict v);
ImU32 medal_color(const std::string& medal);

} // namespace wb::gui
