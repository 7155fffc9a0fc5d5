#include "store.hpp"

#include "report_json.hpp"

#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <sqlite3.h>

namespace wb {

namespace {

// Schema version 1. New columns go in with ALTER TABLE guarded by user_version.
const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS ceilings(
  uuid TEXT NOT NULL,
  driver TEXT NOT NULL,
  name TEXT NOT NULL,
  metric TEXT NOT NULL,
  value REAL NOT NULL,
  median REAL NOT NULL DEFAULT 0,
  unit TEXT NOT NULL,
  measured_at TEXT NOT NULL,
  PRIMARY KEY (uuid, driver, metric));
CREATE TABLE IF NOT EXISTS attempts(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  puzzle TEXT NOT NULL,
  file TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  backend TEXT NOT NULL DEFAULT '',
  device TEXT NOT NULL DEFAULT '',
  device_uuid TEXT NOT NULL DEFAULT '',
  verdict TEXT NOT NULL,
  seed INTEGER NOT NULL DEFAULT 0,
  time_us REAL NOT NULL DEFAULT 0,
  gbps REAL NOT NULL DEFAULT 0,
  gflops REAL NOT NULL DEFAULT 0,
  intensity REAL NOT NULL DEFAULT 0,
  sol REAL NOT NULL DEFAULT 0,
  medal TEXT NOT NULL DEFAULT '',
  modelled INTEGER NOT NULL DEFAULT 0,
  report_json TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS attempts_by_puzzle ON attempts(puzzle, id);
CREATE TABLE IF NOT EXISTS notes(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at TEXT NOT NULL);
PRAGMA user_version = 1;
)sql";

const char* kNow = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";

// A prepared statement that finalizes itself.
class Stmt {
public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK)
      throw StoreError(fmt::format("store: {} (in: {})", sqlite3_errmsg(db), sql));
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, const std::string& v) {
    check(sqlite3_bind_text(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& bind(int i, double v) {
    check(sqlite3_bind_double(s_, i, v));
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    check(sqlite3_bind_int64(s_, i, v));
    return *this;
  }
  // True while there is a row.
  bool step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(fmt::format("store: {}", sqlite3_errmsg(db_)));
  }
  std::string text(int col) const {
    auto* p = sqlite3_column_text(s_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), size_t(sqlite3_column_bytes(s_, col)))
             : std::string();
  }
  double real(int col) const { return sqlite3_column_double(s_, col); }
  int64_t integer(int col) const { return sqlite3_column_int64(s_, col); }

private:
  void check(int rc) {
    if (rc != SQLITE_OK) throw StoreError(fmt::format("store: {}", sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

const char* kAttemptColumns =
    "id, puzzle, file, source, backend, device, device_uuid, verdict, seed, time_us, gbps, "
    "gflops, intensity, sol, medal, modelled, report_json, created_at";

// The same columns without the two big texts, for lists and charts of many attempts.
const char* kAttemptLightColumns =
    "id, puzzle, file, '', backend, device, device_uuid, verdict, seed, time_us, gbps, "
    "gflops, intensity, sol, medal, modelled, '', created_at";

Attempt attempt_from(const Stmt& s) {
  Attempt a;
  a.id = s.integer(0);
  a.puzzle = s.text(1);
  a.file = s.text(2);
  a.source = s.text(3);
  a.backend = s.text(4);
  a.device = s.text(5);
  a.device_uuid = s.text(6);
  a.verdict = s.text(7);
  a.seed = uint64_t(s.integer(8)); // stored as the same 64 bits, signed
  a.time_us = s.real(9);
  a.gbps = s.real(10);
  a.gflops = s.real(11);
  a.intensity = s.real(12);
  a.sol = s.real(13);
  a.medal = s.text(14);
  a.predicted = s.integer(15) != 0;
  a.report_json = s.text(16);
  a.created_at = s.text(17);
  return a;
}

} // namespace

fs::path data_dir(const std::string& override_dir) {
  if (!override_dir.empty()) return override_dir;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x && fs::path(x).is_absolute())
    return fs::path(x) / "warpbook";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".local" / "share" / "warpbook";
  return fs::current_path() / ".warpbook"; // no home at all (a bare container): stay local
}

fs::path Store::default_path(const std::string& override_dir) {
  return data_dir(override_dir) / "warpbook.db";
}

std::unique_ptr<Store> Store::open(const fs::path& db_file) {
  std::error_code ec;
  if (db_file.has_parent_path()) fs::create_directories(db_file.parent_path(), ec);
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(db_file.string().c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw StoreError(fmt::format("cannot open the database {}: {}", db_file.string(), why));
  }
  std::unique_ptr<Store> s(new Store(db, db_file));
  // Another process may hold the write lock for a moment: wait rather than fail.
  sqlite3_busy_timeout(db, 5000);
  s->exec("PRAGMA journal_mode=WAL");
  s->exec("PRAGMA synchronous=NORMAL");
  s->exec("PRAGMA foreign_keys=ON");
  s->exec(kSchema);
  return s;
}

Store::~Store() {
  if (db_) sqlite3_close(db_);
}

void Store::exec(const char* sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw StoreError(fmt::format("store {}: {}", path_.string(), why));
  }
}

CheckReport Attempt::report() const {
  return report_from_json(report_json);
}

int64_t Store::record_attempt(const CheckReport& r, const std::string& source) {
  double time_us = 0, gbps = 0, gflops = 0, intensity = 0, sol = 0;
  std::string medal;
  bool predicted = false;
  if (r.perf) {
    const PerfReport& p = *r.perf;
    predicted = p.predicted;
    if (p.timing.ok || p.predicted) {
      time_us = p.timing.ok ? p.timing.median_us : 0;
      gbps = p.gbps;
      gflops = p.gflops;
      intensity = p.intensity;
      sol = p.speed_of_light;
      medal = p.medal;
    }
  }
  Stmt s(db_, fmt::format("INSERT INTO attempts(puzzle, file, source, backend, device, "
                          "device_uuid, verdict, seed, time_us, gbps, gflops, intensity, sol, "
                          "medal, modelled, report_json, created_at) VALUES "
                          "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,{})",
                          kNow));
  s.bind(1, r.puzzle)
      .bind(2, r.file)
      .bind(3, source)
      .bind(4, r.device.backend)
      .bind(5, r.device.name)
      .bind(6, r.device.uuid)
      .bind(7, std::string(verdict_name(r.verdict)))
      .bind(8, int64_t(r.seed))
      .bind(9, time_us)
      .bind(10, gbps)
      .bind(11, gflops)
      .bind(12, intensity)
      .bind(13, sol)
      .bind(14, medal)
      .bind(15, int64_t(predicted))
      .bind(16, report_to_json(r, -1))
      .step();
  return sqlite3_last_insert_rowid(db_);
}

std::vector<Attempt> Store::attempts(const std::string& puzzle, int limit) const {
  std::string sql = fmt::format("SELECT {} FROM attempts{} ORDER BY id DESC{}", kAttemptColumns,
                                puzzle.empty() ? "" : " WHERE puzzle = ?",
                                limit > 0 ? fmt::format(" LIMIT {}", limit) : "");
  Stmt s(db_, sql);
  if (!puzzle.empty()) s.bind(1, puzzle);
  std::vector<Attempt> out;
  while (s.step()) out.push_back(attempt_from(s));
  return out;
}

std::vector<Attempt> Store::attempt_summaries(const std::string& puzzle, int limit) const {
  std::string sql = fmt::format("SELECT {} FROM attempts{} ORDER BY id DESC{}",
                                kAttemptLightColumns, puzzle.empty() ? "" : " WHERE puzzle = ?",
                                limit > 0 ? fmt::format(" LIMIT {}", limit) : "");
  Stmt s(db_, sql);
  if (!puzzle.empty()) s.bind(1, puzzle);
  std::vector<Attempt> out;
  while (s.step()) out.push_back(attempt_from(s));
  return out;
}

std::optional<Attempt> Store::attempt(int64_t id) const {
  Stmt s(db_, fmt::format("SELECT {} FROM attempts WHERE id = ?", kAttemptColumns));
  s.bind(1, id);
  if (s.step()) return attempt_from(s);
  return std::nullopt;
}

void Store::set_note(const std::string& key, const std::string& value) {
  Stmt s(db_, fmt::format("INSERT INTO notes(key, value, updated_at) VALUES (?, ?, {}) "
                          "ON CONFLICT(key) DO UPDATE SET value = excluded.value, "
                          "updated_at = excluded.updated_at",
                          kNow));
  s.bind(1, key).bind(2, value).step();
}

std::optional<std::string> Store::note(const std::string& key) const {
  Stmt s(db_, "SELECT value FROM notes WHERE key = ?");
  s.bind(1, key);
  if (s.step()) return s.text(0);
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> Store::notes(const std::string& prefix) const {
  // A range scan on the primary key: keys from `prefix` up to `prefix` followed by the last byte.
  Stmt s(db_, "SELECT key, value FROM notes WHERE key >= ?1 AND key < ?2 ORDER BY key");
  s.bind(1, prefix).bind(2, prefix + "\xff");
  std::vector<std::pair<std::string, std::string>> out;
  while (s.step()) out.emplace_back(s.text(0), s.text(1));
  return out;
}

std::optional<Attempt> Store::latest_attempt(const std::string& puzzle, const std::string& file,
                                             const std::string& device_uuid,
                                             bool with_point) const {
  std::string sql = fmt::format("SELECT {} FROM attempts WHERE puzzle = ?1", kAttemptColumns);
  if (!file.empty()) sql += " AND file = ?2";
  if (!device_uuid.empty()) sql += " AND device_uuid = ?3";
  if (with_point) sql += " AND gflops > 0 AND intensity > 0";
  sql += " ORDER BY id DESC LIMIT 1";
  Stmt s(db_, sql);
  s.bind(1, puzzle);
  if (!file.empty()) s.bind(2, file);
  if (!device_uuid.empty()) s.bind(3, device_uuid);
  if (s.step()) return attempt_from(s);
  return std::nullopt;
}

void Store::save_ceilings(const DeviceInfo& d, const std::vector<MeasuredCeiling>& c) {
  if (d.uuid.empty()) throw StoreError("store: a device without a UUID cannot keep ceilings");
  exec("BEGIN IMMEDIATE");
  try {
    Stmt del(db_, "DELETE FROM ceilings WHERE uuid = ? AND driver = ?");
    del.bind(1, d.uuid).bind(2, d.driver).step();
    for (auto& m : c) {
      Stmt ins(db_, fmt::format("INSERT INTO ceilings(uuid, driver, name, metric, value, median, "
                                "unit, measured_at) VALUES (?,?,?,?,?,?,?,{})",
                                kNow));
      ins.bind(1, d.uuid)
          .bind(2, d.driver)
          .bind(3, d.name)
          .bind(4, m.metric)
          .bind(5, m.value)
          .bind(6, m.median)
          .bind(7, m.unit)
          .step();
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<MeasuredCeiling> Store::ceilings(const std::string& uuid,
                                             const std::string& driver) const {
  Stmt s(db_, "SELECT metric, value, median, unit, name, measured_at FROM ceilings WHERE uuid = ? "
              "AND driver = ? ORDER BY metric");
  s.bind(1, uuid).bind(2, driver);
  std::vector<MeasuredCeiling> out;
  while (s.step())
    out.push_back({s.text(0), s.real(1), s.real(2), s.text(3), s.text(4), s.text(5)});
  return out;
}

std::vector<MeasuredDevice> Store::measured_devices() const {
  Stmt s(db_, "SELECT uuid, driver, max(name), max(measured_at) AS t FROM ceilings GROUP BY uuid, "
              "driver ORDER BY t DESC");
  std::vector<MeasuredDevice> out;
  while (s.step()) out.push_back({s.text(0), s.text(1), s.text(2), s.text(3)});
  return out;
}

} // namespace wb
