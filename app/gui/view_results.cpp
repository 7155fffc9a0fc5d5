// Results: the verdict first, then why (diagnostics, failing cases, mismatches with the thread that
// wrote them, a heatmap of wrong elements, guard and NaN messages), then how fast (time, GB/s,
// GFLOP/s, speed of light, medal) and what the simulator counted.
#include "app.hpp"
#include "core/format_figure.hpp"
#include "core/perf/explain.hpp"
#include "core/perf/machine.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace wb::gui {

namespace {

void goto_line(App& app, int line, int column) {
  app.puzzle.editor.goto_line = std::max(1, line);
  app.puzzle.editor.goto_column = column;
}

ImU32 heat_color(float v) {
  v = std::clamp(v, 0.f, 1.f);
  if (v <= 0) return IM_COL32(45, 80, 55, 255); // right
  int r = int(180 + 75 * v), g = int(120 * (1 - v) + 40), b = 40;
  return IM_COL32(r, g, b, 255);
}

void heatmap(const BufferReport& b) {
  if (b.heat.empty() || b.heat_rows <= 0 || b.heat_cols <= 0) return;
  float w = std::min(ImGui::GetContentRegionAvail().x, 480.f);
  float cell_w = w / float(b.heat_cols);
  float cell_h = b.heat_rows == 1 ? 18.f : std::clamp(cell_w, 2.f, 12.f);
  float h = cell_h * float(b.heat_rows);
  ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int r = 0; r < b.heat_rows; ++r)
    for (int c = 0; c < b.heat_cols; ++c) {
      float v = b.heat[size_t(r) * size_t(b.heat_cols) + size_t(c)];
      ImVec2 a(o.x + float(c) * cell_w, o.y + float(r) * cell_h);
      dl->AddRectFilled(a, ImVec2(a.x + std::max(1.f, cell_w), a.y + cell_h), heat_color(v));
    }
  dl->AddRect(o, ImVec2(o.x + w, o.y + h), IM_COL32(255, 255, 255, 60));
  ImGui::InvisibleButton("##heat", ImVec2(w, h));
  if (ImGui::IsItemHovered()) {
    ImVec2 m = ImGui::GetIO().MousePos;
    int c = std::clamp(int((m.x - o.x) / cell_w), 0, b.heat_cols - 1);
    int r = std::clamp(int((m.y - o.y) / cell_h), 0, b.heat_rows - 1);
    float v = b.heat[size_t(r) * size_t(b.heat_cols) + size_t(c)];
    ImGui::BeginTooltip();
    if (b.shape.size() == 2) {
      int64_t rows = b.shape[0], cols = b.shape[1];
      int64_t r0 = rows * r / b.heat_rows, r1 = rows * (r + 1) / b.heat_rows;
      int64_t c0 = cols * c / b.heat_cols, c1 = cols * (c + 1) / b.heat_cols;
      ImGui::Text("%s rows %lld..%lld, columns %lld..%lld", b.name.c_str(), (long long)r0,
                  (long long)r1 - 1, (long long)c0, (long long)c1 - 1);
    } else {
      int64_t cells = int64_t(b.heat_rows) * b.heat_cols;
      int64_t k = int64_t(r) * b.heat_cols + c;
      int64_t i0 = b.count * k / cells, i1 = b.count * (k + 1) / cells;
      ImGui::Text("%s[%lld..%lld]", b.name.c_str(), (long long)i0, (long long)std::max(i0, i1 - 1));
    }
    ImGui::Text("%.0f%% of these elements are wrong", 100 * v);
    ImGui::EndTooltip();
  }
  ImGui::TextDisabled("green: right, orange to red: the share of wrong elements in each cell");
}

