#include "settings.hpp"

#include "core/workspace.hpp"

#include <charconv>
#include <fmt/format.h>
#include <functional>

namespace wb::gui {

namespace {

// One row per setting: its key, how to print it, how to read it (with its range).
struct Field {
  const char* key;
  std::function<std::string(const Settings&)> get;
  std::function<std::string(Settings&, const std::string&)> set; // "" or the problem
};

template <class T>
std::function<std::string(Settings&, const std::string&)> number(T Settings::*m, T lo, T hi) {
  return [=](Settings& s, const std::string& v) -> std::string {
    T x{};
    auto r = std::from_chars(v.data(), v.data() + v.size(), x);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size())
      return fmt::format("'{}' is not a number", v);
    if (x < lo || x > hi) return fmt::format("{} is out of range {}..{}", v, lo, hi);
    s.*m = x;
    return {};
  };
}

std::function<std::string(Settings&, const std::string&)> flag(bool Settings::*m) {
  return [=](Settings& s, const std::string& v) -> std::string {
    if (v == "true" || v == "1")
      s.*m = true;
    else if (v == "false" || v == "0")
      s.*m = false;
    else
      return fmt::format("'{}' is not true or false", v);
    return {};
  };
}

std::function<std::string(Settings&, const std::string&)> text(std::string Settings::*m) {
  return [=](Settings& s, const std::string& v) -> std::string {
    s.*m = v;
    return {};
  };
}

std::function<std::string(Settings&, const std::string&)> one_of(std::string Settings::*m,
                                                                 std::vector<std::string> ok) {
  return [=](Settings& s, const std::string& v) -> std::string {
    for (auto& o : ok)
      if (o == v) {
        s.*m = v;
        return {};
      }
    return fmt::format("'{}' is not one of the choices", v);
  };
}

template <class T> std::function<std::string(const Settings&)> show(T Settings::*m) {
  return [=](const Settings& s) {
    if constexpr (std::is_same_v<T, bool>)
      return std::string(s.*m ? "true" : "false");
    else if constexpr (std::is_same_v<T, std::string>)
      return s.*m;
    else
      return fmt::format("{}", s.*m);
  };
}

const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      {"window_w", show(&Settings::window_w), number(&Settings::window_w, 640, 16384)},
      {"window_h", show(&Settings::window_h), number(&Settings::window_h, 400, 16384)},
      {"maximized", show(&Settings::maximized), flag(&Settings::maximized)},
      {"font_size", show(&Settings::font_size), number(&Settings::font_size, 8.f, 40.f)},
      {"ui_scale", show(&Settings::ui_scale), number(&Settings::ui_scale, 0.f, 4.f)},
      {"catalog_w", show(&Settings::catalog_w), number(&Settings::catalog_w, 0.05f, 0.5f)},
      {"reading_w", show(&Settings::reading_w), number(&Settings::reading_w, 0.1f, 0.8f)},
      {"device_h", show(&Settings::device_h), number(&Settings::device_h, 0.05f, 0.8f)},
      {"editor_h", show(&Settings::editor_h), number(&Settings::editor_h, 0.15f, 0.9f)},
      {"results_w", show(&Settings::results_w), number(&Settings::results_w, 0.15f, 0.85f)},
      {"runner_command", show(&Settings::runner_command), text(&Settings::runner_command)},
      {"backend", show(&Settings::backend), one_of(&Settings::backend, {"auto", "cuda", "sim"})},
      {"request_timeout_s", show(&Settings::request_timeout_s),
       number(&Settings::request_timeout_s, 1.f, 3600.f)},
      {"gpu_profile", show(&Settings::gpu_profile), text(&Settings::gpu_profile)},
      {"tab_width", show(&Settings::tab_width), number(&Settings::tab_width, 1, 8)},
      {"gutter_counters", show(&Settings::gutter_counters), flag(&Settings::gutter_counters)},
      {"autosave_s", show(&Settings::autosave_s), number(&Settings::autosave_s, 0.1f, 2.f)},
      {"open_item", show(&Settings::open_item), text(&Settings::open_item)},
      {"open_lesson", show(&Settings::open_lesson), text(&Settings::open_lesson)},
      {"reading_tab", show(&Settings::reading_tab), number(&Settings::reading_tab, 0, 1)},
  };
  return f;
}

std::string trim(std::string s) {
  size_t a = s.find_first_not_of(" \t\r");
  size_t b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

} // namespace

Settings parse_settings(const std::string& body) {
  Settings s;
  int line_no = 0;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t nl = body.find('\n', pos);
    if (nl == std::string::npos) nl = body.size();
    std::string line = trim(body.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) {
      s.warnings.push_back(fmt::format("line {}: expected key = value", line_no));
      continue;
    }
    std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    const Field* f = nullptr;
    for (auto& x : fields())
      if (key == x.key) f = &x;
    if (!f) {
      s.warnings.push_back(fmt::format("line {}: unknown setting '{}' (ignored)", line_no, key));
      continue;
    }
    Settings before = s;
    if (auto why = f->set(s, value); !why.empty())
      s.warnings.push_back(
          fmt::format("line {}: {}: {}; using {}", line_no, key, why, f->get(before)));
  }
  return s;
}

std::string settings_text(const Settings& s) {
  std::string out =
      "# Warpbook window settings (rewritten by the window; unknown keys are ignored)\n";
  for (auto& f : fields()) out += fmt::format("{} = {}\n", f.key, f.get(s));
  return out;
}

Settings load_settings(const std::filesystem::path& file) {
  auto t = read_file(file);
  return t ? parse_settings(*t) : Settings{};
}

std::string save_settings(const Settings& s, const std::filesystem::path& file) {
  return write_file_atomic(file, settings_text(s));
}

} // namespace wb::gui
