// The progress database (DESIGN.md, "Storage"): every attempt a learner makes and the ceilings
// `warpbook probe` measured, in SQLite at <data dir>/warpbook.db.
//
// WAL mode with a busy timeout, so the window, its runner and a terminal `warpbook` may read and
// write the same file at once. One Store per thread (a Store is not shared between threads).
// Every method throws StoreError on a database error; none of them prints.
//
//   auto s = wb::Store::open(wb::Store::default_path(g.data_dir));
//   s->record_attempt(report, source);            // after a check
//   for (auto& a : s->attempts("01-vector-add"))  // newest first
//   s->save_ceilings(device, suite_ceilings);     // after `warpbook probe`
//   auto c = s->ceilings(device.uuid, device.driver);
#pragma once
#include "backend.hpp"
#include "report.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace wb {

namespace fs = std::filesystem;

struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The user's data directory: `override_dir` when not empty, else $XDG_DATA_HOME/warpbook, else
// ~/.local/share/warpbook. Not created here.
fs::path data_dir(const std::string& override_dir = {});

// One ceiling measured on one device under one driver.
struct MeasuredCeiling {
  std::string metric;      // roofline.hpp's metric names: "dram_gbps", "fp32_gflops", ...
  double value = 0;        // from the fastest sample: what the hardware allows
  double median = 0;       // from the median sample
  std::string unit;        // "GB/s", "GFLOP/s", "GOP/s"
  std::string name;        // the device's name, for people reading the table
  std::string measured_at; // UTC, "2026-11-21T10:42:07.123Z" (filled by the store)

  MeasuredCeiling() = default;
  MeasuredCeiling(std::string metric, double value, double median, std::string unit,
                  std::string name = {}, std::string measured_at = {})
      : metric(std::move(metric)), value(value), median(median), unit(std::move(unit)),
        name(std::move(name)), measured_at(std::move(measured_at)) {}
};

// A device (by UUID and driver) that has stored ceilings.
struct MeasuredDevice {
  std::string uuid, driver, name;
  std::string measured_at; // newest
};

// One row of `attempts`: a check of a learner's file, with its figures.
struct Attempt {
  int64_t id = 0;
  std::string puzzle;  // "01-vector-add"
  std::string file;    // the file name the check used ("solutions/01-vector-add.cu")
  std::string source;  // the whole source text that was checked
  std::string backend; // "cuda" or "sim"
  std::string device;  // device name
  std::string device_uuid;
  std::string verdict; // verdict_name(): "passed", "wrong_answer", ...
  uint64_t seed = 0;
  // Timed GPU runs: median time and figures; simulator: the modelled point (time_us 0).
  double time_us = 0, gbps = 0, gflops = 0, intensity = 0;
  double sol = 0;    // speed of light, fraction (0 when not timed or modelled)
  std::string medal; // "", "bronze", "silver", "gold"
  bool predicted = false;
  std::string report_json; // report_to_json() of the whole CheckReport
  std::string created_at;  // UTC, ISO 8601
  // The full report (parses report_json; throws std::runtime_error if it is malformed).
  CheckReport report() const;
  // A point for the roofline chart exists: timed, or modelled, with a positive intensity.
  bool has_point() const { return gflops > 0 && intensity > 0; }
};

class Store {
public:
  // Opens (creating it and its folder if needed) the database at `db_file`. Throws StoreError.
  static std::unique_ptr<Store> open(const fs::path& db_file);
  // data_dir(override_dir) / "warpbook.db".
  static fs::path default_path(const std::string& override_dir = {});

  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const fs::path& path() const { return path_; }

  // Records a check. `source` is the text that was checked (the report holds only its name).
  // Returns the new attempt's id.
  int64_t record_attempt(const CheckReport& r, const std::string& source);
  // Attempts, newest first; `puzzle` empty: every puzzle; `limit` 0: all.
  std::vector<Attempt> attempts(const std::string& puzzle = {}, int limit = 0) const;
  // As attempts(), without `source` and `report_json` (cheap: for lists, progress and charts).
  std::vector<Attempt> attempt_summaries(const std::string& puzzle = {}, int limit = 0) const;
  // One attempt by id, in full.
  std::optional<Attempt> attempt(int64_t id) const;
  // The newest attempt of `puzzle` whose file name is `file` (any file when empty), optionally
  // only on one device (by UUID) and only those with a roofline point.
  std::optional<Attempt> latest_attempt(const std::string& puzzle, const std::string& file = {},
                                        const std::string& device_uuid = {},
                                        bool with_point = false) const;

  // Replaces the ceilings stored for this device's UUID and driver with `c` (one transaction).
  void save_ceilings(const DeviceInfo& d, const std::vector<MeasuredCeiling>& c);
  // The ceilings stored for a device and driver (empty when never probed).
  std::vector<MeasuredCeiling> ceilings(const std::string& uuid, const std::string& driver) const;
  // Every device with stored ceilings, the most recently measured first.
  std::vector<MeasuredDevice> measured_devices() const;

  // Small pieces of a learner's progress that are not attempts, by key: the window keeps quiz
  // answers ("quiz/0004-the-roofline#2") and hints revealed ("hints/01-vector-add") here.
  void set_note(const std::string& key, const std::string& value);
  std::optional<std::string> note(const std::string& key) const;
  // Every note whose key starts with `prefix`, by key.
  std::vector<std::pair<std::string, std::string>> notes(const std::string& prefix) const;

private:
  explicit Store(sqlite3* db, fs::path path) : db_(db), path_(std::move(path)) {}
  void exec(const char* sql) const;
  sqlite3* db_ = nullptr;
  fs::path path_;
};

} // namespace wb
