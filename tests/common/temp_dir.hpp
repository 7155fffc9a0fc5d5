// A fresh folder under the system's temporary directory, removed with everything in it when the
// TempDir goes out of scope.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace wb::test {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "warpbook-test-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Writes `text` to path/rel, making its folders.
  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((path / rel).parent_path());
    std::ofstream(path / rel, std::ios::binary) << text;
  }
};

} // namespace wb::test
