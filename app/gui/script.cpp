#include "script.hpp"

#include "app.hpp"

#include <GLFW/glfw3.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sstream>
#include <stb_image_write.h>
#include <sys/types.h>
#include <thread>

namespace wb::gui {

namespace {

double steady_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// How long wait-result waits with no check running before it fails (a Run that started nothing).
constexpr double kNothingRunsS = 5;

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r");
  size_t b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

int key_code(const std::string& k) {
  if (k == "enter") return GLFW_KEY_ENTER;
  if (k == "tab") return GLFW_KEY_TAB;
  if (k == "backspace") return GLFW_KEY_BACKSPACE;
  if (k == "delete") return GLFW_KEY_DELETE;
  if (k == "left") return GLFW_KEY_LEFT;
  if (k == "right") return GLFW_KEY_RIGHT;
  if (k == "up") return GLFW_KEY_UP;
  if (k == "down") return GLFW_KEY_DOWN;
  if (k == "home") return GLFW_KEY_HOME;
  if (k == "end") return GLFW_KEY_END;
  if (k == "pageup") return GLFW_KEY_PAGE_UP;
  if (k == "pagedown") return GLFW_KEY_PAGE_DOWN;
  if (k == "escape") return GLFW_KEY_ESCAPE;
  if (k.size() == 1 && std::isalpha(static_cast<unsigned char>(k[0]))) return std::toupper(k[0]);
  return -1;
}

// What a screenshot looks like, to tell a drawn window from a blank one.
struct ShotStats {
  int distinct = 0;  // distinct colours among a sample of pixels
  double non_bg = 0; // fraction of pixels unlike the top-left one
};

ShotStats stats_of(const std::vector<unsigned char>& rgba, int w, int h) {
  ShotStats s;
  std::vector<uint32_t> seen;
  uint32_t bg = rgba.empty() ? 0 : (uint32_t(rgba[0]) << 16 | uint32_t(rgba[1]) << 8 | rgba[2]);
  long differ = 0, total = 0;
  for (int y = 0; y < h; y += 3)
    for (int x = 0; x < w; x += 3) {
      const unsigned char* p = &rgba[(size_t(y) * size_t(w) + size_t(x)) * 4];
      uint32_t c = uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2];
      ++total;
      differ += c != bg;
      if (seen.size() < 4096 && std::find(seen.begin(), seen.end(), c) == seen.end())
        seen.push_back(c);
    }
  s.distinct = int(seen.size());
  s.non_bg = total ? double(differ) / double(total) : 0;
  return s;
}

} // namespace

void rss_kib(long& now, long& peak) {
  now = peak = -1;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) now = std::atol(line.c_str() + 6);
    if (line.rfind("VmHWM:", 0) == 0) peak = std::atol(line.c_str() + 6);
  }
}

// The `deadline` command's watchdog: a thread of its own, so that it fires however the window
// hangs (a frame that never ends, a shutdown that waits), and the test fails at once with the
// command it was stuck in instead of running into the test harness's timeout.
struct Script::Watchdog {
  std::mutex mu;
  double deadline = 0, limit = 0;
  std::string where = "starting"; // the command running now
  std::atomic<pid_t> runner{-1};  // the runner's process group, killed before the window exits
};

void Script::watch(App& app) {
  if (!watchdog_) return;
  watchdog_->runner = app.runner ? app.runner->pid() : -1;
  std::lock_guard lk(watchdog_->mu);
  watchdog_->where = pc_ < cmds_.size() ? fmt::format("line {}: {} {}", cmds_[pc_].line,
                                                      cmds_[pc_].verb, cmds_[pc_].rest)
                                        : std::string("the window's shutdown, after the script");
}

bool Script::load(const std::string& path, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read the script " + path;
    return false;
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    size_t sp = line.find(' ');
    Cmd c;
    c.line = n;
    c.verb = line.substr(0, sp);
    c.rest = sp == std::string::npos ? "" : trim(line.substr(sp + 1));
    cmds_.push_back(std::move(c));
  }
  if (cmds_.empty()) {
    error = "the script " + path + " has no commands";
    return false;
  }
  return true;
}

