#include "workspace.hpp"

#include <chrono>

#include "puzzle.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace wb {

std::string write_file_atomic(const fs::path& path, std::string_view data) {
  std::error_code ec;
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  fs::create_directories(dir, ec);
  // A unique temporary name in the same folder, so the rename cannot cross file systems.
  std::random_device rd;
  fs::path tmp = dir / fmt::format(".{}.{:x}.tmp", path.filename().string(), rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("cannot create {}: {}", tmp.string(), strerror(errno));
  auto fail = [&](const char* what) {
    std::string why = fmt::format("{} {}: {}", what, tmp.string(), strerror(errno));
    ::close(fd);
    ::unlink(tmp.c_str());
    return why;
  };
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("cannot write");
    off += size_t(n);
  }
  if (::fsync(fd) != 0) return fail("cannot fsync");
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return fmt::format("cannot close {}: {}", tmp.string(), strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = fmt::format("cannot rename over {}: {}", path.string(), strerror(errno));
    ::unlink(tmp.c_str());
    return why;
  }
  // The rename itself must reach the disk too.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

FileStamp stamp_of(const fs::path& path) {
  struct stat st;
  FileStamp s;
  if (::stat(path.c_str(), &st) != 0) return s;
  s.exists = true;
  s.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  s.size = st.st_size;
  s.inode = st.st_ino;
  return s;
}

fs::path Workspace::ensure(const Puzzle& p, std::string& error) const {
  fs::path f = file_for(p.id);
  std::error_code ec;
  if (fs::exists(f, ec)) return f;
  auto starter = read_file(p.starter);
  if (!starter) {
    error = fmt::format("cannot read the starter {}", p.starter.string());
    return {};
  }
  if (auto why = write_file_atomic(f, *starter); !why.empty()) {
    error = why;
    return {};
  }
  return f;
}

namespace {
// A writer killed between creating its temporary file and the rename leaves `.NAME.XXXX.tmp`
// behind. The learner's file is whole either way; sweep the leftovers when the file is opened
// (only old ones, so a save in flight in another process is never touched).
void remove_stale_temps(const fs::path& path) {
  std::error_code ec;
  std::string prefix = "." + path.filename().string() + ".";
  auto cutoff = fs::file_time_type::clock::now() - std::chrono::minutes(1);
  for (auto& e : fs::directory_iterator(path.parent_path(), ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, ".tmp") == 0 &&
        e.last_write_time(ec) < cutoff)
      fs::remove(e.path(), ec);
  }
}
} // namespace

bool WatchedFile::open(const fs::path& path) {
  remove_stale_temps(path);
  path_ = path;
  stamp_ = stamp_of(path);
  auto t = read_file(path);
  if (!t) return false;
  synced_ = disk_ = *t;
  return true;
}

WatchedFile::Change WatchedFile::check() {
  FileStamp now = stamp_of(path_);
  if (now == stamp_) return disk_ == synced_ ? Change::none : Change::external;
  stamp_ = now;
  if (!now.exists) {
    disk_.clear();
    return Change::removed;
  }
  auto t = read_file(path_);
  if (!t) return Change::none; // mid-replace by another program: look again next time
  disk_ = std::move(*t);
  return disk_ == synced_ ? Change::none : Change::external;
}

std::string WatchedFile::save(const std::string& text) {
  std::string why = write_file_atomic(path_, text);
  if (!why.empty()) return why;
  synced_ = disk_ = text;
  stamp_ = stamp_of(path_);
  return {};
}

void WatchedFile::accept_disk() {
  synced_ = disk_;
}

} // namespace wb