void buffer_details(const CaseReport& c, const BufferReport& b) {
  if (b.wrong == 0 && !b.guard_before_damaged && !b.guard_after_damaged && !b.input_clobbered)
    return;
  ImGui::PushID(b.name.c_str());
  ImGui::TextColored(ImVec4(1, 0.75f, 0.4f, 1), "%s (%s, %lld elements)", b.name.c_str(),
                     b.dtype.c_str(), (long long)b.count);
  if (b.wrong > 0)
    text_wrap(fmt::format("{} wrong ({} never written, {} NaN/Inf), max error {} (relative {})",
                          b.wrong, b.unwritten, b.nan_wrong, sig3(b.max_abs_err),
                          sig3(b.max_rel_err)));
  if (b.guard_before_damaged)
    ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1),
                       "written before its start (first damaged byte %lld before it)",
                       (long long)b.guard_first_offset);
  if (b.guard_after_damaged)
    ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1),
                       "written past its end (first damaged byte %lld past it)",
                       (long long)b.guard_first_offset);
  if (b.input_clobbered)
    ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1),
                       "an input was changed by the kernel (first at index %lld)",
                       (long long)b.clobbered_index);
  if (!b.first.empty() && ImGui::BeginTable("##mm", 5,
                                            ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                                ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("index");
    ImGui::TableSetupColumn("expected");
    ImGui::TableSetupColumn("got");
    ImGui::TableSetupColumn("");
    ImGui::TableSetupColumn("written by", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    for (auto& m : b.first) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (m.coords.size() > 1) {
        std::string s;
        for (auto x : m.coords) s += (s.empty() ? "" : ",") + std::to_string(x);
        ImGui::Text("[%s]", s.c_str());
      } else {
        ImGui::Text("%lld", (long long)m.index);
      }
      // The digits that tell the two apart (format_figure.hpp).
      const auto [got, want] = sig3_pair(m.actual, m.expected);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(want.c_str());
      ImGui::TableNextColumn();
      if (m.unwritten)
        ImGui::TextColored(ImVec4(1, 0.6f, 0.3f, 1), "(unwritten)");
      else
        ImGui::TextUnformatted(got.c_str());
      ImGui::TableNextColumn();
      if (std::isnan(m.actual) || std::isinf(m.actual))
        ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "NaN/Inf");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(m.owner.c_str());
    }
    ImGui::EndTable();
  }
  heatmap(b);
  ImGui::Spacing();
  ImGui::PopID();
}

// On a GPU, the first failing case run again on the simulator: the GPU's verdict stands, this
// says why. Shown under the verdict, since it is what the learner needs first.
void sim_explanation(App& app, const CheckReport& rep) {
  for (auto& c : rep.cases) {
    if (c.sim_explanation.empty()) continue;
    text_wrap_colored(
        ImVec4(0.55f, 0.8f, 1, 1),
        fmt::format("Explained by the simulator (case {}): {}", c.label, c.sim_explanation));
    if (c.sim_line > 0) {
      ImGui::SameLine();
      if (ImGui::SmallButton(fmt::format("go to line {}##sim", c.sim_line).c_str()))
        goto_line(app, c.sim_line, 0);
    }
    return;
  }
}

void case_details(App& app, const CaseReport& c) {
  ImGui::Indent();
  std::string fault;
  if (c.fault) {
    fault = fmt::format("{}: {}", fault_name(c.fault.kind), c.fault.message);
    text_wrap_colored(ImVec4(1, 0.45f, 0.55f, 1), fault);
    if (c.fault.source_line > 0 &&
        ImGui::SmallButton(fmt::format("go to line {}", c.fault.source_line).c_str()))
      goto_line(app, c.fault.source_line, 0);
  }
  // The fault is also the case's first problem: said once.
  for (auto& p : c.problems) {
    if (p == fault || (c.fault && p.find(c.fault.message) != std::string::npos)) continue;
    ImGui::Bullet();
    text_wrap(p);
  }
  for (auto& b : c.buffers) buffer_details(c, b);
  text_wrap_disabled(fmt::format("grid ({},{},{}) x block ({},{},{}), {}", c.grid.x, c.grid.y,
                                 c.grid.z, c.block.x, c.block.y, c.block.z, time_text(c.ms * 1e3)));
  if (!c.printf_output.empty()) {
    ImGui::TextDisabled("printf:");
    ImGui::PushFont(app.fonts.mono);
    ImGui::TextUnformatted(c.printf_output.c_str());
    ImGui::PopFont();
  }
  ImGui::Unindent();
}

