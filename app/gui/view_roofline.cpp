// Roofline: the device's roofs (measured solid, datasheet dashed; on the simulator, the modelled
// GPU's datasheet), the learner's earlier attempts as a fading trail, the reference solution, and
// the result on show. Hover for figures; click a trail point to show that attempt.
#include "app.hpp"

#include "core/format_figure.hpp"

#include "core/chart_labels.hpp"
#include "core/roofline.hpp"

#include <fmt/format.h>

namespace wb::gui {

namespace {

std::string point_tooltip(double gbps, double sol, double time_us, const std::string& verdict,
                          const std::string& when) {
  std::string t = bandwidth_text(gbps);
  if (time_us > 0) t += ", " + time_text(time_us);
  if (sol > 0) t += ", " + percent_text(sol) + " of speed of light";
  if (!verdict.empty()) t += "\n" + verdict_title(verdict);
  if (!when.empty()) t += ", " + when;
  return t;
}

std::string results_point_name(const App& app) {
  return app.results.attempt_number > 0 ? fmt::format("attempt {}", app.results.attempt_number)
                                        : "this run";
}

void rebuild(App& app) {
  RoofState& rs = app.roof;
  RoofPanel& p = rs.panel;
  p.points.clear();
  p.chart = {};
  const runner::BackendStatus* dev = app.device.active();
  bool sim = !dev || dev->kind == "sim";
  if (!sim) {
    const GpuProfile* prof = profile_for_device(dev->device);
    p.chart.roofs = device_roofs(app.device.measured, prof);
    p.chart.title = dev->device.name;
  } else {
    const GpuProfile* prof = find_profile(app.settings.gpu_profile);
    if (!prof) prof = &model_profile(dev ? dev->device : DeviceInfo{});
    p.chart.roofs = device_roofs({}, prof);
    p.chart.title = "predicted: " + prof->name;
  }
  const Puzzle* pz = app.puzzle.puzzle;
  std::string kind = dev ? dev->kind : "sim";
  if (pz && app.store) {
    try {
      bool have_ref = false;
      auto attempts = app.store->attempt_summaries(pz->id, 1000);
      // The learner's own numbering ("attempt 3" is their third Run), as the Results pane says.
      std::map<int64_t, int> number;
      int n = 0;
      for (auto it = attempts.rbegin(); it != attempts.rend(); ++it)
        if (it->file.rfind("solutions/", 0) != 0) number[it->id] = ++n;
      for (auto& a : attempts) {
        if (!a.has_point() || a.backend != kind) continue;
        if (!sim && a.device_uuid != dev->device.uuid) continue;
        bool solution = a.file.rfind("solutions/", 0) == 0;
        if (solution) {
          if (have_ref) continue;
          have_ref = true;
        }
        if (!solution && a.id == app.results.attempt) continue; // drawn as the current point
        ChartPoint cp;
        cp.kind = solution ? ChartPoint::reference : ChartPoint::trail;
        cp.intensity = a.intensity;
        cp.gflops = a.gflops;
        cp.predicted = a.predicted;
        cp.attempt = a.id;
        cp.label = solution ? "solution" : fmt::format("attempt {}", number[a.id]);
        cp.tooltip = point_tooltip(a.gbps, a.sol, a.time_us, a.verdict, a.created_at);
        p.points.push_back(std::move(cp));
      }
    } catch (const std::exception& e) {
      app.store_error = e.what();
    }
  }
  if (app.results.report && app.results.report->perf) {
    const PerfReport& pr = *app.results.report->perf;
    if (pr.gflops > 0 && pr.intensity > 0) {
      ChartPoint cp;
      cp.kind = ChartPoint::current;
      cp.intensity = pr.intensity;
      cp.gflops = pr.gflops;
      cp.predicted = pr.predicted;
      cp.attempt = app.results.attempt;
      cp.label = app.results.when == "just now"
                     ? "your kernel"
                     : fmt::format("attempt {}", app.results.attempt_number);
      cp.tooltip =
          point_tooltip(pr.gbps, pr.speed_of_light, pr.timing.ok ? pr.timing.median_us : 0,
                        std::string(verdict_name(app.results.report->verdict)), app.results.when);
      p.points.push_back(std::move(cp));
    }
  }
  // A tune's configurations, each where it ran (or is predicted to run).
  if (app.results.tune && pz && app.results.tune->puzzle == pz->id)
    for (auto& row : app.results.tune->rows) {
      if (row.verdict != Verdict::passed || row.gflops <= 0 || row.intensity <= 0) continue;
      ChartPoint cp;
      cp.kind = ChartPoint::trail;
      cp.intensity = row.intensity;
      cp.gflops = row.gflops;
      cp.predicted = row.predicted;
      cp.label = "tune " + config_text(row.config);
      cp.tooltip = point_tooltip(row.gbps, row.sol, row.us, "passed", "this tune");
      p.points.push_back(std::move(cp));
    }
  for (auto& b : rs.bench_points) p.points.push_back(b);
  p.invalidate();
  rs.dirty = false;
  rs.for_puzzle = pz ? pz->id : "";
}

} // namespace

void draw_roofline(App& app) {
  RoofState& rs = app.roof;
  if (rs.dirty || rs.for_puzzle != (app.puzzle.puzzle ? app.puzzle.puzzle->id : "")) rebuild(app);
  ImVec2 wp = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
  rs.pane = ImVec4(wp.x, wp.y, wp.x + ws.x, wp.y + ws.y);

  // The heading, as much of "Roofline  <device>  N earlier" as the pane is wide: the count goes
  // first, then the device's name is cut short.
  int trail = 0;
  for (auto& pt : rs.panel.points) trail += pt.kind == ChartPoint::trail;
  const std::string earlier = fmt::format("{} earlier", trail);
  const float avail = ImGui::GetContentRegionAvail().x, gap = ImGui::GetStyle().ItemSpacing.x;
  ImGui::PushFont(app.fonts.bold);
  const float head_w = ImGui::CalcTextSize("Roofline").x;
  ImGui::PopFont();
  const float earlier_w = 2 * gap + ImGui::CalcTextSize(earlier.c_str()).x;
  MeasureText measure = [](const std::string& t, double) {
    ImVec2 v = ImGui::CalcTextSize(t.c_str());
    return TextExtent{v.x, v.y};
  };
  const bool show_earlier = head_w + gap + measure(rs.panel.chart.title, 0).w + earlier_w <= avail;
  const std::string title = fit_text(
      rs.panel.chart.title, 0, avail - head_w - gap - (show_earlier ? earlier_w : 0), measure);
  std::vector<DrawnText> heading;
  auto drawn = [&](const std::string& t) {
    ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    heading.push_back({t, "heading", ImVec4(a.x, a.y, b.x, b.y)});
  };
  ImGui::PushFont(app.fonts.bold);
  ImGui::TextUnformatted("Roofline");
  ImGui::PopFont();
  drawn("Roofline");
  if (!title.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", title.c_str());
    drawn(title);
  }
  if (show_earlier) {
    ImGui::SameLine(0, 2 * gap);
    ImGui::TextDisabled("%s", earlier.c_str());
    drawn(earlier);
    if (ImGui::IsItemHovered())
      tooltip_text("Your earlier attempts that passed, drawn as a fading trail; a failing one has "
                   "no point (a wrong kernel's speed means nothing).");
  }
  ImGui::Separator();
  // A kernel with no point says why, rather than leave an empty chart.
  if (app.results.report && !app.results.partial && !app.results.compile_only &&
      app.results.report->verdict != Verdict::passed) {
    text_wrap_disabled(fmt::format(
        "no point for {}: the kernel {}", results_point_name(app),
        app.results.report->verdict == Verdict::compile_error ? "did not compile" : "is wrong"));
    drawn("no point");
  }
  ImVec2 avail_chart = ImGui::GetContentRegionAvail();
  draw_roofline_chart(rs.panel, avail_chart, app.fonts.small);
  rs.panel.drawn_text.insert(rs.panel.drawn_text.end(), heading.begin(), heading.end());
  if (rs.panel.clicked_attempt > 0) show_attempt(app, rs.panel.clicked_attempt);
}

} // namespace wb::gui