void Script::fail(const std::string& why) {
  ++failures_;
  fmt::print("script:{}: FAIL {} {}: {}\n", cmds_[pc_].line, cmds_[pc_].verb, cmds_[pc_].rest, why);
  std::fflush(stdout);
}

void Script::ok(const std::string& what) {
  fmt::print("script:{}: {}\n", cmds_[pc_].line, what);
  std::fflush(stdout);
}

void Script::first_frame(double ms, double exec_ms) {
  first_frame_ms_ = ms;
  first_frame_exec_ms_ = exec_ms;
  if (active()) {
    fmt::print("first_frame_ms={:.1f} (since the window code started), {:.0f} (since exec)\n", ms,
               exec_ms);
    std::fflush(stdout);
  }
}

void Script::before_frame(App& app, ImGuiIO& io) {
  // A key pressed last frame that is already up was never seen: a focus change from the X server
  // (Xvfb has no window manager, its focus events come when they come) makes Dear ImGui clear
  // every key before the frame's widgets run. Press it again, so a scripted Ctrl+Enter is not lost.
  bool cleared = false;
  for (int k : held_keys_) cleared |= !io.KeysDown[k];
  if (cleared && key_repress_ < 5) {
    ++key_repress_;
    for (int k : held_keys_) io.KeysDown[k] = true;
    if (held_ctrl_) io.KeyCtrl = true, io.KeysDown[GLFW_KEY_LEFT_CONTROL] = true;
    if (held_shift_) io.KeyShift = true, io.KeysDown[GLFW_KEY_LEFT_SHIFT] = true;
    return;
  }
  key_repress_ = 0;
  // Release keys pressed last frame.
  for (int k : held_keys_) io.KeysDown[k] = false;
  held_keys_.clear();
  if (held_ctrl_)
    io.KeyCtrl = false, io.KeysDown[GLFW_KEY_LEFT_CONTROL] = false, held_ctrl_ = false;
  if (held_shift_)
    io.KeyShift = false, io.KeysDown[GLFW_KEY_LEFT_SHIFT] = false, held_shift_ = false;
  watch(app);
  while (active()) {
    if (frame_in_cmd_ == 0) cmd_started_ = steady_s(), watch(app);
    bool finished = step(app, io);
    if (!finished) {
      ++frame_in_cmd_;
      return;
    }
    ++pc_;
    frame_in_cmd_ = 0;
    if (pc_ >= cmds_.size()) finished_ = true;
    watch(app);
    // Input injected by a command must be seen by a frame before the next command runs, and a
    // screenshot shows the state the commands before it made, not the ones after.
    if (!held_keys_.empty() || held_ctrl_ || !shot_.empty()) return;
  }
}

