// What the window does, as opposed to how it looks: opening lessons and puzzles, keeping the
// learner's file on disk, talking to the runner, recording attempts. Views and the script mode
// call these; none of them blocks on compile or run work (that is the runner's).
#include "app.hpp"
#include "gui.hpp"

#include "core/progress.hpp"
#include "core/roofline.hpp"

#include <algorithm>
#include <csignal>
#include <fmt/format.h>
#include <spawn.h>

extern char** environ;

namespace wb::gui {

namespace {

std::string read_or_empty(const fs::path& p) {
  auto t = read_file(p);
  return t ? *t : std::string();
}

// hints.md: "## 1", "## 2", ... sections, in order; text before the first is ignored.
std::vector<std::string> split_hints(const std::string& md) {
  std::vector<std::string> out;
  size_t pos = 0;
  bool in = false;
  std::string cur;
  while (pos <= md.size()) {
    size_t nl = md.find('\n', pos);
    if (nl == std::string::npos) nl = md.size();
    std::string line = md.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.rfind("## ", 0) == 0) {
      if (in) out.push_back(cur);
      cur.clear();
      in = true;
      continue;
    }
    if (in) cur += line + "\n";
  }
  if (in) out.push_back(cur);
  for (auto& h : out) {
    while (!h.empty() && (h.back() == '\n' || h.back() == ' ')) h.pop_back();
    while (!h.empty() && h.front() == '\n') h.erase(h.begin());
  }
  return out;
}

std::string workspace_name(const Puzzle& p) {
  return "workspace/" + p.id + ".cu";
}
std::string solution_name(const Puzzle& p) {
  return "solutions/" + p.id + ".cu";
}
bool is_solution_file(const std::string& f) {
  return f.rfind("solutions/", 0) == 0;
}

void note(App& app, std::string text) {
  app.notices.push_back(std::move(text));
  if (app.notices.size() > 50) app.notices.erase(app.notices.begin());
}

void set_note(App& app, const std::string& key, const std::string& value) {
  if (!app.store) return;
  try {
    app.store->set_note(key, value);
  } catch (const std::exception& e) {
    app.store_error = e.what();
  }
}

// Markers and gutter figures for the editor from a report.
// `source` is the text that was checked: markers and figures stay only beside lines that still
// read the same (prune_annotations).
void apply_report_to_editor(App& app, const CheckReport& r, const std::string& source) {
  PuzzleState& ps = app.puzzle;
  ps.editor.markers.clear();
  TextModel checked;
  checked.set_text(source);
  ps.editor.described = checked.lines();
  ps.editor.pruned_at_version = 0;
  for (auto& d : r.diagnostics)
    ps.editor.markers.push_back({std::max(1, d.line), d.column, int(d.severity), d.message});
  // One marker per line and message, naming every case that hit it ("cases n=1, 7: ...").
  struct Fault {
    int line;
    std::string what;
    std::vector<std::string> cases;
  };
  std::vector<Fault> faults;
  for (auto& c : r.cases) {
    if (!c.fault || c.fault.source_line <= 0) continue;
    std::string what = fmt::format("{}: {}", fault_name(c.fault.kind), c.fault.message);
    auto it = std::find_if(faults.begin(), faults.end(), [&](const Fault& f) {
      return f.line == c.fault.source_line && f.what == what;
    });
    if (it == faults.end()) it = faults.insert(faults.end(), {c.fault.source_line, what, {}});
    it->cases.push_back(c.label);
  }
  for (auto& f : faults) {
    std::string cases;
    for (auto& l : f.cases) cases += (cases.empty() ? "" : ", ") + l;
    ps.editor.markers.push_back(
        {f.line, 0, 0,
         fmt::format("{} {}: {}", f.cases.size() == 1 ? "case" : "cases", cases, f.what)});
  }
  // Per-line counters: the [sim_perf] run when there was one, else the last case that ran.
  const Counters* counters = nullptr;
  if (r.sim_perf && !r.sim_perf->counters.by_line.empty())
    counters = &r.sim_perf->counters;
  else
    for (auto it = r.cases.rbegin(); it != r.cases.rend(); ++it)
      if (!it->counters.by_line.empty()) {
        counters = &it->counters;
        break;
      }
  ps.editor.figures = counters && app.settings.gutter_counters ? gutter_figures(counters->by_line)
                                                               : std::map<int, GutterFigure>{};
  // The performance model's notes for a line go in its tooltip ("uses 4 of 32 B fetched; 100% of
  // the waiting"), and a line it blames gets a figure even where the counters had none.
  if (r.prediction && r.prediction->ok && app.settings.gutter_counters)
    for (auto& n : r.prediction->lines) {
      GutterFigure& f = ps.editor.figures[n.line];
      if (n.requests > 0 && n.bytes_fetched > 0) {
        // Bytes the lanes asked for of the bytes the sectors brought, per request.
        f.mark = 'M';
        f.text = fmt::format("{:.0f} of {:.0f} B used per request", n.bytes_used / n.requests,
                             n.bytes_fetched / n.requests);
        f.badness =
            std::max(f.badness, float(std::clamp(1 - n.bytes_used / n.bytes_fetched, 0.0, 1.0)));
      } else if (f.text.empty()) {
        f.mark = 'W';
        f.text = fmt::format("{:.0f}% of the waiting", 100 * n.share);
      }
      f.badness = std::max(f.badness, float(std::min(1.0, n.share)));
      f.tooltip += (f.tooltip.empty() ? "" : "\n") + std::string("predicted: ") + n.text;
    }
}

void send_hello_if_needed(App& app) {
  if (app.runner->running()) return;
  runner::Request h;
  h.op = runner::Op::hello;
  app.runner->send(h, 60);
}

uint64_t send(App& app, runner::Request r, double timeout) {
  send_hello_if_needed(app);
  return app.runner->send(std::move(r), timeout);
}

// The solution's check uses a fixed seed, so that its figures can be kept by it.
constexpr uint64_t kReferenceSeed = 1;
// A cancel with the learner's request queued behind it: the runner stops within milliseconds,
// except inside a compile, which cannot be interrupted; a kill would fail the learner's request.
constexpr double kQueuedCancelGrace = 30;

// 64-bit FNV-1a: a file's content hash that stays the same across builds and runs.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Where the store keeps that a solution was checked: by content, seed, backend and the GPU its
// figures are for (the device on a GPU, the modelled profile on the simulator).
std::string reference_cache_key(const App& app, const Puzzle& p, const std::string& source,
                                const runner::BackendStatus& dev) {
  std::string gpu = dev.kind == "cuda" ? dev.device.name : app.settings.gpu_profile;
  return fmt::format("reference-run/{}/{:016x}/{}/{}/{}", p.id, fnv1a(source), kReferenceSeed,
                     dev.kind, gpu.empty() ? "default" : gpu);
}

// Sends `st.request` and makes it the run in progress.
void send_run(App& app, RunState st) {
  st.id = send(app, st.request, st.timeout);
  st.started = app.now;
  app.run = std::move(st);
}

void send_reference(App& app, const RunState& ref) {
  RunState st = ref;
  runner::Request& r = st.request;
  r.op = runner::Op::check;
  r.puzzle = ref.puzzle;
  r.file = ref.file;
  r.source = ref.source;
  r.backend = app.settings.backend;
  r.model_gpu = app.settings.gpu_profile;
  r.seed = kReferenceSeed;
  st.timeout = app.settings.request_timeout_s;
  send_run(app, std::move(st));
}

// The solution's point for the roofline: checked when the runner has nothing else to do, and
// only when the store has no check of this very file (same seed, backend and GPU) yet.
void maybe_queue_reference(App& app) {
  const Puzzle* p = app.puzzle.puzzle;
  if (!p || !app.store || app.queued_reference) return;
  std::error_code ec;
  if (p->solution.empty() || !fs::exists(p->solution, ec)) return;
  const runner::BackendStatus* dev = app.device.active();
  if (!dev) return;
  std::string source = read_or_empty(p->solution);
  std::string key = reference_cache_key(app, *p, source, *dev);
  // Once a session whatever came of it (a runner that died on it is not fed it again).
  if (app.reference_tried.count(key)) return;
  try {
    if (app.store->note(key)) return;
  } catch (...) {
    return;
  }
  RunState ref;
  ref.reference = true;
  ref.op = runner::Op::check;
  ref.puzzle = p->id;
  ref.file = solution_name(*p);
  ref.source = std::move(source);
  ref.cache_key = key;
  app.queued_reference = ref;
  app.reference_tried.insert(key);
}

// A case of the learner's check, judged while the rest still run: the Results pane shows it now,
// the first failure selected.
// While only passing cases have come, a previous result stays on show, dimmed as stale (passes so
// far are no answer yet; the progress bar above it counts them); the first failing case replaces
// it at once.
void show_case(App& app, const runner::Event& e) {
  ResultsState& res = app.results;
  const bool hold = res.stale && res.report && !res.partial;
  if (hold && !res.incoming) {
    res.incoming.emplace();
    res.incoming->puzzle = app.run->puzzle;
    res.incoming->file = app.run->file;
  }
  if (!hold && !res.partial) {
    int seq = res.results_seq;
    res = {};
    res.results_seq = seq;
    res.partial = true;
    res.when = "running";
    res.report.emplace();
    res.report->puzzle = app.run->puzzle;
    res.report->file = app.run->file;
  }
  CheckReport& rep = hold ? *res.incoming : *res.report;
  rep.cases.push_back(*e.case_report);
  const CaseReport& c = rep.cases.back();
  if (c.verdict != Verdict::passed && rep.verdict == Verdict::passed) {
    rep.verdict = c.verdict;
    rep.summary = fmt::format("case {}: {}", c.label, c.message);
  } else if (rep.verdict == Verdict::passed) {
    rep.summary = fmt::format("{} of {} cases passed so far", rep.cases.size(), e.total);
  }
  if (hold) {
    if (rep.verdict == Verdict::passed) return;
    CheckReport in = std::move(*res.incoming);
    int seq = res.results_seq;
    res = {};
    res.results_seq = seq;
    res.partial = true;
    res.when = "running";
    res.report = std::move(in);
  }
  res.cases_total = e.total;
  if (res.selected_case < 0)
    for (size_t i = 0; i < res.report->cases.size(); ++i)
      if (res.report->cases[i].verdict != Verdict::passed) {
        res.selected_case = int(i);
        break;
      }
  if (app.puzzle.puzzle && app.puzzle.puzzle->id == app.run->puzzle)
    apply_report_to_editor(app, *res.report, app.run->source);
}

// Which of the learner's checks of `file` (on `puzzle`) the store row `id` is: 1 for the first.
// Store ids count every check, the solution's background ones included; the learner counts theirs.
int attempt_number(const App& app, int64_t id, const std::string& puzzle, const std::string& file) {
  if (!app.store || is_solution_file(file)) return 0;
  int n = 0;
  try {
    for (auto& a : app.store->attempt_summaries(puzzle)) n += a.file == file && a.id <= id;
  } catch (...) {
  }
  return n;
}

void finish_run(App& app, const runner::Event& e) {
  RunState run = *app.run;
  app.run.reset();
  if (run.reference) {
    if (e.ok && e.report && app.store) {
      try {
        int64_t id = app.store->record_attempt(*e.report, run.source);
        if (!run.cache_key.empty()) app.store->set_note(run.cache_key, std::to_string(id));
      } catch (const std::exception& ex) {
        app.store_error = ex.what();
      }
      app.roof.dirty = true;
    }
    return;
  }
  // A runner that died under the learner's request (a crash, a kill, a fault that ended it) is
  // restarted and the request sent again, once: the learner asked for a verdict, and the cause
  // may have been the background work or another request. A second death is reported, and so
  // is a request that ran past its own time limit (sent again, it would only hang again).
  if (e.runner_died && !e.timed_out && !run.cancelling && run.resends == 0) {
    note(app, "the runner stopped during your run (" + e.text +
                  "); your run was sent again to a fresh runner");
    if (app.results.partial) {
      int seq = app.results.results_seq;
      app.results = {};
      app.results.results_seq = seq;
    }
    app.results.incoming.reset();
    run.resends = 1;
    run.acknowledged = false;
    run.phase = "compiling (again, on a fresh runner)";
    run.done = run.total = 0;
    send_run(app, std::move(run));
    return;
  }
  ResultsState& res = app.results;
  int seq = res.results_seq;
  res = {};
  res.results_seq = seq + 1;
  res.elapsed_ms = e.elapsed_ms;
  res.when = "just now";
  if (e.ok && (e.tune || e.sweep)) {
    res.tune = e.tune;
    res.sweep = e.sweep;
    app.roof.dirty = true; // the configurations go on the roofline
    return;
  }
  if (!e.ok || !e.report) {
    res.error = e.text.empty() ? "the runner gave no answer" : e.text;
    res.runner_died = e.runner_died;
    res.cancelled = e.cancelled;
    return;
  }
  res.report = *e.report;
  res.compile_only = run.op == runner::Op::compile;
  if (app.puzzle.puzzle && app.puzzle.puzzle->id == run.puzzle)
    apply_report_to_editor(app, *res.report, run.source);
  if (run.op == runner::Op::check && app.store) {
    try {
      res.attempt = app.store->record_attempt(*res.report, run.source);
      res.attempt_number = attempt_number(app, res.attempt, run.puzzle, run.file);
    } catch (const std::exception& ex) {
      app.store_error = ex.what();
    }
    refresh_progress(app);
    app.roof.dirty = true;
    maybe_queue_reference(app);
  }
  // A failing case is the one to look at first.
  for (size_t i = 0; i < res.report->cases.size(); ++i)
    if (res.report->cases[i].verdict != Verdict::passed) {
      res.selected_case = int(i);
      break;
    }
}

// The learner's request goes first: background work in progress is cancelled (and queued again,
// to run once the learner's is answered); a learner's request in progress is superseded, since
// Run again means "check what the editor holds now".
void start_request(App& app, runner::Op op) {
  PuzzleState& ps = app.puzzle;
  if (!ps.puzzle) return;
  if (app.run) {
    app.runner->cancel(app.run->id, kQueuedCancelGrace);
    if (app.run->reference) {
      RunState ref = *app.run;
      ref.id = 0;
      app.queued_reference = ref;
    } else {
      app.superseded.insert(app.run->id);
    }
    app.run.reset();
  }
  save_now(app);            // the file on disk is what was checked, always
  app.results.stale = true; // what the Results pane shows until the new answer comes
  app.results.incoming.reset();
  RunState st;
  runner::Request& r = st.request;
  r.op = op;
  r.puzzle = ps.puzzle->id;
  r.file = workspace_name(*ps.puzzle);
  r.source = ps.text.text();
  r.backend = app.settings.backend;
  r.model_gpu = app.settings.gpu_profile;
  st.op = op;
  st.puzzle = r.puzzle;
  st.source = r.source;
  st.file = r.file;
  // Shown at once: the runner's first progress event says the same a little later.
  st.phase = op == runner::Op::compile || op == runner::Op::check ? "compiling" : "starting";
  // A tune or a sweep is many checks: it gets the time of many.
  st.timeout = app.settings.request_timeout_s;
  if (op == runner::Op::tune || op == runner::Op::sweep) st.timeout = std::max(st.timeout, 3600.0);
  send_run(app, std::move(st));
}

} // namespace

