#include "core/catalog.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <unistd.h>

using namespace wb;

namespace {

// A scratch catalog folder with one good puzzle, removed at the end.
struct TempCatalog {
  fs::path root;
  TempCatalog() {
    char tmpl[] = "/tmp/warpbook-catalog-XXXXXX";
    root = mkdtemp(tmpl);
    fs::create_directories(root / "puzzles");
    fs::create_directories(root / "lessons");
    fs::create_directories(root / "solutions");
  }
  ~TempCatalog() { fs::remove_all(root); }
  fs::path puzzle(const std::string& id, const std::string& toml, bool files = true) {
    fs::path d = root / "puzzles" / id;
    fs::create_directories(d);
    std::ofstream(d / "puzzle.toml") << toml;
    if (files)
      for (auto f : {"README.md", "starter.cu", "reference.cu", "hints.md"})
        std::ofstream(d / f) << "x\n";
    return d;
  }
};

const char* kGood = R"TOML(title = "Vector add"
[kernel]
name = "vector_add"
args = ["a", "c", "n"]
[[buffer]]
name = "a"
type = "f32"
count = "n"
init = "uniform(-1, 1)"
[[buffer]]
name = "c"
type = "f32"
count = "n"
output = true
[scalar.n]
type = "i32"
[launch]
grid = "cdiv(n, BLOCK)"
block = "BLOCK"
tunables = { BLOCK = 256 }
[[case]]
n = 1
[cost]
bytes = "8 * n"
flops = "n"
)TOML";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  REQUIRE(p != std::string::npos);
  return s.replace(p, from.size(), to);
}

// Loads a catalog holding the good puzzle plus one variant; returns the variant's errors.
std::vector<LoadError> errors_for(const std::string& toml, bool files = true) {
  TempCatalog c;
  c.puzzle("00-good", kGood);
  c.puzzle("01-bad", toml, files);
  Catalog cat = load_catalog(c.root);
  CHECK(cat.find_puzzle("00-good") != nullptr); // the rest of the catalog still loads
  CHECK(cat.find_puzzle("01-bad") == nullptr);
  for (auto& e : cat.errors) CHECK(e.file.string().find("01-bad") != std::string::npos);
  return cat.errors;
}

bool has(const std::vector<LoadError>& es, const std::string& key, int line,
         const std::string& text) {
  for (auto& e : es)
    if (e.key == key && (line == 0 || e.line == line) && e.str().find(text) != std::string::npos)
      return true;
  std::string all;
  for (auto& e : es) all += e.str() + "\n";
  MESSAGE("errors were:\n" << all);
  return false;
}

} // namespace

TEST_CASE("a good puzzle loads with every field") {
  TempCatalog c;
  c.puzzle("07-good", kGood);
  Catalog cat = load_catalog(c.root);
  REQUIRE(cat.errors.empty());
  const Puzzle* p = cat.find_puzzle("07");
  REQUIRE(p);
  CHECK(p == cat.find_puzzle("good"));
  CHECK(p == cat.find_puzzle((c.root / "puzzles/07-good").string()));
  CHECK(p->id == "07-good");
  CHECK(p->kernel_name == "vector_add");
  CHECK(p->buffers.size() == 2);
  CHECK(p->buffers[1].output);
  CHECK(p->tunables.at(0).default_value == 256);
  CHECK(p->launches.at(0).grid[0].eval(p->env(p->cases[0])) == 1);
  CHECK(p->solution == c.root / "solutions" / "07-good.cu");
}