bool Script::step(App& app, ImGuiIO& io) {
  const Cmd& c = cmds_[pc_];
  const std::string& v = c.verb;
  double waited = steady_s() - cmd_started_;
  auto timeout_arg = [&](double def) { return c.rest.empty() ? def : std::atof(c.rest.c_str()); };

  if (v == "open") {
    std::istringstream ss(c.rest);
    std::string kind, id;
    ss >> kind >> id;
    if (kind == "puzzle")
      open_puzzle(app, id);
    else if (kind == "lesson")
      open_lesson(app, id);
    else
      fail("open puzzle ID or open lesson ID");
    if (kind == "puzzle" && (!app.puzzle.puzzle || app.puzzle.puzzle->id.rfind(id, 0) != 0))
      fail("did not open");
    return true;
  }
  if (v == "tab") {
    app.reading_tab_request = c.rest == "puzzle" ? 1 : 0;
    return true;
  }
  if (v == "mouse") {
    std::istringstream ss(c.rest);
    float x = 0, y = 0;
    ss >> x >> y;
    // The pointer itself, or the platform backend puts it back next frame.
    glfwSetCursorPos(glfwGetCurrentContext(), x, y);
    io.MousePos = ImVec2(x, y);
    return frame_in_cmd_ >= 1;
  }
  if (v == "goto-line") {
    app.puzzle.editor.goto_line = std::atoi(c.rest.c_str());
    return frame_in_cmd_ >= 1;
  }
  if (v == "scroll-lesson") {
    app.lesson_scroll_to = float(std::atof(c.rest.c_str()));
    return frame_in_cmd_ >= 1;
  }
  if (v == "run") {
    seq_mark_ = app.results.results_seq;
    run_check(app);
    return true;
  }
  if (v == "click") {
    auto it = app.marks.rects.find(c.rest);
    if (it == app.marks.rects.end()) {
      if (frame_in_cmd_ > 10) {
        fail("no button marked '" + c.rest + "' on screen");
        return true;
      }
      return false;
    }
    ImVec4 r = it->second;
    ImVec2 p((r.x + r.z) * 0.5f, (r.y + r.w) * 0.5f);
    // Four frames: move there, press, release, let it settle.
    io.MousePos = p;
    io.MouseDown[0] = frame_in_cmd_ == 1;
    if (frame_in_cmd_ == 0) seq_mark_ = app.results.results_seq;
    if (frame_in_cmd_ == 0) stale_mark_ = app.stale_frames;
    if (frame_in_cmd_ == 1) click_now_ = app.now;
    return frame_in_cmd_ >= 3;
  }
  if (v == "key") {
    std::string combo = c.rest, k;
    bool ctrl = false, shift = false;
    std::istringstream ss(combo);
    std::string part;
    while (std::getline(ss, part, '+')) {
      if (part == "ctrl")
        ctrl = true;
      else if (part == "shift")
        shift = true;
      else
        k = part;
    }
    int code = key_code(k);
    if (code < 0) {
      fail("unknown key " + k);
      return true;
    }
    seq_mark_ = app.results.results_seq;
    io.KeysDown[code] = true;
    held_keys_.push_back(code);
    if (ctrl) io.KeyCtrl = true, io.KeysDown[GLFW_KEY_LEFT_CONTROL] = true, held_ctrl_ = true;
    if (shift) io.KeyShift = true, io.KeysDown[GLFW_KEY_LEFT_SHIFT] = true, held_shift_ = true;
    return true;
  }
  if (v == "focus-editor") {
    app.puzzle.focus_editor = true;
    return frame_in_cmd_ >= 1;
  }
  if (v == "type") {
    if (frame_in_cmd_ == 0) {
      app.puzzle.focus_editor = true;
      return false;
    }
    // Characters one frame, the Enter key (for each \n) the next, in order.
    std::vector<std::string> parts;
    std::string t = c.rest;
    for (size_t i; (i = t.find("\\n")) != std::string::npos;) {
      parts.push_back(t.substr(0, i));
      t = t.substr(i + 2);
    }
    parts.push_back(t);
    int k = (frame_in_cmd_ - 1) / 2;
    if ((frame_in_cmd_ - 1) % 2 == 0) {
      io.AddInputCharactersUTF8(parts[size_t(k)].c_str());
    } else {
      io.KeysDown[GLFW_KEY_ENTER] = true;
      held_keys_.push_back(GLFW_KEY_ENTER);
    }
    // Done after the last part's characters.
    return (frame_in_cmd_ - 1) >= 2 * int(parts.size() - 1);
  }
  if (v == "load") {
    auto t = read_file(c.rest);
    if (!t)
      fail("cannot read " + c.rest);
    else {
      app.puzzle.text.replace_all(*t);
      app.puzzle.last_edit = app.now;
    }
    return true;
  }
  if (v == "write-disk") {
    auto t = read_file(c.rest);
    if (!t || app.puzzle.file.path().empty())
      fail("cannot read " + c.rest + " or no file open");
    else
      write_file_atomic(app.puzzle.file.path(), *t);
    return true;
  }
  if (v == "resolve") {
    if (c.rest == "mine")
      keep_mine(app);
    else
      take_disk(app);
    return true;
  }
  if (v == "wait-result") {
    if (app.results.results_seq > seq_mark_ && !(app.run && !app.run->reference)) {
      std::string verdict = app.results.report
                                ? std::string(verdict_name(app.results.report->verdict))
                            : app.results.runner_died ? "runner_died"
                                                      : "error";
      ok(fmt::format("result after {:.1f} s: {} {}", waited, verdict,
                     app.results.report ? app.results.report->summary : app.results.error));
      return true;
    }
    // Nothing running, nothing answered: Run did not start a check, and none will come.
    if (!app.run && waited > kNothingRunsS) {
      fail(fmt::format("no check is running and none answered within {:.0f} s", kNothingRunsS));
      return true;
    }
    if (waited > timeout_arg(600)) {
      fail(fmt::format("no result in time; {}", runner_state_text(app)));
      return true;
    }
    return false;
  }
  if (v == "wait-background") {
    // The solution's check for the roofline has started (the work a learner's Run must cancel).
    // Waited for rather than looked for after a fixed wait: it may be short, and it starts only
    // once the learner's check is over.
    if (app.run && app.run->reference) {
      ok(fmt::format("the background check of {} started after {:.1f} s, at '{}'", app.run->file,
                     waited, app.run->phase));
      return true;
    }
    if (waited > timeout_arg(10)) {
      fail(fmt::format("no background check started; {}", runner_state_text(app)));
      return true;
    }
    return false;
  }
  if (v == "wait-partial") {
    // A case of the learner's check is shown while the check still runs.
    if (app.run && !app.run->reference && app.results.partial && app.results.report &&
        !app.results.report->cases.empty()) {
      const CheckReport& r = *app.results.report;
      ok(fmt::format("{} of {} cases shown after {:.1f} s, the check still running: {}",
                     r.cases.size(), app.results.cases_total, waited, r.summary));
      return true;
    }
    if (waited > timeout_arg(600) || (!app.run && waited > 1)) {
      fail("no case was shown while the check ran");
      return true;
    }
    return false;
  }
  if (v == "wait-idle") {
    if (!app.run && !app.queued_reference && app.device.hello) return true;
    // A runner that ended with nothing asked of it is not started again until a request comes:
    // the window would never be idle.
    if (!app.run && !app.queued_reference && !app.runner->running()) {
      fail("the runner ended and nothing will start it again: " + app.device.exit_note);
      return true;
    }
    if (waited > timeout_arg(600)) {
      fail(fmt::format("still busy: {}{}", runner_state_text(app),
                       app.run ? fmt::format(", a {} check running ({})",
                                             app.run->reference ? "background" : "learner's",
                                             app.run->phase)
                               : ""));
      return true;
    }
    return false;
  }
  if (v == "wait-hello") {
    if (app.device.hello) {
      ok(fmt::format("runner said hello after {:.2f} s", waited));
      return true;
    }
    if (waited > timeout_arg(60)) {
      fail("no hello from the runner: " + app.device.exit_note);
      return true;
    }
    return false;
  }
  if (v == "deadline") {
    const double limit = std::atof(c.rest.c_str());
    if (limit <= 0) {
      fail("deadline SECONDS");
      return true;
    }
    const bool first = !watchdog_;
    if (first) watchdog_ = std::make_shared<Watchdog>();
    {
      std::lock_guard lk(watchdog_->mu);
      watchdog_->limit = limit;
      watchdog_->deadline = steady_s() + limit;
    }
    if (first)
      std::thread([w = watchdog_] {
        for (;;) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          std::unique_lock lk(w->mu);
          if (steady_s() < w->deadline) continue;
          fmt::print("script: FAIL the window did not finish within its deadline of {:.0f} s; it "
                     "was stuck at {}\n",
                     w->limit, w->where);
          std::fflush(stdout);
          if (pid_t r = w->runner.load(); r > 0) ::kill(-r, SIGKILL), ::kill(r, SIGKILL);
          std::_Exit(3);
        }
      }).detach();
    ok(fmt::format("deadline {:.0f} s", limit));
    return true;
  }
  if (v == "wait") return waited >= std::atof(c.rest.c_str());
  if (v == "frames") return frame_in_cmd_ >= std::atoi(c.rest.c_str());
  if (v == "expect") {
    std::istringstream ss(c.rest);
    std::string what, arg;
    ss >> what;
    std::getline(ss, arg);
    arg = trim(arg);
    if (what == "verdict") {
      std::string got = app.results.report ? std::string(verdict_name(app.results.report->verdict))
                        : app.results.runner_died ? "runner_died"
                        : app.results.cancelled   ? "cancelled"
                                                  : "none";
      if (arg == "failed" ? (got == "passed" || got == "none") : got != arg)
        fail(fmt::format("verdict is {} ({})", got,
                         app.results.report ? app.results.report->summary : app.results.error));
      else
        ok("verdict " + got);
    } else if (what == "attempts") {
      int n = app.puzzle.puzzle && app.progress.count(app.puzzle.puzzle->id)
                  ? app.progress[app.puzzle.puzzle->id].attempts
                  : 0;
      if (n != std::atoi(arg.c_str()))
        fail(fmt::format("{} attempts in the store", n));
      else
        ok(fmt::format("{} attempts in the store", n));
    } else if (what == "hints-shown") {
      if (app.puzzle.hints_shown != std::atoi(arg.c_str()))
        fail(fmt::format("{} hint(s) shown", app.puzzle.hints_shown));
      else
        ok(fmt::format("{} hint(s) shown", app.puzzle.hints_shown));
    } else if (what == "puzzle" || what == "lesson") {
      // What is open in the reading column's tabs.
      std::string got = what == "puzzle"
                            ? (app.puzzle.puzzle ? app.puzzle.puzzle->id : std::string("none"))
                            : (app.lesson.lesson ? app.lesson.lesson->id : std::string("none"));
      if (got != arg)
        fail(fmt::format("the open {} is {}", what, got));
      else
        ok(fmt::format("the open {} is {}", what, got));
    } else if (what == "attempt-shown") {
      // The Results pane's "attempt N": the learner's own checks, not the store's row ids.
      if (app.results.attempt_number != std::atoi(arg.c_str()))
        fail(fmt::format("the Results pane shows attempt {} (store row {})",
                         app.results.attempt_number, app.results.attempt));
      else
        ok(fmt::format("the Results pane shows attempt {} (store row {})",
                       app.results.attempt_number, app.results.attempt));
    } else if (what == "stale") {
      // The result on show is a previous one, dimmed and marked "previous run" (true), or the
      // newest (false).
      bool want = arg == "true";
      bool shown = app.results.stale && app.results.report;
      if (shown != want)
        fail(fmt::format("a previous result marked stale: {}", shown));
      else
        ok(fmt::format("a previous result marked stale: {}", shown));
    } else if (what == "stale-shown") {
      // Since the last click, a frame drew the previous result dimmed, before the new check's
      // first case or answer replaced it (a fast check replaces it within a few frames).
      int n = app.stale_frames - stale_mark_;
      if (n <= 0)
        fail("no frame showed the previous result as stale since the click");
      else
        ok(fmt::format("{} frame(s) showed the previous result as stale", n));
    } else if (what == "markers-at-least") {
      int n = int(app.puzzle.editor.markers.size());
      if (n < std::atoi(arg.c_str()))
        fail(fmt::format("{} markers", n));
      else
        ok(fmt::format("{} markers, first on line {}: {}", n, app.puzzle.editor.markers[0].line,
                       app.puzzle.editor.markers[0].message));
    } else if (what == "conflict") {
      bool want = arg == "true";
      if (app.puzzle.conflict != want)
        fail(fmt::format("conflict is {}", app.puzzle.conflict));
      else
        ok(fmt::format("conflict is {}", want));
    } else if (what == "file-contains") {
      auto t = read_file(app.puzzle.file.path());
      if (!t || t->find(arg) == std::string::npos)
        fail("the file on disk does not contain it");
      else
        ok("the file on disk contains it");
    } else if (what == "editor-contains") {
      if (app.puzzle.text.text().find(arg) == std::string::npos)
        fail("the editor does not contain it");
      else
        ok("the editor contains it");
    } else if (what == "running") {
      // The learner's run shows that it started, at once after the click.
      if (!app.run || app.run->reference || app.run->phase.empty())
        fail("no run of the learner's in progress");
      else {
        double ms = 1e3 * (app.run->started - click_now_);
        if (click_now_ > 0 && ms > std::atof(arg.empty() ? "100" : arg.c_str()))
          fail(fmt::format("the run showed '{}' {:.0f} ms after the click", app.run->phase, ms));
        else
          ok(fmt::format("the run showed '{}' {:.0f} ms after the click", app.run->phase, ms));
      }
    } else if (what == "background-running") {
      // The solution's check for the roofline is in progress (what a Run must cancel).
      if (!app.run || !app.run->reference)
        fail("no background check in progress");
      else
        ok(fmt::format("the background check of {} is at '{}'", app.run->file, app.run->phase));
    } else if (what == "superseded") {
      if (app.runs_superseded < std::atoi(arg.c_str()))
        fail(fmt::format("{} run(s) superseded and cancelled", app.runs_superseded));
      else
        ok(fmt::format("{} run(s) superseded and cancelled", app.runs_superseded));
    } else if (what == "runner-restarted") {
      if (app.runner->starts() < 2)
        fail(fmt::format("the runner started {} time(s)", app.runner->starts()));
      else
        ok(fmt::format("the runner started {} times", app.runner->starts()));
    } else {
      fail("unknown expectation " + what);
    }
    return true;
  }
  if (v == "kill-runner" || v == "kill-runner-busy") {
    // Busy: the runner has reported on a learner's request it has not been killed under yet.
    bool ready = v == "kill-runner" || (app.run && !app.run->reference && app.run->acknowledged &&
                                        app.run->id != killed_run_);
    if (!ready) {
      if (waited > 120) {
        fail("nothing ran");
        return true;
      }
      return false;
    }
    pid_t pid = app.runner->pid();
    if (pid <= 0)
      fail("no runner is running");
    else {
      ::kill(pid, SIGKILL);
      if (app.run) killed_run_ = app.run->id;
      ok(fmt::format("sent SIGKILL to the runner (pid {}) during '{}'", pid,
                     app.run ? app.run->phase : "idle"));
    }
    seq_mark_ = app.results.results_seq;
    return true;
  }
  if (v == "screenshot") {
    shot_ = c.rest;
    return true;
  }
  if (v == "state") {
    nlohmann::json j;
    j["open_item"] = app.settings.open_item;
    j["puzzle"] = app.puzzle.puzzle ? app.puzzle.puzzle->id : "";
    j["verdict"] = app.results.report ? std::string(verdict_name(app.results.report->verdict)) : "";
    j["summary"] = app.results.report ? app.results.report->summary : "";
    j["device"] = app.results.report ? app.results.report->device.name : "";
    std::string explained; // the first failing case's explanation by the simulator (GPU runs)
    if (app.results.report)
      for (auto& c : app.results.report->cases)
        if (c.verdict != Verdict::passed && explained.empty()) explained = c.sim_explanation;
    j["sim_explanation"] = explained;
    j["error"] = app.results.error;
    j["runner_died"] = app.results.runner_died;
    j["runner_exit"] = app.device.exit_note;
    j["runner_starts"] = app.runner->starts();
    j["markers"] = app.puzzle.editor.markers.size();
    j["file"] = app.puzzle.file.path().string();
    j["editor_lines"] = app.puzzle.text.line_count();
    int attempts = 0;
    if (app.store) attempts = int(app.store->attempt_summaries().size());
    j["store_attempts"] = attempts;
    nlohmann::json prog = nlohmann::json::object();
    for (auto& [k, p] : app.progress)
      prog[k] = {{"attempts", p.attempts}, {"passed", p.passed}, {"medal", p.medal}};
    j["progress"] = prog;
    j["first_frame_ms"] = first_frame_ms_;
    j["first_frame_since_exec_ms"] = first_frame_exec_ms_;
    j["fps"] = fps_;
    j["frame_ms"] = frame_ms_;
    j["imgui_ms"] = build_ms_;
    j["opengl_ms"] = render_ms_;
    long rss, peak;
    rss_kib(rss, peak);
    j["rss_kib"] = rss;
    j["peak_rss_kib"] = peak;
    j["roofline_points"] = app.roof.panel.points.size();
    j["tune_rows"] = app.results.tune ? app.results.tune->rows.size() : 0;
    j["tune_winner"] =
        app.results.tune && app.results.tune->winner >= 0
            ? config_text(app.results.tune->rows[size_t(app.results.tune->winner)].config)
            : "";
    j["sweep_series"] = app.results.sweep ? app.results.sweep->series.size() : 0;
    // The roofline pane's text as drawn last frame, for tests that none of it collides.
    nlohmann::json texts = nlohmann::json::array();
    for (auto& t : app.roof.panel.drawn_text)
      texts.push_back(
          {{"text", t.text}, {"kind", t.kind}, {"box", {t.box.x, t.box.y, t.box.z, t.box.w}}});
    const ImVec4& pane = app.roof.pane;
    const TextBox& plot = app.roof.panel.layout.frame.rect;
    j["roofline"] = {{"pane", {pane.x, pane.y, pane.z, pane.w}},
                     {"plot", {plot.x0, plot.y0, plot.x1, plot.y1}},
                     {"texts", texts},
                     {"legend", app.roof.panel.layout.legend.size()},
                     {"legend_left_out", app.roof.panel.layout.legend_left_out}};
    std::ofstream(c.rest) << j.dump(2) << "\n";
    ok("wrote " + c.rest);
    return true;
  }
  if (v == "bench-load") {
    int lines = std::max(1, std::atoi(c.rest.c_str()));
    std::string text;
    const std::string& base = app.puzzle.text.text();
    for (int i = 0; i < lines; ++i) {
      if (i) text += '\n';
      text += fmt::format("  acc = fmaf(a[i + {}], b[i + {}], acc);  // line {} of a long kernel",
                          i, i, i + 1);
    }
    app.puzzle.text.replace_all(base + "\n" + text);
    app.puzzle.last_edit = app.now;
    ok(fmt::format("the editor holds {} lines", app.puzzle.text.line_count()));
    return true;
  }
  if (v == "bench-points") {
    int n = std::max(0, std::atoi(c.rest.c_str()));
    app.roof.bench_points.clear();
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < n; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      double fi = double(x % 10000) / 10000.0;
      double fp = double((x >> 20) % 10000) / 10000.0;
      ChartPoint p;
      p.intensity = std::pow(10.0, -2 + 4 * fi);
      p.gflops = std::pow(10.0, 1 + 4 * fp);
      p.label = fmt::format("attempt {}", i + 1);
      p.tooltip = "synthetic (benchmark)";
      app.roof.bench_points.push_back(p);
    }
    app.roof.dirty = true;
    ok(fmt::format("{} roofline points", n));
    return true;
  }
  if (v == "bench-frames") {
    int n = std::max(1, std::atoi(c.rest.c_str()));
    if (frame_in_cmd_ == 0) {
      bench_start_ = steady_s();
      build_sum_ = render_sum_ = 0;
      return false;
    }
    build_sum_ += app.build_ms;
    render_sum_ += app.render_ms;
    if (frame_in_cmd_ < n) return false;
    build_ms_ = build_sum_ / n;
    render_ms_ = render_sum_ / n;
    double dt = steady_s() - bench_start_;
    frame_ms_ = 1e3 * dt / n;
    fps_ = n / dt;
    long rss, peak;
    rss_kib(rss, peak);
    ok(fmt::format("fps={:.1f} frame_ms={:.2f} (ImGui {:.2f}, OpenGL and swap {:.2f}) over {} "
                   "frames; {} vertices "
                   "in {} draw commands; rss_mib={:.1f} peak_rss_mib={:.1f}",
                   fps_, frame_ms_, build_ms_, render_ms_, n, app.draw_vertices, app.draw_commands,
                   rss / 1024.0, peak / 1024.0));
    return true;
  }
  if (v == "print") {
    ok(c.rest);
    return true;
  }
  if (v == "quit") {
    finished_ = true;
    return true;
  }
  fail("unknown command");
  return true;
}

void Script::after_render(App& app, int w, int h) {
  if (shot_.empty()) return;
  std::vector<unsigned char> px(size_t(w) * size_t(h) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  // OpenGL's rows go bottom-up; PNG's top-down.
  std::vector<unsigned char> flipped(px.size());
  for (int y = 0; y < h; ++y)
    std::memcpy(&flipped[size_t(y) * size_t(w) * 4], &px[size_t(h - 1 - y) * size_t(w) * 4],
                size_t(w) * 4);
  for (size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;
  ShotStats s = stats_of(flipped, w, h);
  if (!stbi_write_png(shot_.c_str(), w, h, 4, flipped.data(), w * 4)) {
    ++failures_;
    fmt::print("script: FAIL cannot write {}\n", shot_);
  } else {
    fmt::print("screenshot {} {}x{} colours={} drawn={:.0f}%\n", shot_, w, h, s.distinct,
               100 * s.non_bg);
  }
  std::fflush(stdout);
  shot_.clear();
}

} // namespace wb::gui
