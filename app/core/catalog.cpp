#include "catalog.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>
#include <toml++/toml.h>
#include <unistd.h>

namespace wb {

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> subdirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && e.path().filename().string()[0] != '.') out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

std::optional<Lesson> load_lesson(const fs::path& dir, std::vector<LoadError>& errors) {
  Lesson l;
  l.id = dir.filename().string();
  l.dir = dir;
  l.file = dir / "lesson.md";
  std::error_code ec;
  if (!fs::is_regular_file(l.file, ec)) {
    errors.push_back({l.file, "", 0, 0, "missing lesson.md"});
    return std::nullopt;
  }
  std::string text = read_text(l.file);
  if (text.find('\0') != std::string::npos) {
    errors.push_back({l.file, "", 0, 0, "not a text file (it holds NUL bytes)"});
    return std::nullopt;
  }
  // Front matter: TOML between a first line "+++" and the next "+++".
  if (text.rfind("+++", 0) != 0) {
    errors.push_back(
        {l.file, "", 1, 1,
         "must open with TOML front matter between '+++' lines (title, objectives, puzzles)"});
    return std::nullopt;
  }
  size_t first_nl = text.find('\n');
  size_t end = text.find("\n+++", first_nl == std::string::npos ? 0 : first_nl);
  if (first_nl == std::string::npos || end == std::string::npos) {
    errors.push_back({l.file, "", 1, 1, "front matter is not closed by a '+++' line"});
    return std::nullopt;
  }
  std::string front = text.substr(first_nl + 1, end - first_nl);
  size_t body_start = text.find('\n', end + 1);
  l.body = body_start == std::string::npos ? "" : text.substr(body_start + 1);
  l.body_line =
      int(std::count(text.begin(), text.begin() + std::min(text.size(), body_start + 1), '\n')) + 1;
  size_t before = errors.size();
  try {
    toml::table t = toml::parse(front, l.file.string());
    for (auto&& [k, v] : t) {
      std::string_view ks = k.str();
      int line = int(v.source().begin.line) + 1; // front matter starts on line 2
      if (ks == "title") {
        if (auto s = v.value<std::string>())
          l.title = *s;
        else
          errors.push_back({l.file, "title", line, 0, "must be a string"});
      } else if (ks == "objectives" || ks == "puzzles") {
        auto& out = ks == "objectives" ? l.objectives : l.puzzles;
        if (auto a = v.as_array()) {
          for (auto&& e : *a) {
            if (auto s = e.value<std::string>())
              out.push_back(*s);
            else
              errors.push_back({l.file, std::string(ks), line, 0, "must be an array of strings"});
          }
        } else
          errors.push_back({l.file, std::string(ks), line, 0, "must be an array of strings"});
      } else {
        errors.push_back(
            {l.file, std::string(ks), line, 0, "unknown key (title, objectives, puzzles)"});
      }
    }
    if (l.title.empty()) errors.push_back({l.file, "title", 2, 0, "missing (required)"});
  } catch (const toml::parse_error& e) {
    errors.push_back({l.file, "", int(e.source().begin.line) + 1, int(e.source().begin.column),
                      fmt::format("front matter: {}", e.description())});
  }
  if (errors.size() != before) return std::nullopt;
  return l;
}

Catalog load_catalog(const fs::path& root) {
  Catalog c;
  c.root = root;
  std::error_code ec;
  if (!fs::is_directory(root / "puzzles", ec) && !fs::is_directory(root / "lessons", ec)) {
    c.errors.push_back(
        {root, "", 0, 0, "holds neither puzzles/ nor lessons/: not a Warpbook catalog"});
    return c;
  }
  for (auto& d : subdirs(root / "puzzles"))
    if (auto p = load_puzzle(d, root / "solutions", c.errors)) c.puzzles.push_back(std::move(*p));
  for (auto& d : subdirs(root / "lessons"))
    if (auto l = load_lesson(d, c.errors)) c.lessons.push_back(std::move(*l));
  // Ids are unique by their number too ("01" names a puzzle): of two folders with one number, the
  // first in order loads and the other is refused, naming both.
  auto unique_numbers = [&](auto& items, auto file_of) {
    std::map<std::string, std::string> seen;
    for (size_t i = 0; i < items.size();) {
      const std::string& id = items[i].id;
      std::string num = id.substr(0, id.find('-'));
      auto [it, fresh] = seen.emplace(num, id);
      if (fresh) {
        ++i;
        continue;
      }
      c.errors.push_back(
          {file_of(items[i]), "id", 0, 0,
           fmt::format("'{}' has the number {} that '{}' already uses: renumber one of them", id,
                       num, it->second)});
      items.erase(items.begin() + long(i));
    }
  };
  unique_numbers(c.puzzles, [](const Puzzle& p) { return p.dir / "puzzle.toml"; });
  unique_numbers(c.lessons, [](const Lesson& l) { return l.file; });
  // Links between them must resolve.
  for (auto& l : c.lessons)
    for (auto& pid : l.puzzles)
      if (!c.find_puzzle(pid) || c.find_puzzle(pid)->id != pid)
        c.errors.push_back({l.file, "puzzles", 0, 0,
                            fmt::format("links to puzzle '{}', which is not in the catalog", pid)});
  for (auto& p : c.puzzles)
    if (!p.lesson.empty() && !c.find_lesson(p.lesson))
      c.errors.push_back({p.dir / "puzzle.toml", "lesson", 0, 0,
                          fmt::format("names lesson '{}', which is not in the catalog", p.lesson)});
  return c;
}

const Puzzle* Catalog::find_puzzle(std::string_view key) const {
  for (auto& p : puzzles)
    if (p.id == key) return &p;
  std::error_code ec;
  if (fs::is_directory(fs::path(key), ec)) {
    auto canon = fs::weakly_canonical(fs::path(key));
    for (auto& p : puzzles)
      if (fs::weakly_canonical(p.dir) == canon) return &p;
  }
  const Puzzle* found = nullptr;
  for (auto& p : puzzles) {
    bool prefix = p.id.rfind(key, 0) == 0 && (p.id.size() == key.size() || p.id[key.size()] == '-');
    bool slug = p.id.size() > 3 && p.id.substr(3) == key; // "vector-add" for "01-vector-add"
    if (prefix || slug) {
      if (found) return nullptr; // ambiguous
      found = &p;
    }
  }
  return found;
}

const Lesson* Catalog::find_lesson(std::string_view key) const {
  for (auto& l : lessons)
    if (l.id == key ||
        (l.id.rfind(key, 0) == 0 && l.id.size() > key.size() && l.id[key.size()] == '-'))
      return &l;
  return nullptr;
}

fs::path default_catalog_root(const std::string& explicit_root) {
  if (!explicit_root.empty()) return explicit_root;
  if (const char* env = std::getenv("WARPBOOK_CATALOG"); env && *env) return env;
  std::error_code ec;
  fs::path src = WARPBOOK_SOURCE_ROOT;
  if (fs::is_directory(src / "puzzles", ec)) return src;
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    buf[n] = 0;
    fs::path share = fs::path(buf).parent_path().parent_path() / "share" / "warpbook";
    if (fs::is_directory(share / "puzzles", ec)) return share;
  }
  return src;
}

} // namespace wb
