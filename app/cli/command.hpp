// Subcommands register themselves: each cmd_*.cpp adds a static Registration, so adding a
// command touches no other file.
#pragma once
#include "core/backend.hpp"
#include "core/catalog.hpp"

#include <CLI/CLI.hpp>
#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace wb::cli {

struct Global {
  std::string catalog;  // --catalog
  std::string data_dir; // --data-dir
};

// Adds a subcommand to `app` and returns what to run when it is the one chosen.
using Setup = std::function<std::function<int()>(CLI::App& app, Global& g)>;

struct Registration {
  Registration(std::string name, Setup setup);
};

struct Registered {
  std::string name;
  Setup setup;
};
std::vector<Registered>& registry();

// Raised for usage and environment problems: main prints it and exits 4.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What most subcommands start with; each throws UsageError saying what is wrong.
// The catalog --catalog names, its problems printed as warnings unless `quiet`.
Catalog open_catalog(const Global& g, bool quiet = false);
// The puzzle `key` names (id, number or folder); the error lists the catalog's ids.
const Puzzle& puzzle_or_throw(const Catalog& c, const std::string& key);
// The whole text of the learner's file.
std::string read_source(const std::string& path);
std::unique_ptr<Backend> backend_or_throw(const std::string& kind);
// `--backend cuda|sim|auto` on a subcommand.
CLI::Option* add_backend_option(CLI::App* sub, std::string& kind,
                                const std::string& help = "cuda, sim or auto");

} // namespace wb::cli

namespace wb::cli {

// Ctrl+C as a request to stop, for commands that run many checks (tune, sweep): while one of
// these lives, the first SIGINT sets interrupted() and prints `message`; a second one exits 130.
class StopOnCtrlC {
public:
  explicit StopOnCtrlC(const char* message);
  ~StopOnCtrlC();
  StopOnCtrlC(const StopOnCtrlC&) = delete;
  StopOnCtrlC& operator=(const StopOnCtrlC&) = delete;
  const std::atomic<bool>* flag() const;
};

} // namespace wb::cli