TEST_CASE("malformed puzzles are refused with file, key and line; the rest still loads") {
  SUBCASE("broken TOML") {
    auto es = errors_for(replace(kGood, "title = \"Vector add\"", "title = \"Vector add"));
    CHECK(has(es, "", 1, "TOML syntax"));
  }
  SUBCASE("empty file") {
    CHECK(has(errors_for(""), "", 0, "empty file"));
  }
  SUBCASE("binary file") {
    CHECK(has(errors_for(std::string("\x7f"
                                     "ELF\0\0\1",
                                     7)),
              "", 0, "NUL"));
  }
  SUBCASE("unknown top-level key") {
    CHECK(has(errors_for(std::string("titel = \"x\"\n") + kGood), "titel", 1,
              "did you mean 'title'"));
  }
  SUBCASE("unknown buffer key") {
    CHECK(has(errors_for(replace(kGood, "output = true", "outptu = true")), "buffer 'c'.outptu", 14,
              "unknown key"));
  }
  SUBCASE("unknown dtype") {
    CHECK(has(errors_for(replace(kGood, "type = \"f32\"\ncount = \"n\"\ninit",
                                 "type = \"float\"\ncount = \"n\"\ninit")),
              "buffer 'a'.type", 7, "unknown dtype 'float'"));
  }
  SUBCASE("bad size expression") {
    CHECK(has(errors_for(replace(kGood, "grid = \"cdiv(n, BLOCK)\"", "grid = \"cdiv(n BLOCK)\"")),
              "launch.grid", 18, "expected ','"));
  }
  SUBCASE("size expression naming nothing") {
    CHECK(has(errors_for(replace(kGood, "bytes = \"8 * n\"", "bytes = \"8 * m\"")), "cost.bytes", 0,
              "'m'"));
  }
  SUBCASE("division by zero in a size") {
    CHECK(has(errors_for(replace(kGood, "count = \"n\"\noutput", "count = \"n / 0\"\noutput")),
              "case[0]", 0, "division by zero"));
  }
  SUBCASE("negative size") {
    CHECK(has(errors_for(replace(kGood, "count = \"n\"\noutput", "count = \"n - 5\"\noutput")),
              "case[0]", 0, "negative count"));
  }
  SUBCASE("huge size") {
    CHECK(has(errors_for(
                  replace(kGood, "count = \"n\"\noutput", "count = \"n * 1000000000000\"\noutput")),
              "case[0]", 0, "more than 2^36"));
  }
  SUBCASE("kernel arg naming nothing") {
    CHECK(has(errors_for(replace(kGood, "args = [\"a\", \"c\", \"n\"]",
                                 "args = [\"a\", \"b\", \"c\", \"n\"]")),
              "kernel.args", 4, "'b' names no [[buffer]]"));
  }
  SUBCASE("missing files") {
    CHECK(has(errors_for(kGood, false), "", 0, "missing file"));
  }
  SUBCASE("a file that escapes the folder") {
    CHECK(has(errors_for(std::string(kGood) + "[files]\nstarter = \"../../../etc/passwd\"\n"),
              "files.starter", 27, "outside the puzzle's folder"));
  }
  SUBCASE("no output") {
    CHECK(has(errors_for(replace(kGood, "output = true", "output = false\ninit = \"zeros\"")),
              "buffer", 0, "no buffer has output"));
  }
  SUBCASE("no cases") {
    CHECK(has(errors_for(replace(kGood, "[[case]]\nn = 1\n", "")), "case", 0, "no [[case]]"));
  }
  SUBCASE("a buffer declared twice") {
    CHECK(has(errors_for(replace(kGood, "name = \"c\"", "name = \"a\"")), "buffer 'a'.name", 0,
              "declared twice"));
  }
  SUBCASE("bad generator") {
    CHECK(has(errors_for(replace(kGood, "uniform(-1, 1)", "gauss(0, 1)")), "buffer 'a'.init", 9,
              "unknown generator"));
  }
  SUBCASE("q4_0 on a buffer that is not u8, by default or in a case") {
    CHECK(has(errors_for(replace(kGood, "uniform(-1, 1)", "q4_0(-1, 1)")), "buffer 'a'.init", 9,
              "must be u8"));
    CHECK(has(errors_for(replace(kGood, "n = 1\n", "n = 1\ninit.a = \"q4_0(-1, 1)\"\n")),
              "case[0].init.a", 0, "must be u8"));
  }
  SUBCASE("tunable default outside its values") {
    CHECK(has(errors_for(replace(kGood, "tunables = { BLOCK = 256 }",
                                 "tunables = { BLOCK = { default = 100, values = [128, 256] } }")),
              "launch.tunables.BLOCK", 20, "not allowed"));
  }
  SUBCASE("a case size that is not an integer") {
    CHECK(has(errors_for(replace(kGood, "n = 1\n", "n = 1.5\n")), "case[0].n", 22,
              "must be an integer"));
  }
  SUBCASE("medals out of order") {
    CHECK(has(errors_for(std::string(kGood) + "[medals]\nbronze = 0.9\nsilver = 0.5\ngold = 0.7\n"),
              "medals", 26, "bronze <= silver"));
  }
}