void perf_box(App& app, const PerfReport& p) {
  ImGui::PushFont(app.fonts.bold);
  ImGui::TextUnformatted(p.predicted ? "Speed (predicted: no GPU here)" : "Speed (measured)");
  ImGui::PopFont();
  if (p.timing.ok && p.predicted)
    text_wrap(time_text(p.timing.median_us) + " predicted");
  else if (p.timing.ok)
    text_wrap(fmt::format("{} (median of {}; min {}, p90 {})", time_text(p.timing.median_us),
                          p.timing.samples_us.size(), time_text(p.timing.min_us),
                          time_text(p.timing.p90_us)));
  if (p.gbps > 0 || p.gflops > 0)
    text_wrap(fmt::format("{}   {}   {}", bandwidth_text(p.gbps), flops_text(p.gflops),
                          intensity_text(p.intensity)));
  if (p.speed_of_light > 0) {
    float sol = float(p.speed_of_light);
    std::string line = fmt::format("{} of speed of light ({}-bound)", percent_text(sol), p.bound);
    if (!p.medal.empty()) {
      text_wrap(line);
      text_wrap_colored(ImGui::ColorConvertU32ToFloat4(medal_color(p.medal)),
                        fmt::format("{} medal{}", p.medal, p.predicted ? " (predicted)" : ""));
    } else {
      text_wrap(line);
    }
    ImGui::ProgressBar(
        std::min(1.f, sol),
        ImVec2(std::min(ImGui::GetFontSize() * 16, ImGui::GetContentRegionAvail().x), 0),
        percent_text(sol).c_str());
    if (app.puzzle.puzzle) {
      // The medal thresholds: beside the bar where they fit, under it where they do not.
      const Puzzle& pz = *app.puzzle.puzzle;
      std::string bars = fmt::format("bronze {}  silver {}  gold {}", percent_text(pz.bronze),
                                     percent_text(pz.silver), percent_text(pz.gold));
      if (ImGui::GetContentRegionAvail().x - ImGui::GetItemRectSize().x >
          ImGui::CalcTextSize(bars.c_str()).x + ImGui::GetStyle().ItemSpacing.x * 2)
        ImGui::SameLine();
      text_wrap_disabled(bars);
    }
  }
  text_wrap_disabled(fmt::format("ceilings: {} ({}, {})", p.ceiling_source,
                                 bandwidth_text(p.dram_ceiling_gbps),
                                 flops_text(p.compute_ceiling_gflops)));
  for (auto& f : p.flags) text_wrap_colored(ImVec4(1, 0.8f, 0.4f, 1), "note: " + f);
  if (p.timing.fault)
    text_wrap_colored(ImVec4(1, 0.45f, 0.4f, 1), "timing: " + p.timing.fault.message);
}

