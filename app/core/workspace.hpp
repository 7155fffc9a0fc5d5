// The learner's working files (DESIGN.md, "Storage"): <data dir>/workspace/NN-slug.cu, seeded from
// the puzzle's starter, always written atomically so that a crash or a kill mid-write leaves either
// the old file or the new one, never a torn one.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace wb {

namespace fs = std::filesystem;
struct Puzzle;

// Writes `data` to a temporary file beside `path`, fsyncs it, renames it over `path` and fsyncs
// the folder. Returns an empty string, or why it failed (the old file is then untouched).
std::string write_file_atomic(const fs::path& path, std::string_view data);
std::optional<std::string> read_file(const fs::path& path);

// What identifies one version of a file on disk, cheaply (no read).
struct FileStamp {
  bool exists = false;
  int64_t mtime_ns = 0;
  int64_t size = 0;
  uint64_t inode = 0; // a rename-over by another editor changes it even within one mtime tick
  bool operator==(const FileStamp&) const = default;
};
FileStamp stamp_of(const fs::path& path);

class Workspace {
public:
  explicit Workspace(fs::path dir) : dir_(std::move(dir)) {}
  const fs::path& dir() const { return dir_; }
  fs::path file_for(const std::string& puzzle_id) const { return dir_ / (puzzle_id + ".cu"); }
  // The learner's file for `p`, created from its starter the first time. Returns an empty path and
  // sets `error` when it cannot be made.
  fs::path ensure(const Puzzle& p, std::string& error) const;

private:
  fs::path dir_;
};

// One learner file as the editor sees it: what we last read from or wrote to disk, so that a
// change made by another editor can be told apart from our own writes.
class WatchedFile {
public:
  enum class Change {
    none,     // the disk still holds what we last synced
    external, // someone else changed it: `disk_text()` holds the new text
    removed,  // it was deleted (the next save recreates it)
  };
  // Reads `path`; false when it cannot be read.
  bool open(const fs::path& path);
  const fs::path& path() const { return path_; }
  const std::string& synced_text() const { return synced_; }
  const std::string& disk_text() const { return disk_; }
  // Compares the disk with what we last synced (a stat; a read only when the stat changed).
  Change check();
  // Writes `text` atomically and remembers it as synced. Returns "" or why it failed.
  std::string save(const std::string& text);
  // Accept the disk's version as synced (after the learner chose it, or after a silent reload).
  void accept_disk();

private:
  fs::path path_;
  std::string synced_; // the text both we and the disk agreed on last
  std::string disk_;   // the disk's text as last read
  FileStamp stamp_;
};

} // namespace wb