TEST_CASE("lessons: front matter and links are validated") {
  TempCatalog c;
  c.puzzle("01-good", kGood);
  auto lesson = [&](const std::string& id, const std::string& text) {
    fs::create_directories(c.root / "lessons" / id);
    std::ofstream(c.root / "lessons" / id / "lesson.md") << text;
  };
  lesson("0001-ok",
         "+++\ntitle = \"Ok\"\nobjectives = [\"a\"]\npuzzles = [\"01-good\"]\n+++\n# Body\ntext\n");
  lesson("0002-no-front", "# Just markdown\n");
  lesson("0003-unclosed", "+++\ntitle = \"x\"\n# body\n");
  lesson("0004-bad-link", "+++\ntitle = \"x\"\npuzzles = [\"99-nope\"]\n+++\nbody\n");
  lesson("0005-bad-toml", "+++\ntitle = x\n+++\nbody\n");
  Catalog cat = load_catalog(c.root);
  REQUIRE(cat.find_lesson("0001"));
  CHECK(cat.find_lesson("0001")->title == "Ok");
  CHECK(cat.find_lesson("0001")->body.rfind("# Body", 0) == 0);
  CHECK(cat.find_lesson("0001")->body_line == 6);
  auto err = [&](const std::string& id, const std::string& text) {
    for (auto& e : cat.errors)
      if (e.file.string().find(id) != std::string::npos && e.str().find(text) != std::string::npos)
        return true;
    return false;
  };
  CHECK(err("0002-no-front", "front matter"));
  CHECK(err("0003-unclosed", "not closed"));
  CHECK(err("0004-bad-link", "99-nope"));
  CHECK(err("0005-bad-toml", "front matter"));
  CHECK(cat.puzzles.size() == 1);
}

TEST_CASE("the built-in catalog loads without problems") {
  Catalog cat = load_catalog(WARPBOOK_SOURCE_ROOT);
  std::string all;
  for (auto& e : cat.errors) all += e.str() + "\n";
  CHECK_MESSAGE(cat.errors.empty(), all);
  CHECK(cat.find_puzzle("01-vector-add"));
  CHECK(cat.find_puzzle("02-row-sum"));
  CHECK(cat.find_puzzle("03-softmax"));
  for (auto& p : cat.puzzles) CHECK_MESSAGE(fs::exists(p.solution), p.id);
}

