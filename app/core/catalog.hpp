// The catalog: every lesson and puzzle under a root folder holding puzzles/, lessons/ and
// solutions/. The built-in one ships with Warpbook; --catalog DIR or WARPBOOK_CATALOG picks
// another.
#pragma once
#include "puzzle.hpp"

namespace wb {

struct Lesson {
  std::string id; // "0001-programs-not-threads"
  fs::path dir, file;
  std::string title;
  std::vector<std::string> objectives;
  std::vector<std::string> puzzles; // ids it prepares
  std::string body;                 // Markdown after the front matter
  int body_line = 1;                // line of lesson.md where body starts
};

struct Catalog {
  fs::path root;
  std::vector<Puzzle> puzzles; // sorted by id
  std::vector<Lesson> lessons; // sorted by id
  std::vector<LoadError> errors;

  // By id ("01-vector-add"), by unique prefix ("01"), or by a folder path.
  const Puzzle* find_puzzle(std::string_view key) const;
  const Lesson* find_lesson(std::string_view key) const;
};

Catalog load_catalog(const fs::path& root);
// The catalog folder: explicit > $WARPBOOK_CATALOG > the source tree's (compiled in) > next to the
// executable (share/warpbook).
fs::path default_catalog_root(const std::string& explicit_root = {});
// Parses a lesson.md: TOML front matter between "+++" lines, then Markdown.
std::optional<Lesson> load_lesson(const fs::path& dir, std::vector<LoadError>& errors);

} // namespace wb
