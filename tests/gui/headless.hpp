// A Dear ImGui context with no window and no renderer, for testing views: frames are built and
// thrown away; input is injected the way the GLFW backend would (four frames per click).
#pragma once
#include <functional>
#include <imgui.h>

namespace wb::test {

struct Headless {
  ImFont* big = nullptr; // the default font at twice the size (headings)

  explicit Headless(float w = 1000, float h = 700) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(w, h);
    io.IniFilename = nullptr;
    io.Fonts->AddFontDefault();
    ImFontConfig cfg;
    cfg.SizePixels = 26;
    big = io.Fonts->AddFontDefault(&cfg);
    unsigned char* px;
    int tw, th;
    io.Fonts->GetTexDataAsRGBA32(&px, &tw, &th);
    // Keys numbered like GLFW's: letters by their capital, the rest above 256.
    for (int k = 0; k < ImGuiKey_COUNT; ++k) io.KeyMap[k] = 256 + k;
    io.KeyMap[ImGuiKey_A] = 'A';
    io.KeyMap[ImGuiKey_C] = 'C';
    io.KeyMap[ImGuiKey_V] = 'V';
    io.KeyMap[ImGuiKey_X] = 'X';
    io.KeyMap[ImGuiKey_Y] = 'Y';
    io.KeyMap[ImGuiKey_Z] = 'Z';
  }
  ~Headless() { ImGui::DestroyContext(); }
  Headless(const Headless&) = delete;

  ImFont* font() const { return ImGui::GetIO().Fonts->Fonts[0]; }

  // One frame with `body` inside a full-screen window.
  void frame(const std::function<void()>& body) {
    ImGuiIO& io = ImGui::GetIO();
    io.DeltaTime = 1.0f / 60;
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(io.DisplaySize);
    ImGui::Begin("test", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings);
    body();
    ImGui::End();
    ImGui::Render();
  }

  void click(ImVec2 p, const std::function<void()>& body) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = p;
    frame(body);
    io.MouseDown[0] = true;
    frame(body);
    io.MouseDown[0] = false;
    frame(body);
    frame(body);
  }

  // A key press (held for one frame); `key` is an ImGuiKey_ or a capital letter.
  void press(int key, bool ctrl, const std::function<void()>& body, bool shift = false) {
    ImGuiIO& io = ImGui::GetIO();
    int idx = key >= 'A' && key <= 'Z' ? key : io.KeyMap[key];
    io.KeysDown[idx] = true;
    io.KeyCtrl = ctrl;
    io.KeyShift = shift;
    frame(body);
    io.KeysDown[idx] = false;
    io.KeyCtrl = io.KeyShift = false;
    frame(body);
  }

  void type(const char* s, const std::function<void()>& body) {
    ImGui::GetIO().AddInputCharactersUTF8(s);
    frame(body);
  }
};

} // namespace wb::test
