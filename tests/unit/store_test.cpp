// The progress database: where it lives, attempts in and out, ceilings per device and driver, WAL.
#include "common/temp_dir.hpp"
#include "core/report_json.hpp"
#include "core/store.hpp"

#include <cstdlib>
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <unistd.h>

using namespace wb;

namespace {

using test::TempDir;

CheckReport timed_report(const std::string& puzzle, const std::string& file, double median_us) {
  CheckReport r;
  r.puzzle = puzzle;
  r.file = file;
  r.device.backend = "cuda";
  r.device.name = "NVIDIA H200";
  r.device.uuid = "GPU-abc";
  r.device.driver = "13.0";
  r.seed = 0xfedcba9876543210ull; // the top bit set: stored as the same 64 bits
  r.verdict = Verdict::passed;
  r.summary = "passed 3 cases";
  PerfReport p;
  p.sizes = {{"n", 1 << 26}};
  p.timing.ok = true;
  p.timing.median_us = median_us;
  p.gbps = 4100;
  p.gflops = 341.7;
  p.intensity = 1.0 / 12;
  p.speed_of_light = 0.93;
  p.medal = "gold";
  r.perf = p;
  return r;
}

} // namespace

TEST_CASE("the data directory follows XDG and --data-dir") {
  const char* old_xdg = std::getenv("XDG_DATA_HOME");
  std::string saved = old_xdg ? old_xdg : "";
  setenv("XDG_DATA_HOME", "/tmp/xdg-test", 1);
  CHECK(data_dir() == fs::path("/tmp/xdg-test/warpbook"));
  CHECK(data_dir("/my/dir") == fs::path("/my/dir"));
  CHECK(Store::default_path("/my/dir") == fs::path("/my/dir/warpbook.db"));
  setenv("XDG_DATA_HOME", "relative/path", 1); // XDG says relative values are to be ignored
  CHECK(data_dir().filename() == "warpbook");
  CHECK(data_dir().parent_path().filename() == "share");
  if (old_xdg)
    setenv("XDG_DATA_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_DATA_HOME");
}

TEST_CASE("attempts go in and come back newest first") {
  TempDir dir;
  auto s = Store::open(dir.path / "sub" / "warpbook.db"); // the folder is made
  CHECK(fs::exists(dir.path / "sub" / "warpbook.db"));
  CHECK(s->attempts().empty());

  int64_t first = s->record_attempt(
      timed_report("01-vector-add", "solutions/01-vector-add.cu", 196.4), "src one");
  CheckReport wrong = timed_report("01-vector-add", "starter.cu", 12);
  wrong.verdict = Verdict::wrong_answer;
  wrong.perf.reset();
  int64_t second = s->record_attempt(wrong, "src two");
  s->record_attempt(timed_report("02-row-sum", "mine.cu", 70), "src three");
  CHECK(second > first);

  auto all = s->attempts();
  REQUIRE(all.size() == 3);
  CHECK(all[0].puzzle == "02-row-sum");
  auto va = s->attempts("01-vector-add");
  REQUIRE(va.size() == 2);
  CHECK(va[0].id == second);
  CHECK(va[0].verdict == "wrong_answer");
  CHECK(!va[0].has_point());
  const Attempt& a = va[1];
  CHECK(a.id == first);
  CHECK(a.file == "solutions/01-vector-add.cu");
  CHECK(a.source == "src one");
  CHECK(a.backend == "cuda");
  CHECK(a.device == "NVIDIA H200");
  CHECK(a.device_uuid == "GPU-abc");
  CHECK(a.verdict == "passed");
  CHECK(a.seed == 0xfedcba9876543210ull);
  CHECK(a.time_us == doctest::Approx(196.4));
  CHECK(a.gbps == doctest::Approx(4100));
  CHECK(a.gflops == doctest::Approx(341.7));
  CHECK(a.intensity == doctest::Approx(1.0 / 12));
  CHECK(a.sol == doctest::Approx(0.93));
  CHECK(a.medal == "gold");
  CHECK(!a.predicted);
  CHECK(a.has_point());
  CHECK(a.created_at.size() >= 20);
  CHECK(a.created_at.back() == 'Z');
  CheckReport back = a.report();
  CHECK(back.puzzle == "01-vector-add");
  REQUIRE(back.perf);
  CHECK(back.perf->timing.median_us == doctest::Approx(196.4));

  CHECK(s->attempts({}, 2).size() == 2);
  auto latest = s->latest_attempt("01-vector-add");
  REQUIRE(latest);
  CHECK(latest->id == second);
  auto with_point = s->latest_attempt("01-vector-add", {}, {}, true);
  REQUIRE(with_point);
  CHECK(with_point->id == first);
  CHECK(s->latest_attempt("01-vector-add", "starter.cu")->id == second);
  CHECK(!s->latest_attempt("01-vector-add", "starter.cu", "GPU-other"));
  CHECK(!s->latest_attempt("99-nothing"));
}