// More ways a pack goes wrong: each refused with file, key and line; the rest loads.
TEST_CASE("malformed puzzles, continued: expressions, names, files and ids") {
  SUBCASE("a huge size expression") {
    std::string huge = "n";
    while (huge.size() < 5000) huge += " + n";
    CHECK(
        has(errors_for(replace(kGood, "count = \"n\"\noutput", "count = \"" + huge + "\"\noutput")),
            "buffer 'c'.count", 13, "at most 4096"));
  }
  SUBCASE("a deeply nested size expression") {
    CHECK(has(errors_for(replace(kGood, "grid = \"cdiv(n, BLOCK)\"",
                                 "grid = \"" + std::string(300, '(') + "n" + std::string(300, ')') +
                                     "\"")),
              "launch.grid", 18, "nested too deeply"));
  }
  SUBCASE("a long chain of unary minus (found by fuzzing: it overflowed the stack)") {
    CHECK(has(errors_for(replace(kGood, "bytes = \"8 * n\"",
                                 "bytes = \"" + std::string(3000, '-') + "n\"")),
              "cost.bytes", 24, "nested too deeply"));
  }
  SUBCASE("a number too large for 64 bits") {
    CHECK(
        has(errors_for(replace(kGood, "bytes = \"8 * n\"", "bytes = \"99999999999999999999 * n\"")),
            "cost.bytes", 24, "too large for 64 bits"));
  }
  SUBCASE("a size that overflows 64 bits when evaluated") {
    CHECK(has(errors_for(replace(kGood, "count = \"n\"\noutput",
                                 "count = \"n * 9223372036854775807 * 2\"\noutput")),
              "case[0]", 21, "64-bit overflow"));
  }
  SUBCASE("a size problem names the [[case]]'s line") {
    CHECK(has(errors_for(replace(kGood, "count = \"n\"\noutput", "count = \"n - 5\"\noutput")),
              "case[0]", 21, "negative count"));
  }
  SUBCASE("a name an expression uses is given by no case: the buffer's line") {
    CHECK(has(errors_for(replace(kGood, "count = \"n\"\noutput", "count = \"m\"\noutput")),
              "buffer 'c'.count", 10, "'m' in \"m\""));
  }
  SUBCASE("a kernel name that is not a C identifier") {
    CHECK(has(errors_for(replace(kGood, "name = \"vector_add\"", "name = \"vector-add\"")),
              "kernel.name", 3, "C identifier"));
  }
  SUBCASE("[[buffer]] written as a plain key") {
    std::string g = kGood;
    std::string t = "buffer = [\"a\", \"c\"]\n" + g.substr(0, g.find("[[buffer]]")) +
                    g.substr(g.find("[scalar.n]"));
    CHECK(has(errors_for(t), "buffer", 1, "must be [[buffer]] tables"));
  }
  SUBCASE("a block with four dimensions") {
    CHECK(has(errors_for(replace(kGood, "block = \"BLOCK\"", "block = [\"BLOCK\", 1, 1, 1]")),
              "launch.block", 19, "1 to 3 dimensions"));
  }
  SUBCASE("a tunable that clashes with a buffer") {
    CHECK(has(errors_for(replace(kGood, "tunables = { BLOCK = 256 }",
                                 "tunables = { BLOCK = 256, c = 4 }")),
              "tunables.c", 0, "clashes with a buffer"));
  }
  SUBCASE("a float scalar without a value") {
    CHECK(has(errors_for(replace(kGood, "[scalar.n]\ntype = \"i32\"",
                                 "[scalar.n]\ntype = \"i32\"\n[scalar.alpha]\ntype = \"f32\"")),
              "scalar.alpha.value", 17, "needs a value"));
  }
  SUBCASE("a negative tolerance") {
    CHECK(has(errors_for(std::string(kGood) + "[check]\nrtol = -1.0\n"), "check.rtol", 26, ">= 0"));
    CHECK(has(errors_for(std::string(kGood) + "[check]\nrtol_of_max = -1e-3\n"),
              "check.rtol_of_max", 26, ">= 0"));
  }
  SUBCASE("invalid UTF-8") {
    CHECK(
        has(errors_for(replace(kGood, "title = \"Vector add\"", "title = \"Vector \xff\xfe add\"")),
            "", 1, "TOML syntax"));
  }
  SUBCASE("a file larger than 1 MiB") {
    CHECK(has(errors_for(std::string(kGood) + "# " + std::string(1 << 20, 'x') + "\n"), "", 0,
              "larger than 1 MiB"));
  }
  SUBCASE("a named file that is a folder") {
    TempCatalog c;
    c.puzzle("00-good", kGood);
    fs::path d = c.puzzle("01-bad", kGood);
    fs::remove(d / "starter.cu");
    fs::create_directories(d / "starter.cu");
    Catalog cat = load_catalog(c.root);
    CHECK(cat.find_puzzle("00-good"));
    CHECK_FALSE(cat.find_puzzle("01-bad"));
    CHECK(has(cat.errors, "", 0, "missing file"));
  }
}

TEST_CASE("a puzzle's file that escapes its folder through a symlink is refused") {
  TempCatalog c;
  c.puzzle("00-good", kGood);
  fs::path d = c.puzzle("01-bad", kGood);
  std::ofstream(c.root / "outside.cu") << "secret\n";
  fs::remove(d / "starter.cu");
  fs::create_symlink("../../outside.cu", d / "starter.cu");
  // A symlink that stays inside is fine.
  fs::path ok = c.puzzle("02-inside", kGood);
  fs::rename(ok / "hints.md", ok / "real-hints.md");
  fs::create_symlink("real-hints.md", ok / "hints.md");
  Catalog cat = load_catalog(c.root);
  CHECK(cat.find_puzzle("00-good"));
  CHECK(cat.find_puzzle("02-inside"));
  CHECK_FALSE(cat.find_puzzle("01-bad"));
  CHECK(has(cat.errors, "files.starter", 0, "'starter.cu' is outside the puzzle's folder"));
  for (auto& e : cat.errors) CHECK(e.file.string().find("01-bad") != std::string::npos);
}