const runner::BackendStatus* DeviceState::active() const {
  // What "auto" picks in the runner: the GPU when there is one.
  for (auto& b : backends)
    if (b.kind == "cuda" && b.available) return &b;
  for (auto& b : backends)
    if (b.kind == "sim" && b.available) return &b;
  return nullptr;
}

void Marks::add(const std::string& name) {
  ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  rects[name] = ImVec4(a.x, a.y, b.x, b.y);
}

std::string verdict_title(const std::string& v) {
  if (v == "passed") return "Passed";
  if (v == "wrong_answer") return "Wrong answer";
  if (v == "compile_error") return "Compile error";
  if (v == "runtime_fault") return "Runtime fault";
  if (v == "usage_error") return "Cannot run";
  return v;
}

void apply_runner_settings(App& app) {
  runner::ClientOptions o = app.runner->options();
  o.command =
      launch_options().runner.empty() ? app.settings.runner_command : launch_options().runner;
  o.timeout_s = app.settings.request_timeout_s;
  app.runner->set_options(o);
  app.device.hello = false;
  app.device.backends.clear();
  send_hello_if_needed(app);
}

void init_app(App& app, const std::string& catalog, const std::string& data_dir_arg) {
  app.catalog_arg = catalog;
  app.data_dir = wb::data_dir(data_dir_arg).string();
  std::error_code ec;
  fs::create_directories(app.data_dir, ec);
  app.settings_path = fs::path(app.data_dir) / "window.ini";
  app.settings = load_settings(app.settings_path);
  app.saved_settings = app.settings;
  for (auto& w : app.settings.warnings)
    note(app, fmt::format("{}: {}", app.settings_path.string(), w));

  fs::path root = default_catalog_root(catalog);
  app.catalog = load_catalog(root);
  for (auto& e : app.catalog.errors) app.log.push_back("catalog: " + e.str());
  if (!app.catalog.errors.empty())
    note(app, fmt::format("{} problem(s) in the catalog: see View > Runner log",
                          app.catalog.errors.size()));

  try {
    app.store = Store::open(Store::default_path(app.data_dir));
  } catch (const std::exception& e) {
    app.store_error = e.what();
    note(app, fmt::format("progress will not be kept: {}", e.what()));
  }
  app.workspace = std::make_unique<Workspace>(fs::path(app.data_dir) / "workspace");

  runner::ClientOptions o;
  o.command =
      launch_options().runner.empty() ? app.settings.runner_command : launch_options().runner;
  o.catalog = fs::absolute(root, ec).string();
  o.timeout_s = app.settings.request_timeout_s;
  app.runner = std::make_unique<runner::Client>(o);
  send_hello_if_needed(app); // the device shows up while the first frames draw

  refresh_progress(app);
  // Reopen what was open, on the tab that was showing.
  int tab = app.settings.reading_tab;
  std::string item = app.settings.open_item; // opening the lesson rewrites it
  if (!app.settings.open_lesson.empty()) open_lesson(app, app.settings.open_lesson);
  if (item.rfind("puzzle:", 0) == 0)
    open_puzzle(app, item.substr(7));
  else if (item.rfind("lesson:", 0) == 0)
    open_lesson(app, item.substr(7));
  if (!app.lesson.lesson && !app.puzzle.puzzle) {
    if (!app.catalog.lessons.empty())
      open_lesson(app, app.catalog.lessons.front().id);
    else if (!app.catalog.puzzles.empty())
      open_puzzle(app, app.catalog.puzzles.front().id);
  } else if ((tab == 0 && app.lesson.lesson) || (tab == 1 && app.puzzle.puzzle)) {
    app.settings.reading_tab = tab;
    app.reading_tab_request = tab;
  }
}

