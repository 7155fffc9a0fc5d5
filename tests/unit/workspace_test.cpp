#include "core/workspace.hpp"

#include <chrono>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace wb;

namespace {
fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() /
               ("wb-ws-" + std::to_string(getpid()) + "-" + std::to_string(rand()));
  fs::create_directories(d);
  return d;
}
} // namespace

TEST_CASE("atomic writes replace a file whole and leave no temporary behind") {
  fs::path d = temp_dir();
  fs::path f = d / "sub" / "k.cu";
  CHECK(write_file_atomic(f, "one\n").empty());
  CHECK(read_file(f) == "one\n");
  CHECK(write_file_atomic(f, "two\n").empty());
  CHECK(read_file(f) == "two\n");
  int files = 0;
  for (auto& e : fs::directory_iterator(d / "sub")) files += e.is_regular_file();
  CHECK(files == 1);
  CHECK_FALSE(write_file_atomic("/proc/no/such/dir/x", "x").empty());
  fs::remove_all(d);
}

TEST_CASE("a watched file tells our writes from another editor's") {
  fs::path d = temp_dir();
  fs::path f = d / "k.cu";
  write_file_atomic(f, "start\n");
  WatchedFile w;
  REQUIRE(w.open(f));
  CHECK(w.check() == WatchedFile::Change::none);
  CHECK(w.save("mine\n").empty());
  CHECK(w.check() == WatchedFile::Change::none); // our own write is not news
  write_file_atomic(f, "theirs\n");              // another editor, rename-over
  CHECK(w.check() == WatchedFile::Change::external);
  CHECK(w.disk_text() == "theirs\n");
  w.accept_disk();
  CHECK(w.synced_text() == "theirs\n");
  CHECK(w.check() == WatchedFile::Change::none);
  fs::remove(f);
  CHECK(w.check() == WatchedFile::Change::removed);
  fs::remove_all(d);
}

TEST_CASE("opening a file sweeps old temporary files a killed writer left, and only those") {
  char tmpl[] = "/tmp/warpbook-stale-XXXXXX";
  wb::fs::path dir = mkdtemp(tmpl);
  wb::fs::path file = dir / "01-vector-add.cu";
  std::ofstream(file) << "kernel\n";
  wb::fs::path stale = dir / ".01-vector-add.cu.1a2b.tmp",
               fresh = dir / ".01-vector-add.cu.3c4d.tmp", other = dir / ".02-row-sum.cu.5e6f.tmp";
  for (auto& p : {stale, fresh, other}) std::ofstream(p) << "half a save";
  auto old = wb::fs::file_time_type::clock::now() - std::chrono::minutes(10);
  wb::fs::last_write_time(stale, old);
  wb::fs::last_write_time(other, old);
  wb::WatchedFile w;
  REQUIRE(w.open(file));
  CHECK_FALSE(wb::fs::exists(stale));
  CHECK(wb::fs::exists(fresh)); // a save in flight elsewhere is left alone
  CHECK(wb::fs::exists(other)); // another puzzle's file is not this one's business
  wb::fs::remove_all(dir);
}