// Why this speed: the model's factors, ranked by their share of the time, each a sentence with
// numbers; on a GPU the measured time stands beside the prediction.
void why_box(App& app, const CheckReport& rep) {
  const perf::Prediction& pr = *rep.prediction;
  if (!pr.ok) {
    // A short line; the whole reason on hover (it can be a paragraph from the sampled run).
    ImGui::TextDisabled("No speed prediction for this run.");
    if (ImGui::IsItemHovered()) tooltip_text(pr.error);
    return;
  }
  ImGui::PushFont(app.fonts.bold);
  text_wrap("Why this speed (predicted for the " + pr.gpu_name + ")");
  ImGui::PopFont();
  {
    // Whether the model was checked on this GPU; which of its figures are measured on hover.
    const perf::ProfileEvidence& e = perf::profile_evidence(pr.gpu);
    ImGui::TextDisabled("%s", e.validated ? "model validated on this GPU"
                                          : "model not validated on this GPU");
    if (ImGui::IsItemHovered())
      tooltip_text(e.accuracy + ".\n\nIts figures, by origin: " + perf::origins_text(e));
  }
  if (rep.perf && !rep.perf->predicted && rep.perf->timing.ok)
    text_wrap(fmt::format("measured {}, predicted {} ({}x)", time_text(rep.perf->timing.median_us),
                          time_text(pr.us),
                          sig3(pr.us / std::max(1e-9, rep.perf->timing.median_us))));
  const float bar_w = ImGui::GetFontSize() * 4;
  for (size_t i = 0; i < pr.factors.size(); ++i) {
    const perf::Factor& f = pr.factors[i];
    ImGui::PushID(int(i));
    ImGui::ProgressBar(float(std::clamp(f.share, 0.0, 1.0)), ImVec2(bar_w, 0),
                       percent_text(f.share).c_str());
    ImGui::SameLine();
    if (f.line > 0) {
      if (ImGui::SmallButton(fmt::format("line {}", f.line).c_str())) goto_line(app, f.line, 1);
      ImGui::SameLine();
    }
    text_wrap(f.text);
    ImGui::PopID();
  }
  for (auto& l : pr.launches) text_wrap_disabled(perf::launch_text(l));
  text_wrap_disabled(pr.method);
}

void counters_table(const Counters& c, const char* id) {
  if (c.total.empty()) return;
  if (ImGui::BeginTable(id, 2,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                            ImGuiTableFlags_Borders)) {
    for (auto& [k, v] : c.total) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(k.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(count_text(v, "").c_str());
    }
    ImGui::EndTable();
  }
}