void shutdown_app(App& app) {
  save_now(app);
  std::string why = save_settings(app.settings, app.settings_path);
  if (!why.empty()) fmt::print(stderr, "warpbook: {}\n", why);
  app.runner.reset(); // kills the runner
}

void refresh_progress(App& app) {
  app.progress.clear();
  if (!app.store) return;
  try {
    // The same standing `warpbook progress` prints.
    Progress pr =
        learner_progress(app.catalog, app.store->attempt_summaries(), app.store->notes("read/"));
    for (auto& s : pr.puzzles) {
      if (s.attempts == 0) continue;
      PuzzleProgress& p = app.progress[s.id];
      p.attempts = s.attempts;
      p.passed = s.passed();
      // A medal earned on a GPU, else the one predicted (which says so).
      p.medal_predicted = s.measured.medal.empty() && !s.predicted.medal.empty();
      p.medal = p.medal_predicted ? s.predicted.medal : s.measured.medal;
      p.best_sol = std::max(s.measured.sol, s.predicted.sol);
    }
    app.lessons_read.clear();
    for (auto& l : pr.lessons)
      if (l.read) app.lessons_read[l.id] = true;
  } catch (const std::exception& e) {
    app.store_error = e.what();
  }
}

void open_lesson(App& app, const std::string& id) {
  const Lesson* l = app.catalog.find_lesson(id);
  if (!l) {
    note(app, fmt::format("no lesson '{}' in the catalog", id));
    return;
  }
  LessonState& ls = app.lesson;
  ls = {};
  ls.lesson = l;
  ls.doc = parse_markdown(l->body);
  ls.view.fonts = app.fonts.md();
  ls.view.on_link = [&app](const std::string& url) { open_link(app, url); };
  fs::path root = app.catalog.root;
  ls.view.image = [&app, root](const std::string& src) { return app.textures.get(root / src); };
  // Answers given before.
  ls.view.quizzes.resize(ls.doc.quizzes.size());
  if (app.store) {
    try {
      for (auto& [k, v] : app.store->notes("quiz/" + l->id + "#")) {
        size_t hash = k.rfind('#');
        int n = std::atoi(k.c_str() + hash + 1) - 1;
        if (n < 0 || n >= int(ls.view.quizzes.size()) || v.empty()) continue;
        auto& q = ls.view.quizzes[size_t(n)];
        q.chosen.clear();
        for (char c : v.substr(0, v.find(';'))) q.chosen.push_back(c == '1');
        q.checked = q.chosen.size() == ls.doc.quizzes[size_t(n)].choices.size();
      }
    } catch (...) {
    }
  }
  ls.view.mark = [&app](const std::string& name) { app.marks.add(name); };
  std::string lid = l->id;
  ls.view.on_quiz = [&app, lid](int quiz, const std::vector<bool>& chosen, bool right) {
    std::string bits;
    for (bool b : chosen) bits += b ? '1' : '0';
    set_note(app, fmt::format("quiz/{}#{}", lid, quiz + 1), bits + (right ? ";right" : ";wrong"));
  };
  set_note(app, "read/" + l->id, "1");
  app.lessons_read[l->id] = true;
  app.settings.open_lesson = l->id;
  if (!app.puzzle.puzzle) app.settings.open_item = "lesson:" + l->id;
  app.settings.reading_tab = 0;
  app.reading_tab_request = 0;
}

