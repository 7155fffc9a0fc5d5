// Roofline: the device's roofs (measured solid, datasheet dashed; on the simulator, the modelled
// GPU's datasheet), the learner's earlier attempts as a fading trail, the reference solution, and
// the result on show. Hover for figures; click a trail point to show that attempt.
#include "app.hpp"

#include "core/roofline.hpp"

#include <fmt/format.h>

namespace wb::gui {

namespace {

std::string point_tooltip(double gbps, double sol, double time_us, const std::string& verdict,
                          const std::string& when) {
  std::string t = fmt::format("{:.1f} GB/s", gbps);
  if (time_us > 0) t += fmt::format(", {:.2f} us", time_us);
  if (sol > 0) t += fmt::format(", {:.0f}% of speed of light", 100 * sol);
  if (!verdict.empty()) t += "\n" + verdict_title(verdict);
  if (!when.empty()) t += ", " + when;
  return t;
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
      for (auto& a : app.store->attempt_summaries(pz->id, 1000)) {
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
        cp.label = solution ? "solution" : fmt::format("attempt {}", a.id);
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
      cp.label = app.results.when == "just now" ? "your kernel"
                                                : fmt::format("attempt {}", app.results.attempt);
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
  ImGui::PushFont(app.fonts.bold);
  ImGui::TextUnformatted("Roofline");
  ImGui::PopFont();
  ImGui::SameLine();
  ImGui::TextDisabled("%s", rs.panel.chart.title.c_str());
  int trail = 0;
  for (auto& pt : rs.panel.points) trail += pt.kind == ChartPoint::trail;
  ImGui::SameLine();
  ImGui::TextDisabled("  %d earlier", trail);
  ImGui::Separator();
  ImVec2 avail = ImGui::GetContentRegionAvail();
  draw_roofline_chart(rs.panel, avail, app.fonts.ui);
  if (rs.panel.clicked_attempt > 0) show_attempt(app, rs.panel.clicked_attempt);
}

} // namespace wb::gui
