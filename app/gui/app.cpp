// The main loop: GLFW window, OpenGL 3 context, Dear ImGui, fonts; and draw(), the whole window as
// a list of calls, one per pane, with splitters between them (ImGui 1.86 has no docking).
#include "app.hpp"
#include "gui.hpp"
#include "script.hpp"

#include <GLFW/glfw3.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fmt/format.h>
#include <fstream>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <map>
#include <sstream>
#include <unistd.h>

namespace wb::gui {

LaunchOptions& launch_options() {
  static LaunchOptions o;
  return o;
}

namespace {

double steady_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void set_style(float scale) {
  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0;
  s.ChildRounding = 3;
  s.FrameRounding = 3;
  s.GrabRounding = 3;
  s.TabRounding = 3;
  s.ScrollbarRounding = 3;
  s.WindowBorderSize = 0;
  s.ChildBorderSize = 1;
  s.ItemSpacing = ImVec2(8, 5);
  s.Colors[ImGuiCol_WindowBg] = ImVec4(0.10f, 0.10f, 0.12f, 1);
  // Child windows draw no background of their own (see draw()): the clear colour is theirs.
  s.Colors[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
  s.Colors[ImGuiCol_Border] = ImVec4(1, 1, 1, 0.08f);
  s.Colors[ImGuiCol_Header] = ImVec4(0.25f, 0.40f, 0.65f, 0.45f);
  s.ScaleAllSizes(scale);
}

// ---- layout
// -----------------------------------------------------------------------------------------

// A draggable bar between two panes; `frac` is the first pane's share of `total`.
void splitter(const char* id, ImVec2 pos, ImVec2 size, bool vertical, float& frac, float total,
              float lo, float hi) {
  ImGui::SetCursorScreenPos(pos);
  ImGui::InvisibleButton(id, size);
  bool hot = ImGui::IsItemHovered() || ImGui::IsItemActive();
  if (hot) ImGui::SetMouseCursor(vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
  if (ImGui::IsItemActive() && total > 0) {
    float d = vertical ? ImGui::GetIO().MouseDelta.x : ImGui::GetIO().MouseDelta.y;
    frac = std::clamp(frac + d / total, lo, hi);
  }
  ImU32 c = ImGui::IsItemActive() ? IM_COL32(110, 150, 220, 200)
            : hot                 ? IM_COL32(110, 150, 220, 120)
                                  : IM_COL32(0, 0, 0, 0);
  ImVec2 a = pos, b(pos.x + size.x, pos.y + size.y);
  ImGui::GetWindowDrawList()->AddRectFilled(a, b, c);
}

void pane(App& app, const char* id, ImVec2 pos, ImVec2 size, void (*fn)(App&)) {
  ImGui::SetCursorScreenPos(pos);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(8 * app.scale, 6 * app.scale));
  if (ImGui::BeginChild(id, ImVec2(std::max(1.f, size.x), std::max(1.f, size.y)), true,
                        ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse |
                            ImGuiWindowFlags_NoBackground))
    fn(app);
  ImGui::EndChild();
  ImGui::PopStyleVar();
}

} // namespace

void draw(App& app) {
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(io.DisplaySize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  // No backgrounds on the root window or the panes: glClear paints them. A software renderer
  // (Mesa's llvmpipe) pays for every full-window layer it shades, so each one removed is frames.
  ImGui::Begin("##warpbook", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_MenuBar |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoBackground);
  ImGui::PopStyleVar();
  draw_menu(app);

  Settings& s = app.settings;
  float gap = std::round(5 * app.scale);
  float status_h = ImGui::GetFrameHeight() + 6 * app.scale;
  ImVec2 o = ImGui::GetCursorScreenPos();
  float W = io.DisplaySize.x, H = io.DisplaySize.y - o.y - status_h;
  float cat_w = std::round(s.catalog_w * W);
  float rest = W - cat_w - 2 * gap;
  float read_w = std::round(s.reading_w * rest);
  float right_w = rest - read_w;
  float right_x = o.x + cat_w + read_w + 2 * gap;
  float dev_h = std::round(s.device_h * H);
  float cat_h = H - dev_h - gap;
  float ed_h = std::round(s.editor_h * H);
  float bottom_h = H - ed_h - gap;
  float res_w = std::round(s.results_w * right_w);
  float roof_w = right_w - res_w - gap;

  pane(app, "Catalog", o, ImVec2(cat_w, cat_h), draw_catalog);
  pane(app, "Device", ImVec2(o.x, o.y + cat_h + gap), ImVec2(cat_w, dev_h), draw_device);
  pane(app, "Reading", ImVec2(o.x + cat_w + gap, o.y), ImVec2(read_w, H), draw_reading);
  pane(app, "Editor", ImVec2(right_x, o.y), ImVec2(right_w, ed_h), draw_editor_pane);
  pane(app, "Results", ImVec2(right_x, o.y + ed_h + gap), ImVec2(res_w, bottom_h), draw_results);
  pane(app, "Roofline", ImVec2(right_x + res_w + gap, o.y + ed_h + gap), ImVec2(roof_w, bottom_h),
       draw_roofline);

  // The gaps between panes, a shade darker than the panes.
  ImDrawList* bg = ImGui::GetWindowDrawList();
  ImU32 gap_col = IM_COL32(20, 20, 24, 255);
  bg->AddRectFilled(ImVec2(o.x + cat_w, o.y), ImVec2(o.x + cat_w + gap, o.y + H), gap_col);
  bg->AddRectFilled(ImVec2(o.x, o.y + cat_h), ImVec2(o.x + cat_w, o.y + cat_h + gap), gap_col);
  bg->AddRectFilled(ImVec2(right_x - gap, o.y), ImVec2(right_x, o.y + H), gap_col);
  bg->AddRectFilled(ImVec2(right_x, o.y + ed_h), ImVec2(right_x + right_w, o.y + ed_h + gap),
                    gap_col);
  bg->AddRectFilled(ImVec2(right_x + res_w, o.y + ed_h + gap),
                    ImVec2(right_x + res_w + gap, o.y + H), gap_col);
  splitter("##split_catalog", ImVec2(o.x + cat_w, o.y), ImVec2(gap, H), true, s.catalog_w, W, 0.08f,
           0.4f);
  splitter("##split_device", ImVec2(o.x, o.y + cat_h), ImVec2(cat_w, gap), false, s.device_h, -H,
           0.08f, 0.8f);
  splitter("##split_reading", ImVec2(o.x + cat_w + gap + read_w, o.y), ImVec2(gap, H), true,
           s.reading_w, rest, 0.15f, 0.75f);
  splitter("##split_editor", ImVec2(right_x, o.y + ed_h), ImVec2(right_w, gap), false, s.editor_h,
           H, 0.2f, 0.85f);
  splitter("##split_results", ImVec2(right_x + res_w, o.y + ed_h + gap), ImVec2(gap, bottom_h),
           true, s.results_w, right_w, 0.2f, 0.8f);

  ImGui::SetCursorScreenPos(ImVec2(o.x, o.y + H));
  draw_status_bar(app);
  draw_dialogs(app);
  ImGui::End();
}

} // namespace wb::gui

// ---- the program
// ----------------------------------------------------------------------------------------

namespace {

// Milliseconds since this process was started by the kernel (10 ms resolution), so that the
// first-frame figure includes everything before main().
double ms_since_exec() {
  std::ifstream in("/proc/self/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t p = s.rfind(')');
  if (p == std::string::npos) return -1;
  std::istringstream ss(s.substr(p + 2));
  std::string tok;
  long long start = 0;
  for (int field = 3; ss >> tok; ++field)
    if (field == 22) {
      start = std::atoll(tok.c_str());
      break;
    }
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  double now_ms = double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
  return now_ms - double(start) * 1e3 / double(sysconf(_SC_CLK_TCK));
}

void glfw_error(int code, const char* what) {
  fmt::print(stderr, "warpbook: GLFW error {}: {}\n", code, what);
}

} // namespace

int run_gui(int argc, char** argv, const std::string& catalog, const std::string& data_dir) {
  using namespace wb::gui;
  double t_start = steady_s();
  const LaunchOptions& lo = launch_options();
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) {
    fmt::print(stderr,
               "warpbook: cannot open a window (no display?); the terminal commands still work: "
               "warpbook --help\n");
    return 4;
  }
  App app;
  app.now = t_start;
  init_app(app, catalog, data_dir);