void open_puzzle(App& app, const std::string& id) {
  const Puzzle* p = app.catalog.find_puzzle(id);
  if (!p) {
    note(app, fmt::format("no puzzle '{}' in the catalog", id));
    return;
  }
  if (app.puzzle.puzzle == p) {
    app.settings.reading_tab = 1;
    app.reading_tab_request = 1;
    return;
  }
  save_now(app); // the previous puzzle's file
  PuzzleState& ps = app.puzzle;
  ps = {};
  ps.puzzle = p;
  ps.statement = parse_markdown(read_or_empty(p->readme));
  ps.statement_view.fonts = app.fonts.md();
  ps.statement_view.on_link = [&app](const std::string& url) { open_link(app, url); };
  fs::path root = app.catalog.root;
  ps.statement_view.image = [&app, root](const std::string& src) {
    return app.textures.get(root / src);
  };
  ps.hints = split_hints(read_or_empty(p->hints));
  for (auto& h : ps.hints) ps.hint_docs.push_back(parse_markdown(h));
  ps.hints_view.fonts = app.fonts.md();
  ps.hints_view.on_link = ps.statement_view.on_link;
  if (app.store) {
    try {
      if (auto n = app.store->note("hints/" + p->id))
        ps.hints_shown = std::clamp(std::atoi(n->c_str()), 0, int(ps.hints.size()));
    } catch (...) {
    }
  }
  ps.editor.font = app.fonts.mono;
  ps.editor.tab_width = app.settings.tab_width;
  std::string err;
  fs::path f = app.workspace->ensure(*p, err);
  if (f.empty()) {
    note(app, "cannot make your file: " + err);
    ps.save_error = err;
    ps.text.set_text(read_or_empty(p->starter));
  } else if (!ps.file.open(f)) {
    ps.save_error = "cannot read " + f.string();
    ps.text.set_text(read_or_empty(p->starter));
  } else {
    ps.text.set_text(ps.file.synced_text());
    ps.synced_version = ps.text.version();
  }
  ps.next_disk_check = app.now + 0.5;
  // Results from before belong to another puzzle; show this one's latest attempt instead.
  int seq = app.results.results_seq;
  app.results = ResultsState{};
  app.results.results_seq = seq;
  if (app.store) {
    try {
      if (auto a = app.store->latest_attempt(p->id, workspace_name(*p))) show_attempt(app, a->id);
    } catch (...) {
    }
  }
  app.queued_reference.reset();
  if (app.progress.count(p->id)) maybe_queue_reference(app);
  app.roof.dirty = true;
  app.settings.open_item = "puzzle:" + p->id;
  app.settings.reading_tab = 1;
  if (!p->lesson.empty() && (!app.lesson.lesson || app.lesson.lesson->id != p->lesson) &&
      app.catalog.find_lesson(p->lesson)) {
    open_lesson(app, p->lesson);
    app.settings.open_item = "puzzle:" + p->id;
    app.settings.reading_tab = 1;
  }
  app.reading_tab_request = 1;
}