TEST_CASE("a folder without puzzle.toml, and two puzzles or lessons with one number") {
  TempCatalog c;
  c.puzzle("01-first", kGood);
  c.puzzle("01-second", kGood);
  c.puzzle("02-ok", kGood);
  fs::create_directories(c.root / "puzzles" / "03-empty");
  std::ofstream(c.root / "puzzles" / "03-empty" / "README.md") << "x\n";
  for (auto id : {"0001-a", "0001-b"}) {
    fs::create_directories(c.root / "lessons" / id);
    std::ofstream(c.root / "lessons" / id / "lesson.md") << "+++\ntitle = \"x\"\n+++\nbody\n";
  }
  Catalog cat = load_catalog(c.root);
  CHECK(cat.find_puzzle("01-first"));
  CHECK_FALSE(cat.find_puzzle("01-second"));
  CHECK(cat.find_puzzle("01") == cat.find_puzzle("01-first")); // "01" is not ambiguous
  CHECK(cat.find_puzzle("02-ok"));
  CHECK(cat.puzzles.size() == 2);
  CHECK(cat.lessons.size() == 1);
  CHECK(has(cat.errors, "id", 0, "'01-second' has the number 01 that '01-first' already uses"));
  CHECK(has(cat.errors, "id", 0, "'0001-b' has the number 0001 that '0001-a' already uses"));
  CHECK(has(cat.errors, "", 0, "03-empty/puzzle.toml: missing puzzle.toml"));
}

TEST_CASE("lessons: more broken front matter and links, each with file, key and line") {
  TempCatalog c;
  c.puzzle("01-good", kGood);
  auto lesson = [&](const std::string& id, const std::string& text) {
    fs::create_directories(c.root / "lessons" / id);
    std::ofstream(c.root / "lessons" / id / "lesson.md", std::ios::binary) << text;
  };
  lesson("0001-ok", "+++\ntitle = \"Ok\"\npuzzles = [\"01-good\"]\n+++\nbody\n");
  lesson("0002-unknown-key", "+++\ntitle = \"x\"\nobjectivs = [\"a\"]\n+++\nbody\n");
  lesson("0003-title-not-string", "+++\ntitle = 3\n+++\nbody\n");
  lesson("0004-no-title", "+++\nobjectives = [\"a\"]\n+++\nbody\n");
  lesson("0005-puzzles-not-strings", "+++\ntitle = \"x\"\npuzzles = [1, 2]\n+++\nbody\n");
  lesson("0006-binary", std::string("+++\ntitle = \"x\"\n+++\n\0\0\0", 21));
  lesson("0007-bad-link", "+++\ntitle = \"x\"\nobjectives = [\"a\"]\npuzzles = [\"01-good\", "
                          "\"42-gone\"]\n+++\nbody\n");
  fs::create_directories(c.root / "lessons" / "0008-no-file");
  // A puzzle naming a lesson that does not exist.
  c.puzzle("02-names-missing-lesson", "lesson = \"0099-nope\"\n" + std::string(kGood));
  Catalog cat = load_catalog(c.root);
  auto has_err = [&](const std::string& id, const std::string& key, int line,
                     const std::string& text) {
    for (auto& e : cat.errors)
      if (e.file.string().find(id) != std::string::npos && e.key == key &&
          (line == 0 || e.line == line) && e.str().find(text) != std::string::npos)
        return true;
    std::string all;
    for (auto& e : cat.errors) all += e.str() + "\n";
    MESSAGE("errors were:\n" << all);
    return false;
  };
  CHECK(cat.find_lesson("0001"));
  CHECK(has_err("0002-unknown-key", "objectivs", 3, "unknown key"));
  CHECK(has_err("0003-title-not-string", "title", 2, "must be a string"));
  CHECK(has_err("0004-no-title", "title", 2, "missing"));
  CHECK(has_err("0005-puzzles-not-strings", "puzzles", 3, "array of strings"));
  CHECK(has_err("0006-binary", "", 0, "NUL"));
  CHECK(has_err("0007-bad-link", "puzzles", 0, "'42-gone'"));
  CHECK(has_err("0008-no-file", "", 0, "missing lesson.md"));
  CHECK(has_err("02-names-missing-lesson", "lesson", 0, "'0099-nope'"));
  CHECK(cat.find_puzzle("01-good"));
}