TEST_CASE("an attempt is stored whatever bytes its source and printf output hold") {
  TempDir dir;
  auto s = Store::open(dir.path / "warpbook.db");
  CheckReport r = timed_report("01-vector-add", "bad \xff.cu", 10);
  CaseReport c;
  c.label = "n=1";
  c.printf_output = "printed \xc3\x28 and \xfe\n";
  r.cases.push_back(c);
  const std::string source = "// \x80\xff not UTF-8\n";
  int64_t id = 0;
  REQUIRE_NOTHROW(id = s->record_attempt(r, source));
  auto all = s->attempts();
  REQUIRE(all.size() == 1);
  CHECK(all[0].id == id);
  CHECK(all[0].source == source); // the source is kept byte for byte
  CheckReport back = all[0].report();
  REQUIRE(back.cases.size() == 1);
  CHECK(back.cases[0].printf_output == "printed \xef\xbf\xbd( and \xef\xbf\xbd\n");
}

TEST_CASE("ceilings are kept per device UUID and driver, replaced by a new probe") {
  TempDir dir;
  auto s = Store::open(dir.path / "warpbook.db");
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-1";
  d.driver = "13.0";
  s->save_ceilings(d,
                   {{"dram_gbps", 4400, 4380, "GB/s"}, {"fp32_gflops", 64000, 63500, "GFLOP/s"}});
  DeviceInfo newer = d;
  newer.driver = "13.1";
  s->save_ceilings(newer, {{"dram_gbps", 4450, 4420, "GB/s"}});

  auto c = s->ceilings("GPU-1", "13.0");
  REQUIRE(c.size() == 2);
  CHECK(c[0].metric == "dram_gbps"); // by metric name
  CHECK(c[0].value == 4400);
  CHECK(c[0].median == 4380);
  CHECK(c[0].unit == "GB/s");
  CHECK(c[0].name == "NVIDIA H200");
  CHECK(!c[0].measured_at.empty());
  CHECK(s->ceilings("GPU-1", "13.1").size() == 1);
  CHECK(s->ceilings("GPU-2", "13.0").empty());

  // A new probe replaces the whole set for that device and driver.
  s->save_ceilings(d, {{"dram_gbps", 4410, 4390, "GB/s"}});
  c = s->ceilings("GPU-1", "13.0");
  REQUIRE(c.size() == 1);
  CHECK(c[0].value == 4410);

  auto devs = s->measured_devices();
  REQUIRE(devs.size() == 2);
  CHECK(devs[0].uuid == "GPU-1");

  DeviceInfo no_uuid;
  CHECK_THROWS_AS(s->save_ceilings(no_uuid, {}), StoreError);
}

TEST_CASE("the database is in WAL mode and two connections share it") {
  TempDir dir;
  fs::path db = dir.path / "warpbook.db";
  auto a = Store::open(db);
  auto b = Store::open(db); // the window and its runner, say
  a->record_attempt(timed_report("01-vector-add", "x.cu", 1), "x");
  CHECK(b->attempts().size() == 1);
  b->record_attempt(timed_report("01-vector-add", "y.cu", 2), "y");
  CHECK(a->attempts().size() == 2);

  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(db.string().c_str(), &raw) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))) == "wal");
  sqlite3_finalize(st);
  sqlite3_close(raw);
}

TEST_CASE("a store that cannot be opened says so") {
  CHECK_THROWS_AS(Store::open("/proc/no-such-dir/warpbook.db"), StoreError);
}