void open_link(App& app, const std::string& url) {
  if (url.rfind("puzzle:", 0) == 0) return open_puzzle(app, url.substr(7));
  if (url.rfind("lesson:", 0) == 0) return open_lesson(app, url.substr(7));
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) {
    // The system's browser; never wait for it.
    pid_t pid;
    const char* argv[] = {"xdg-open", url.c_str(), nullptr};
    if (posix_spawnp(&pid, "xdg-open", nullptr, nullptr, const_cast<char**>(argv), environ) != 0)
      note(app, "cannot open a browser for " + url);
    else
      note(app, "opened " + url + " in the browser");
    return;
  }
  note(app, "a link Warpbook cannot follow: " + url);
}

bool save_now(App& app) {
  PuzzleState& ps = app.puzzle;
  if (!ps.puzzle || ps.file.path().empty() || ps.conflict) return false;
  if (ps.text.version() == ps.synced_version) return true;
  std::string why = ps.file.save(ps.text.text());
  if (!why.empty()) {
    ps.save_error = why;
    return false;
  }
  ps.save_error.clear();
  ps.synced_version = ps.text.version();
  ps.saved_at = app.now;
  return true;
}

void keep_mine(App& app) {
  PuzzleState& ps = app.puzzle;
  ps.conflict = false;
  ps.file.accept_disk();
  ps.synced_version = 0; // force the write
  save_now(app);
}