  Script script;
  if (!lo.script.empty()) {
    std::string err;
    if (!script.load(lo.script, err)) {
      fmt::print(stderr, "warpbook: {}\n", err);
      glfwTerminate();
      return 4;
    }
  }

  int w = app.settings.window_w, h = app.settings.window_h;
  if (!lo.size.empty()) std::sscanf(lo.size.c_str(), "%dx%d", &w, &h);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  if (app.settings.maximized && lo.size.empty()) glfwWindowHint(GLFW_MAXIMIZED, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(w, h, "Warpbook", nullptr, nullptr);
  if (!window) {
    fmt::print(stderr, "warpbook: cannot create an OpenGL 3 window\n");
    glfwTerminate();
    return 4;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(lo.no_vsync || script.active() ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr; // the layout lives in our settings file
  float xs = 1, ys = 1;
  glfwGetWindowContentScale(window, &xs, &ys);
  app.scale = app.settings.ui_scale > 0 ? app.settings.ui_scale : std::max(1.0f, std::max(xs, ys));
  set_style(app.scale);
  load_fonts(app, app.scale);
  // Views made before the fonts existed get them now.
  app.lesson.view.fonts = app.fonts.md();
  app.puzzle.statement_view.fonts = app.fonts.md();
  app.puzzle.hints_view.fonts = app.fonts.md();
  app.puzzle.editor.font = app.fonts.mono;
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");

  bool first = true;
  int quiet_frames = 0;
  while (!app.quit) {
    // Draw at full speed while something moves (a run, a script, input); otherwise wait for input
    // with a timeout that keeps the caret blinking and the runner's news arriving.
    bool busy =
        app.run || app.device.probe_id || script.active() || lo.no_vsync || quiet_frames > 0;
    if (busy)
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(0.25);
    if (glfwWindowShouldClose(window)) break;
    tick(app, steady_s());
    if (io.MouseDelta.x != 0 || io.MouseDelta.y != 0 || io.InputQueueCharacters.Size > 0 ||
        ImGui::IsAnyMouseDown())
      quiet_frames = 3;
    else if (quiet_frames > 0)
      --quiet_frames;

    double t_frame = steady_s();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    script.before_frame(app, io); // injected input goes in after the backend's
    ImGui::NewFrame();
    draw(app);
    ImGui::Render();
    double t_built = steady_s();
    int fw, fh;
    glfwGetFramebufferSize(window, &fw, &fh);
    glViewport(0, 0, fw, fh);
    glClearColor(0.12f, 0.12f, 0.14f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    script.after_render(app, fw, fh);
    glfwSwapBuffers(window);
    app.build_ms = 1e3 * (t_built - t_frame);
    if (ImDrawData* dd = ImGui::GetDrawData()) {
      app.draw_vertices = dd->TotalVtxCount;
      app.draw_commands = 0;
      for (int i = 0; i < dd->CmdListsCount; ++i)
        app.draw_commands += dd->CmdLists[i]->CmdBuffer.Size;
    }
    app.render_ms = 1e3 * (steady_s() - t_built);
    ++app.frame;
    if (first) {
      first = false;
      script.first_frame(1e3 * (steady_s() - t_start), ms_since_exec());
    }
    if (script.done()) break;
  }
  int w_now, h_now;
  glfwGetWindowSize(window, &w_now, &h_now);
  if (lo.size.empty() && !glfwGetWindowAttrib(window, GLFW_MAXIMIZED)) {
    app.settings.window_w = std::clamp(w_now, 640, 16384);
    app.settings.window_h = std::clamp(h_now, 400, 16384);
  }
  app.settings.maximized = glfwGetWindowAttrib(window, GLFW_MAXIMIZED);
  shutdown_app(app);
  app.textures.clear();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return script.exit_code();
}
