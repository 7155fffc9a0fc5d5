// Device: the backend checks run on (a GPU, or the simulator and the GPU it models), its
// ceilings, a button to measure them, and the runner: its command, its state, why it last ended.
#include "app.hpp"

#include "core/format_figure.hpp"
#include "core/perf/machine.hpp"
#include "core/roofline.hpp"

#include <fmt/format.h>

namespace wb::gui {

void draw_device(App& app) {
  DeviceState& d = app.device;
  ImGui::PushFont(app.fonts.bold);
  ImGui::TextUnformatted("Device");
  ImGui::PopFont();
  ImGui::Separator();
  ImGui::BeginChild("##device_scroll", ImVec2(0, 0), false);
  if (!d.hello) {
    ImGui::TextDisabled(app.runner->running() ? "asking the runner..." : "no runner running");
  }
  for (auto& b : d.backends) {
    ImGui::PushID(b.kind.c_str());
    bool active = d.active() == &b;
    if (b.available) {
      ImGui::TextColored(active ? ImVec4(0.5f, 0.9f, 0.55f, 1) : ImVec4(0.8f, 0.8f, 0.8f, 1),
                         "%s %s", active ? ">" : " ", b.kind == "cuda" ? "GPU" : "Simulator");
      ImGui::SameLine();
      text_wrap(b.device.name);
      if (b.kind == "cuda")
        text_wrap_disabled(fmt::format("   sm_{}{}, {} SMs, {:.0f} GiB, driver {}",
                                       b.device.cc_major, b.device.cc_minor, b.device.sm_count,
                                       b.device.memory_bytes / 1073741824.0, b.device.driver));
    } else {
      ImGui::TextDisabled("  %s: not here", b.kind == "cuda" ? "GPU" : "Simulator");
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", b.why.c_str());
      text_wrap_colored(ImVec4(0.6f, 0.6f, 0.6f, 1), "   " + b.why);
    }
    ImGui::PopID();
  }
  if (d.hello && !d.active())
    ImGui::TextColored(ImVec4(1, 0.6f, 0.4f, 1),
                       "Nothing here can run kernels: checks will say why.");

  // Ceilings.
  const runner::BackendStatus* act = d.active();
  if (act && act->kind == "cuda") {
    const GpuProfile* prof = profile_for_device(act->device);
    if (ImGui::BeginTable("##ceil", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
      ImGui::TableSetupColumn("ceiling");
      ImGui::TableSetupColumn("measured");
      ImGui::TableSetupColumn("datasheet");
      ImGui::TableHeadersRow();
      for (const char* m : {metric::dram, metric::l2, metric::shared, metric::fp32, metric::fp64,
                            metric::fp16_tc, metric::bf16_tc}) {
        double meas = 0;
        for (auto& c : d.measured)
          if (c.metric == m) meas = c.value;
        double ds = prof ? datasheet_metric(*prof, m) : 0;
        if (meas <= 0 && ds <= 0) continue;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(m);
        ImGui::TableNextColumn();
        if (meas > 0)
          ImGui::TextUnformatted(rate_text(meas, metric_unit(m)).c_str());
        else
          ImGui::TextDisabled("-");
        ImGui::TableNextColumn();
        if (ds > 0)
          ImGui::TextUnformatted(rate_text(ds, metric_unit(m)).c_str());
        else
          ImGui::TextDisabled("-");
      }
      ImGui::EndTable();
    }
    if (d.probe_id) {
      ImGui::Text("measuring: %s", d.probe_phase.c_str());
    } else {
      if (ImGui::Button(d.measured.empty() ? "Measure ceilings (3 s)" : "Measure again"))
        measure_ceilings(app);
      app.marks.add("measure");
    }
    if (!d.probe_error.empty())
      ImGui::TextColored(ImVec4(1, 0.5f, 0.4f, 1), "%s", d.probe_error.c_str());
  } else {
    // The simulator models a GPU from the table of real parts.
    ImGui::TextDisabled("Roofline predicted for:");
    const GpuProfile* cur = find_profile(app.settings.gpu_profile);
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##profile",
                          cur ? cur->name.c_str() : app.settings.gpu_profile.c_str())) {
      for (auto& p : gpu_profiles())
        if (ImGui::Selectable(p.name.c_str(), cur == &p)) {
          app.settings.gpu_profile = p.key;
          app.roof.dirty = true;
        }
      ImGui::EndCombo();
    }
    if (cur) {
      text_wrap_disabled(bandwidth_text(cur->dram_gbps) + ", " + flops_text(cur->fp32_gflops) +
                         " FP32");
      // Which of the model's figures for it are measured and which come from datasheets, and how
      // far the model is from measured times (validated or not).
      const perf::ProfileEvidence& e = perf::profile_evidence(cur->key);
      text_wrap_disabled(e.accuracy + ".");
      text_wrap_disabled("Its figures, by origin: " + perf::origins_text(e) + ".");
    }
    text_wrap_disabled("(measuring ceilings needs a GPU)");
  }

  // The runner.
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::TextDisabled("Runner%s", d.version.empty() ? "" : (" " + d.version).c_str());
  text_wrap(runner_state_text(app));
  if (app.runner->starts() > 1)
    ImGui::TextDisabled("started %d times this session", app.runner->starts());
  if (!d.exit_note.empty() && app.runner->running())
    text_wrap_disabled("last ended: " + d.exit_note);
  ImGui::EndChild();
}

} // namespace wb::gui