void take_disk(App& app) {
  PuzzleState& ps = app.puzzle;
  ps.conflict = false;
  ps.text.replace_all(ps.file.disk_text()); // undoable: the learner's version is one Ctrl+Z away
  ps.file.accept_disk();
  ps.synced_version = ps.text.version();
}

void reset_to_starter(App& app) {
  PuzzleState& ps = app.puzzle;
  if (!ps.puzzle) return;
  ps.text.replace_all(read_or_empty(ps.puzzle->starter));
  ps.last_edit = app.now;
  save_now(app);
}

void reveal_hint(App& app) {
  PuzzleState& ps = app.puzzle;
  if (!ps.puzzle || ps.hints_shown >= int(ps.hints.size())) return;
  ++ps.hints_shown;
  set_note(app, "hints/" + ps.puzzle->id, std::to_string(ps.hints_shown));
}

void show_solution(App& app) {
  PuzzleState& ps = app.puzzle;
  if (!ps.puzzle) return;
  ps.solution = read_or_empty(ps.puzzle->solution);
  if (ps.solution.empty()) ps.solution = "// This catalog has no solution for this puzzle.";
  ps.solution_shown = true;
  set_note(app, "solution/" + ps.puzzle->id, "shown");
}

void run_check(App& app) {
  start_request(app, runner::Op::check);
}
void run_compile(App& app) {
  start_request(app, runner::Op::compile);
}
void run_tune(App& app) {
  start_request(app, runner::Op::tune);
}
void run_sweep(App& app) {
  start_request(app, runner::Op::sweep);
}

