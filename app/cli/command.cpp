// The helpers command.hpp declares for the subcommands.
#include "command.hpp"
#include "core/workspace.hpp"

#include <fmt/format.h>

namespace wb::cli {

Catalog open_catalog(const Global& g, bool quiet) {
  Catalog c = load_catalog(default_catalog_root(g.catalog));
  if (!quiet)
    for (auto& e : c.errors) fmt::print(stderr, "warning: {}\n", e.str());
  return c;
}

const Puzzle& puzzle_or_throw(const Catalog& c, const std::string& key) {
  if (const Puzzle* p = c.find_puzzle(key)) return *p;
  std::string ids;
  for (auto& p : c.puzzles) ids += fmt::format("{}{}", ids.empty() ? "" : ", ", p.id);
  throw UsageError(fmt::format("no puzzle '{}' in {} (there are: {})", key, c.root.string(), ids));
}

std::string read_source(const std::string& path) {
  auto text = read_file(path);
  if (!text) throw UsageError(fmt::format("cannot read {}", path));
  return *text;
}

std::unique_ptr<Backend> backend_or_throw(const std::string& kind) {
  std::string why;
  auto b = make_backend(kind, why);
  if (!b) throw UsageError(fmt::format("backend '{}' cannot run here: {}", kind, why));
  return b;
}

CLI::Option* add_backend_option(CLI::App* sub, std::string& kind, const std::string& help) {
  return sub->add_option("--backend", kind, help)
      ->check(CLI::IsMember({"cuda", "sim", "auto"}))
      ->capture_default_str();
}

} // namespace wb::cli
