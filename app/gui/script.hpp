// The scripted test mode: `warpbook --script FILE` drives the real window, one command per line,
// for the GUI tests and the benchmark. Commands act the way a learner does (clicks and keys are
// injected as ImGui input, over several frames) or call the same actions the buttons call.
//
//   open puzzle 01-vector-add      open lesson 0001-programs-not-threads     tab puzzle|lesson
//   scroll-lesson PIXELS           goto-line N (the editor)
//   mouse X Y                      move the mouse there (hover, no click)
//   click NAME                     a marked button: run, cancel, compile, hint, solution,
//                                  keep-mine, quiz1-choice2, quiz1-check, puzzle:ID, ...
//   key ctrl+enter                 key presses: ctrl/shift + enter tab backspace delete a..z ...
//   type TEXT                      characters into the editor (it takes focus)
//   load FILE                      replace the editor's text with FILE's (an undoable edit)
//   write-disk FILE                another editor writes FILE's text into the learner's file
//   run                            what Ctrl+Enter does
//   wait-result [S]   wait-idle [S]   wait-hello [S]   wait S   frames N
//   wait-partial [S]               until a case of the running check is shown
//   wait-background [S]            until the solution's check for the roofline runs (default 10 s)
//   expect verdict V|failed | attempts N | markers-at-least N | conflict true|false |
//          file-contains TEXT | editor-contains TEXT | runner-restarted |
//          running [MS] (a learner's run shows its phase, MS at most after the last click) |
//          background-running (the solution's check for the roofline) |
//          superseded N (runs a second Run cancelled, as the runner confirmed)
//          puzzle ID | lesson ID (what is open) | hints-shown N |
//          attempt-shown N (the Results pane's "attempt N": the learner's own checks) |
//          stale true|false (the result on show is the previous one, dimmed as "previous run") |
//          stale-shown (since the last click, a frame drew the previous result dimmed)
//   resolve mine|disk              answer the "changed on disk" question
//   kill-runner                    SIGKILL the runner now; kill-runner-busy: once a check runs
//                                  (one the runner has reported on, not killed under before)
//   screenshot FILE.png            this frame, read back with glReadPixels
//   state FILE.json                what the window knows (verdicts, store rows, figures)
//   bench-load LINES   bench-points N   bench-frames N       the benchmark's pieces
//   print TEXT   quit
//   deadline S                     the whole window, from here to its exit, within S seconds:
//                                  past it the window says which command it was stuck in and
//                                  ends (exit code 3), wherever it hangs (a frame, its shutdown)
//
// Lines starting with # are comments. The exit code is 0 when every expectation held.
#pragma once
#include <memory>
#include <string>
#include <vector>

struct ImGuiIO;

namespace wb::gui {

struct App;

class Script {
public:
  bool load(const std::string& path, std::string& error);
  bool active() const { return !cmds_.empty() && !finished_; }
  bool done() const { return finished_; }
  int exit_code() const { return failures_ ? 1 : 0; }

  void before_frame(App& app, ImGuiIO& io);        // runs commands; injects input for this frame
  void after_render(App& app, int fb_w, int fb_h); // screenshots
  void first_frame(double ms_since_run_gui, double ms_since_exec);

private:
  struct Cmd {
    int line = 0;
    std::string verb, rest;
  };
  bool step(App& app, ImGuiIO& io); // true: the command finished
  void fail(const std::string& why);
  void ok(const std::string& what);

  void watch(App& app); // tells the deadline's watchdog where the script is
  std::vector<Cmd> cmds_;
  size_t pc_ = 0;
  struct Watchdog;
  std::shared_ptr<Watchdog> watchdog_; // set by `deadline`
  bool finished_ = false;
  int failures_ = 0;
  int frame_in_cmd_ = 0;
  double cmd_started_ = 0;
  int seq_mark_ = 0;
  int stale_mark_ = 0;      // app.stale_frames at the last click
  uint64_t killed_run_ = 0; // the request kill-runner-busy last killed the runner under
  double click_now_ = 0;    // app.now when the last click pressed the mouse button
  std::string shot_;        // screenshot wanted after this frame's render
  // Keys held for an injected press, released next frame.
  std::vector<int> held_keys_;
  bool held_ctrl_ = false, held_shift_ = false;
  int key_repress_ = 0; // times the held keys were pressed again after Dear ImGui cleared them
  // Figures.
  double first_frame_ms_ = -1, first_frame_exec_ms_ = -1;
  double fps_ = 0, frame_ms_ = 0, build_ms_ = 0, render_ms_ = 0, build_sum_ = 0, render_sum_ = 0;
  int bench_frames_ = 0;
  double bench_start_ = 0;
};

// Resident memory of this process, in KiB: now and at its peak.
void rss_kib(long& now, long& peak);

} // namespace wb::gui