void apply_tunables(App& app, const TuneConfig& config) {
  PuzzleState& ps = app.puzzle;
  if (!ps.puzzle) return;
  std::string text = source_with_tunables(ps.text.text(), config, true);
  ps.text.replace_all(text);
  ps.last_edit = app.now;
  save_now(app);
  note(app, fmt::format("set {} in {}", config_text(config), ps.file.path().filename().string()));
}

void cancel_run(App& app) {
  if (!app.run) return;
  app.run->cancelling = true;
  app.runner->cancel(app.run->id);
}

void measure_ceilings(App& app) {
  if (app.device.probe_id) return;
  runner::Request r;
  r.op = runner::Op::probe;
  r.backend = "cuda";
  app.device.probe_error.clear();
  app.device.probe_phase = "starting";
  app.device.probe_id = send(app, r, 120);
}

void show_attempt(App& app, int64_t id) {
  if (!app.store) return;
  try {
    auto a = app.store->attempt(id);
    if (!a) return;
    ResultsState& res = app.results;
    int seq = res.results_seq;
    res = {};
    res.results_seq = seq;
    res.report = a->report();
    res.attempt = a->id;
    res.when = a->created_at;
    res.attempt_number = attempt_number(app, a->id, a->puzzle, a->file);
    res.solution_check = is_solution_file(a->file);
    if (app.puzzle.puzzle && app.puzzle.puzzle->id == a->puzzle && !is_solution_file(a->file))
      apply_report_to_editor(app, *res.report, a->source);
    for (size_t i = 0; i < res.report->cases.size(); ++i)
      if (res.report->cases[i].verdict != Verdict::passed) {
        res.selected_case = int(i);
        break;
      }
    app.roof.dirty = true;
  } catch (const std::exception& e) {
    note(app, fmt::format("cannot show attempt {}: {}", id, e.what()));
  }
}

std::string runner_state_text(const App& app) {
  if (!app.runner) return "no runner";
  if (app.runner->running()) {
    if (!app.device.hello) return "runner starting";
    const runner::BackendStatus* b = app.device.active();
    if (!b) return "runner ready, but no backend can run here";
    return fmt::format("runner ready: {}", b->device.name.empty() ? b->kind : b->device.name);
  }
  if (!app.device.exit_note.empty()) return "runner ended: " + app.device.exit_note;
  return "runner not started";
}