// Every case, one row each; the case's name and its reason wrap in their columns, and the row is
// one selectable across them.
void cases_table(App& app, const CheckReport& rep) {
  ResultsState& r = app.results;
  if (ImGui::BeginTable("##cases", 4,
                        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                            ImGuiTableFlags_SizingFixedFit)) {
    // The reason is the longer text: it gets the larger share of the width.
    ImGui::TableSetupColumn("case", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("verdict");
    ImGui::TableSetupColumn("time");
    ImGui::TableSetupColumn("why", ImGuiTableColumnFlags_WidthStretch, 2.2f);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < rep.cases.size(); ++i) {
      const CaseReport& c = rep.cases[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      float y0 = ImGui::GetCursorScreenPos().y, y1 = y0;
      text_wrap(c.label + (c.perf ? " (perf size)" : ""));
      y1 = std::max(y1, ImGui::GetItemRectMax().y);
      ImGui::TableNextColumn();
      ImGui::TextColored(
          verdict_color(c.verdict), "%s",
          c.verdict == Verdict::passed ? "ok" : std::string(verdict_name(c.verdict)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(time_text(c.ms * 1e3).c_str());
      ImGui::TableNextColumn();
      text_wrap(c.message);
      y1 = std::max(y1, ImGui::GetItemRectMax().y);
      // The row's hit area, over the text already drawn (its highlight goes behind it).
      ImGui::SetCursorScreenPos(ImVec2(ImGui::GetCursorScreenPos().x, y0));
      ImGui::PushID(int(i));
      bool sel = r.selected_case == int(i);
      if (ImGui::Selectable("##row", sel,
                            ImGuiSelectableFlags_SpanAllColumns |
                                ImGuiSelectableFlags_AllowItemOverlap,
                            ImVec2(0, std::max(1.f, y1 - y0))))
        r.selected_case = sel ? -1 : int(i);
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  if (r.selected_case >= 0 && r.selected_case < int(rep.cases.size())) {
    text_wrap_disabled("Case " + rep.cases[size_t(r.selected_case)].label + ":");
    case_details(app, rep.cases[size_t(r.selected_case)]);
  } else {
    ImGui::TextDisabled("Click a case for its details.");
  }
}

// The learner's own attempt number on this puzzle, and when; "previous run" while a new one runs.
std::string results_header(const ResultsState& r) {
  std::string h = r.attempt_number > 0 ? fmt::format("attempt {}, {}", r.attempt_number, r.when)
                  : r.solution_check   ? "the solution's check, " + r.when
                                       : r.when;
  return r.stale ? "previous run: " + h : h;
}

} // namespace

void draw_results(App& app) {
  ResultsState& r = app.results;
  ImGui::PushFont(app.fonts.bold);
  ImGui::TextUnformatted("Results");
  ImGui::PopFont();
  if (r.report) {
    ImGui::SameLine();
    text_fit(results_header(r), true);
  }
  ImGui::Separator();
  ImGui::BeginChild("##results_scroll", ImVec2(0, 0), false);

  if (app.run && !app.run->reference) {
    const RunState& run = *app.run;
    float frac = run.total > 0 ? float(run.done) / float(run.total) : 0;
    text_wrap(fmt::format("{}: {}",
                          run.op == runner::Op::compile ? "Compiling"
                          : run.op == runner::Op::tune  ? "Tuning"
                          : run.op == runner::Op::sweep ? "Sweeping"
                                                        : "Checking",
                          run.phase));
    ImGui::ProgressBar(frac, ImVec2(-1, 0), fmt::format("{:.1f} s", app.now - run.started).c_str());
    ImGui::Spacing();
  }
  if (!r.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text,
                          r.cancelled ? ImVec4(0.85f, 0.85f, 0.6f, 1) : ImVec4(1, 0.5f, 0.45f, 1));
    ImGui::PushFont(app.fonts.h2);
    ImGui::TextUnformatted(r.cancelled     ? "Cancelled"
                           : r.runner_died ? "The runner stopped"
                                           : "Could not run");
    ImGui::PopFont();
    ImGui::PopStyleColor();
    text_wrap(r.error);
    if (r.runner_died)
      text_wrap_disabled("Your file is safe on disk. Press Run to start a fresh runner.");
  }
  if (r.tune) draw_tune_results(app);
  if (r.sweep) draw_sweep_results(app);
  if (!r.report) {
    if (r.error.empty() && !app.run && !r.tune && !r.sweep)
      ImGui::TextDisabled("Press Run (Ctrl+Enter) to check your kernel.");
    ImGui::EndChild();
    return;
  }
  const CheckReport& rep = *r.report;
  // A result a newer run will replace: said so, and dimmed, so it is not read as the answer.
  if (r.stale) {
    ImGui::TextColored(ImVec4(0.85f, 0.8f, 0.55f, 1), "previous run");
    ++app.stale_frames;
    ImGui::PushStyleVar(ImGuiStyleVar_Alpha, ImGui::GetStyle().Alpha * 0.45f);
  }
  ImGui::PushStyleColor(ImGuiCol_Text, verdict_color(rep.verdict));
  ImGui::PushFont(app.fonts.h2);
  // While the check runs its cases arrive one by one: a failure shows at once; a pass is only
  // "so far" until the answer (the prediction comes last, with it).
  std::string title = r.compile_only
                          ? (rep.verdict == Verdict::passed ? "Compiled" : "Compile error")
                      : r.partial && rep.verdict == Verdict::passed
                          ? "Checking..."
                          : verdict_title(std::string(verdict_name(rep.verdict)));
  ImGui::TextUnformatted(title.c_str());
  ImGui::PopFont();
  ImGui::PopStyleColor();
  text_wrap(rep.summary);
  if (r.partial)
    text_wrap_disabled(fmt::format("{} of {} cases so far; the rest are running", rep.cases.size(),
                                   r.cases_total));
  else
    text_wrap_disabled(fmt::format("on {} ({}), seed {}, {}", rep.device.name, rep.device.backend,
                                   rep.seed, time_text(rep.total_ms * 1e3)));
  sim_explanation(app, rep);

  if (!rep.diagnostics.empty()) {
    ImGui::Spacing();
    ImGui::TextDisabled("Click a message to go to its line:");
    for (size_t i = 0; i < rep.diagnostics.size(); ++i) {
      const Diagnostic& d = rep.diagnostics[i];
      ImGui::PushID(int(i));
      ImVec4 col = d.severity == Diagnostic::Severity::error     ? ImVec4(1, 0.5f, 0.45f, 1)
                   : d.severity == Diagnostic::Severity::warning ? ImVec4(1, 0.8f, 0.4f, 1)
                                                                 : ImVec4(0.6f, 0.75f, 1, 1);
      // A selectable as tall as the wrapped message, so the whole message shows and clicks.
      std::string line =
          fmt::format("line {}:{}  {}: {}", d.line, d.column, severity_name(d.severity), d.message);
      ImVec2 at = ImGui::GetCursorScreenPos();
      ImGui::PushStyleColor(ImGuiCol_Text, col);
      text_wrap(line);
      ImGui::PopStyleColor();
      ImVec2 end = ImGui::GetItemRectMax();
      ImGui::SetCursorScreenPos(at);
      if (ImGui::Selectable("##diag", false, ImGuiSelectableFlags_AllowItemOverlap,
                            ImVec2(0, end.y - at.y)))
        goto_line(app, d.line, d.column);
      if (i == 0) app.marks.add("diagnostic");
      ImGui::PopID();
    }
  }

  // A failing kernel: the failure first (the cases, the failing one open), then how fast the run
  // was, folded; a passing one: how fast first, then the cases.
  const bool failing = rep.verdict != Verdict::passed && !r.compile_only;
  if (failing && !rep.cases.empty()) {
    ImGui::Spacing();
    cases_table(app, rep);
  }
  if ((rep.perf || rep.prediction) && !r.partial) {
    ImGui::Spacing();
    bool open = !failing || ImGui::CollapsingHeader("Speed of this run (it failed)");
    if (open && rep.perf) perf_box(app, *rep.perf);
    if (open && rep.prediction) {
      ImGui::Spacing();
      why_box(app, rep);
    }
  }
  if (!failing && !rep.cases.empty()) {
    ImGui::Spacing();
    cases_table(app, rep);
  }

  if (rep.sim_perf && !rep.sim_perf->counters.empty()) {
    if (ImGui::CollapsingHeader(
            fmt::format("Simulator counters at {}", rep.sim_perf->label).c_str())) {
      counters_table(rep.sim_perf->counters, "##simc");
      ImGui::TextDisabled("Per line: see the editor's gutter (hover a figure).");
    }
  } else {
    for (auto it = rep.cases.rbegin(); it != rep.cases.rend(); ++it)
      if (!it->counters.empty()) {
        if (ImGui::CollapsingHeader(fmt::format("Simulator counters, case {}", it->label).c_str()))
          counters_table(it->counters, "##casec");
        break;
      }
  }
  if (!rep.resources.empty() && ImGui::CollapsingHeader("Resources")) {
    for (auto& k : rep.resources)
      ImGui::TextWrapped("%s", fmt::format("{}: {}, {} shared, {} stack, spills {} stored / {} "
                                           "loaded",
                                           k.name, count_text(k.registers, "registers"),
                                           bytes_text(k.shared_bytes), bytes_text(k.local_bytes),
                                           bytes_text(k.spill_stores), bytes_text(k.spill_loads))
                                   .c_str());
    for (auto& k : rep.resources)
      if (!k.wgmma_serialized.empty())
        ImGui::TextWrapped("%s: ptxas serialized its wgmma, due to %s", k.name.c_str(),
                           k.wgmma_serialized.c_str());
  }
  if (!rep.tunables.empty() || !rep.phases_ms.empty()) {
    if (ImGui::CollapsingHeader("Tunables and time")) {
      for (auto& [k, v] : rep.tunables) ImGui::Text("%s = %lld", k.c_str(), (long long)v);
      for (auto& [phase, ms] : rep.phases_ms)
        ImGui::TextDisabled("%-24s %10s", phase.c_str(), time_text(ms * 1e3).c_str());
    }
  }
  if (r.stale) ImGui::PopStyleVar();
  ImGui::EndChild();
}

} // namespace wb::gui