void tick(App& app, double now) {
  app.now = now;
  // The runner's news.
  for (auto& e : app.runner->poll()) {
    switch (e.kind) {
    case runner::EventKind::hello:
      app.device.hello = true;
      app.device.version = e.version;
      app.device.backends = e.backends;
      app.device.runner_starts = app.runner->starts();
      if (const auto* b = app.device.active(); b && b->kind == "cuda" && app.store) {
        try {
          app.device.measured = app.store->ceilings(b->device.uuid, b->device.driver);
        } catch (...) {
        }
      }
      app.roof.dirty = true;
      if (app.progress.count(app.puzzle.puzzle ? app.puzzle.puzzle->id : ""))
        maybe_queue_reference(app);
      break;
    case runner::EventKind::case_done:
      if (app.run && e.id == app.run->id) {
        app.run->acknowledged = true;
        if (!app.run->reference && e.case_report) show_case(app, e);
      }
      break;
    case runner::EventKind::progress:
      if (app.run && e.id == app.run->id) {
        app.run->acknowledged = true;
        app.run->phase = e.phase;
        app.run->done = e.done;
        app.run->total = e.total;
      } else if (e.id == app.device.probe_id) {
        app.device.probe_phase = e.phase;
      }
      break;
    case runner::EventKind::log:
      app.log.push_back(e.text);
      if (app.log.size() > 1000) app.log.erase(app.log.begin(), app.log.begin() + 200);
      break;
    case runner::EventKind::result:
      if (app.superseded.erase(e.id)) {
        app.runs_superseded += e.cancelled;
      } else if (app.run && e.id == app.run->id)
        finish_run(app, e);
      else if (e.id == app.device.probe_id) {
        app.device.probe_id = 0;
        app.device.probe_phase.clear();
        if (!e.ok)
          app.device.probe_error = e.text;
        else {
          app.device.probe = e.probe;
          std::vector<MeasuredCeiling> keep;
          for (auto& c : e.ceilings)
            keep.push_back({c.metric, c.best, c.median, c.unit, e.probe_device.name, {}});
          if (app.store) {
            try {
              app.store->save_ceilings(e.probe_device, keep);
              app.device.measured = app.store->ceilings(e.probe_device.uuid, e.probe_device.driver);
            } catch (const std::exception& ex) {
              app.device.probe_error = ex.what();
            }
          }
          app.roof.dirty = true;
        }
      }
      break;
    case runner::EventKind::exited:
      app.device.exit_note = e.text;
      app.device.exit_at = now;
      app.device.hello = false;
      note(app, "runner: " + e.text);
      break;
    }
  }
  if (!app.run && app.queued_reference) {
    RunState ref = *app.queued_reference;
    app.queued_reference.reset();
    if (app.puzzle.puzzle && app.puzzle.puzzle->id == ref.puzzle) send_reference(app, ref);
  }

  // The learner's file: autosave after a pause in typing; notice edits made elsewhere.
  PuzzleState& ps = app.puzzle;
  if (ps.puzzle && !ps.file.path().empty()) {
    bool dirty = ps.text.version() != ps.synced_version;
    // A pause in typing saves; so does typing that never pauses, at least every 2 s.
    if (!dirty)
      ps.first_unsaved_edit = 0;
    else if (ps.first_unsaved_edit == 0)
      ps.first_unsaved_edit = now;
    if (dirty && !ps.conflict &&
        (now - ps.last_edit >= app.settings.autosave_s || now - ps.first_unsaved_edit >= 2.0)) {
      save_now(app);
      ps.first_unsaved_edit = 0;
    }
    if (now >= ps.next_disk_check) {
      ps.next_disk_check = now + 0.5;
      switch (ps.file.check()) {
      case WatchedFile::Change::none:
        break;
      case WatchedFile::Change::removed:
        ps.synced_version = 0; // written again at the next save
        break;
      case WatchedFile::Change::external:
        if (ps.conflict) break;
        if (ps.text.version() == ps.synced_version) {
          ps.text.replace_all(ps.file.disk_text());
          ps.file.accept_disk();
          ps.synced_version = ps.text.version();
          note(app, fmt::format("{} changed on disk: reloaded (Ctrl+Z brings back what was here)",
                                ps.file.path().filename().string()));
        } else {
          ps.conflict = true;
        }
        break;
      }
    }
  }

  // Settings: written when they change, at most twice a second.
  if (now >= app.next_settings_save) {
    app.next_settings_save = now + 0.5;
    if (settings_text(app.settings) != settings_text(app.saved_settings)) {
      save_settings(app.settings, app.settings_path);
      app.saved_settings = app.settings;
    }
  }
}

} // namespace wb::gui
