#include "puzzle.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>
#include <tuple>

namespace wb {

std::string LoadError::str() const {
  std::string where = file.string();
  if (line > 0) where += fmt::format(":{}", line);
  if (line > 0 && column > 0) where += fmt::format(":{}", column);
  return key.empty() ? fmt::format("{}: {}", where, message)
                     : fmt::format("{}: {}: {}", where, key, message);
}

std::pair<double, double> default_tolerance(DType t) {
  switch (t) {
  case DType::f64:
    return {1e-9, 1e-12};
  case DType::f32:
    return {1e-5, 1e-6};
  case DType::f16:
    return {1e-2, 1e-3};
  case DType::bf16:
    return {2e-2, 1e-2};
  case DType::fp8e4m3:
    return {1.25e-1, 1.5e-2};
  case DType::fp8e5m2:
    return {2.5e-1, 3e-2};
  default:
    return {0, 0}; // integers: exact
  }
}

TensorMapSpec eval_tensor_map(const Puzzle& p, const TensorMapDecl& m, const Env& env) {
  TensorMapSpec s;
  s.name = m.name;
  s.buffer_name = m.buffer;
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (p.buffers[i].name == m.buffer) s.buffer = int(i);
  const BufferDecl* b = p.buffer(m.buffer);
  if (!b) throw ExprError("tensor map '" + m.name + "' names no buffer", 0);
  s.type = b->type;
  s.buffer_bytes = uint64_t(b->count.eval(env)) * dtype_size(b->type);
  s.rank = int(m.dims.size());
  s.swizzle = m.swizzle;
  s.l2_promotion = m.l2_promotion;
  auto nonneg = [&](const Expr& e, const char* what, size_t i) {
    int64_t v = e.eval(env);
    if (v < 0)
      throw ExprError(fmt::format("tensor map '{}': {}[{}] = {} is negative", m.name, what, i, v),
                      0);
    return uint64_t(v);
  };
  for (size_t i = 0; i < m.dims.size() && i < size_t(kTensorMapMaxRank); ++i) {
    s.dims[i] = nonneg(m.dims[i], "dims", i);
    s.box[i] = uint32_t(std::min<uint64_t>(nonneg(m.box[i], "box", i), 1u << 20));
  }
  const uint64_t es = dtype_size(b->type);
  if (!m.strides.empty()) {
    for (size_t i = 0; i < m.strides.size() && i + 1 < size_t(kTensorMapMaxRank); ++i)
      s.strides[i] = nonneg(m.strides[i], "strides", i);
  } else if (b->shape.size() == m.dims.size()) {
    uint64_t st = es;
    for (size_t i = 0; i + 1 < m.dims.size(); ++i)
      s.strides[i] = st *= uint64_t(b->shape[b->shape.size() - 1 - i].eval(env));
  } else {
    uint64_t st = es;
    for (size_t i = 0; i + 1 < m.dims.size(); ++i) s.strides[i] = st *= s.dims[i];
  }
  return s;
}

std::string Tunable::reject_reason(int64_t v) const {
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
    std::string list;
    for (auto a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
    return fmt::format("{} = {} is not allowed here; choose one of {}", name, v, list);
  }
  if (v < min || v > max) return fmt::format("{} = {} is outside {}..{}", name, v, min, max);
  if (pow2 && (v <= 0 || (v & (v - 1))))
    return fmt::format("{} = {} must be a power of two", name, v);
  return {};
}

const BufferDecl* Puzzle::buffer(std::string_view n) const {
  for (auto& b : buffers)
    if (b.name == n) return &b;
  return nullptr;
}
const ScalarDecl* Puzzle::scalar(std::string_view n) const {
  for (auto& s : scalars)
    if (s.name == n) return &s;
  return nullptr;
}
const TensorMapDecl* Puzzle::tensor_map(std::string_view n) const {
  for (auto& t : tensor_maps)
    if (t.name == n) return &t;
  return nullptr;
}
const Tunable* Puzzle::tunable(std::string_view n) const {
  for (auto& t : tunables)
    if (t.name == n) return &t;
  return nullptr;
}
std::vector<std::string> Puzzle::kernel_names() const {
  std::vector<std::string> out;
  for (auto& l : launches)
    if (std::find(out.begin(), out.end(), l.kernel) == out.end()) out.push_back(l.kernel);
  return out;
}
Env Puzzle::env(const Case& c, const std::map<std::string, int64_t>& tune) const {
  Env e = c.sizes;
  for (auto& t : tunables) {
    auto it = tune.find(t.name);
    e[t.name] = it != tune.end() ? it->second : t.default_value;
  }
  return e;
}

namespace {

// Collects problems for one file; every check names the key and the line it is about.
struct Ctx {
  fs::path file;
  std::vector<LoadError>& errors;
  size_t start = errors.size();
  bool ok() const { return errors.size() == start; }

  void error(const std::string& key, const toml::source_region& src, const std::string& msg) {
    errors.push_back({file, key, int(src.begin.line), int(src.begin.column), msg});
  }
  void error(const std::string& key, const toml::node& n, const std::string& msg) {
    error(key, n.source(), msg);
  }
  // Reports keys of `t` that are not in `known`, suggesting the nearest one.
  void only_keys(const toml::table& t, const std::string& prefix,
                 std::initializer_list<std::string_view> known) {
    for (auto&& [k, v] : t) {
      std::string_view ks = k.str();
      if (std::find(known.begin(), known.end(), ks) != known.end()) continue;
      std::string hint;
      size_t best = 3;
      for (auto cand : known) {
        size_t d = edit_distance(ks, cand);
        if (d < best) best = d, hint = fmt::format(" (did you mean '{}'?)", cand);
      }
      std::string full = prefix.empty() ? std::string(ks) : fmt::format("{}.{}", prefix, ks);
      error(full, v, fmt::format("unknown key{}", hint));
    }
  }
  static size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= b.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      std::swap(prev, cur);
    }
    return prev[b.size()];
  }

  std::optional<std::string> str(const toml::table& t, std::string_view k, const std::string& key,
                                 bool required) {
    const toml::node* n = t.get(k);
    if (!n) {
      if (required) error(key, t, "missing (required)");
      return std::nullopt;
    }
    if (auto s = n->value<std::string>()) return *s;
    error(key, *n, "must be a string");
    return std::nullopt;
  }
  std::optional<int64_t> integer(const toml::table& t, std::string_view k, const std::string& key) {
    const toml::node* n = t.get(k);
    if (!n) return std::nullopt;
    if (n->is_integer()) return n->as_integer()->get();
    error(key, *n, "must be an integer");
    return std::nullopt;
  }
  std::optional<double> number(const toml::table& t, std::string_view k, const std::string& key) {
    const toml::node* n = t.get(k);
    if (!n) return std::nullopt;
    if (n->is_integer()) return double(n->as_integer()->get());
    if (n->is_floating_point()) return n->as_floating_point()->get();
    error(key, *n, "must be a number");
    return std::nullopt;
  }
  std::optional<bool> boolean(const toml::table& t, std::string_view k, const std::string& key) {
    const toml::node* n = t.get(k);
    if (!n) return std::nullopt;
    if (n->is_boolean()) return n->as_boolean()->get();
    error(key, *n, "must be true or false");
    return std::nullopt;
  }
  std::vector<std::string> strings(const toml::table& t, std::string_view k,
                                   const std::string& key) {
    std::vector<std::string> out;
    const toml::node* n = t.get(k);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a) {
      error(key, *n, "must be an array of strings");
      return out;
    }
    for (size_t i = 0; i < a->size(); ++i) {
      if (auto s = a->get(i)->value<std::string>())
        out.push_back(*s);
      else
        error(fmt::format("{}[{}]", key, i), *a->get(i), "must be a string");
    }
    return out;
  }
  // A size expression given as a string or an integer.
  std::optional<Expr> expr(const toml::node& n, const std::string& key) {
    if (n.is_integer()) return Expr::constant(n.as_integer()->get());
    if (auto s = n.value<std::string>()) {
      try {
        return Expr::parse(*s);
      } catch (const ExprError& e) {
        auto src = n.source();
        errors.push_back({file, key, int(src.begin.line),
                          int(src.begin.column) + std::max(e.column, 1), e.what()});
        return std::nullopt;
      }
    }
    error(key, n, "must be a size expression (a string like \"cdiv(n, BLOCK)\" or an integer)");
    return std::nullopt;
  }
  std::optional<Generator> generator(const toml::node& n, const std::string& key) {
    auto s = n.value<std::string>();
    if (!s) {
      error(key, n, "must be a generator string like \"uniform(-1, 1)\"");
      return std::nullopt;
    }
    try {
      return Generator::parse(*s);
    } catch (const ExprError& e) {
      error(key, n, e.what());
      return std::nullopt;
    }
  }
};

std::optional<DType> dtype(Ctx& c, const toml::table& t, const std::string& key) {
  auto s = c.str(t, "type", key, true);
  if (!s) return std::nullopt;
  if (auto d = parse_dtype(*s)) return d;
  c.error(key, *t.get("type"),
          fmt::format(
              "unknown dtype '{}' (known: f64 f32 f16 bf16 fp8e4m3 fp8e5m2 i64 i32 u32 i16 i8 u8)",
              *s));
  return std::nullopt;
}

// A dimension list: "expr" or ["x", "y", "z"] (1 to 3 entries; missing ones are 1).
std::array<Expr, 3> dims(Ctx& c, const toml::node* n, const std::string& key) {
  std::array<Expr, 3> d{Expr::constant(1), Expr::constant(1), Expr::constant(1)};
  if (!n) return d;
  if (const toml::array* a = n->as_array()) {
    if (a->empty() || a->size() > 3) c.error(key, *n, "must have 1 to 3 dimensions");
    for (size_t i = 0; i < std::min<size_t>(3, a->size()); ++i)
      if (auto e = c.expr(*a->get(i), fmt::format("{}[{}]", key, i))) d[i] = *e;
  } else if (auto e = c.expr(*n, key)) {
    d[0] = *e;
  }
  return d;
}

Tunable tunable(Ctx& c, std::string_view name, const toml::node& n, const std::string& key) {
  Tunable t;
  t.name = std::string(name);
  if (n.is_integer()) {
    t.default_value = n.as_integer()->get();
  } else if (const toml::table* tt = n.as_table()) {
    c.only_keys(*tt, key, {"default", "values", "min", "max", "pow2"});
    if (auto v = c.integer(*tt, "default", key + ".default"))
      t.default_value = *v;
    else
      c.error(key + ".default", *tt, "missing (required)");
    if (const toml::node* vs = tt->get("values")) {
      if (const toml::array* a = vs->as_array()) {
        for (auto&& e : *a) {
          if (e.is_integer())
            t.allowed.push_back(e.as_integer()->get());
          else
            c.error(key + ".values", e, "must be integers");
        }
      } else
        c.error(key + ".values", *vs, "must be an array of integers");
    }
    if (auto v = c.integer(*tt, "min", key + ".min")) t.min = *v;
    if (auto v = c.integer(*tt, "max", key + ".max")) t.max = *v;
    if (auto v = c.boolean(*tt, "pow2", key + ".pow2")) t.pow2 = *v;
  } else {
    c.error(key, n, "must be an integer default or a table {default, values, min, max, pow2}");
  }
  if (auto why = t.reject_reason(t.default_value); !why.empty()) c.error(key, n, "default: " + why);
  return t;
}

Case read_case(Ctx& c, const toml::table& t, const std::string& key) {
  Case k;
  for (auto&& [name, v] : t) {
    std::string ks(name.str());
    if (ks == "label") {
      if (auto s = v.value<std::string>())
        k.label = *s;
      else
        c.error(key + ".label", v, "must be a string");
    } else if (ks == "init") {
      if (const toml::table* it = v.as_table()) {
        for (auto&& [bn, g] : *it)
          if (auto gen = c.generator(g, fmt::format("{}.init.{}", key, bn.str())))
            k.init[std::string(bn.str())] = *gen;
      } else
        c.error(key + ".init", v, "must be a table of buffer = \"generator\"");
    } else if (v.is_integer()) {
      k.sizes[ks] = v.as_integer()->get();
    } else {
      c.error(key + "." + ks, v, "a size must be an integer (or use 'label' / 'init')");
    }
  }
  return k;
}

bool is_valid_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
  });
}

// A file the puzzle names must stay inside its folder.
std::optional<fs::path> inside(Ctx& c, const fs::path& dir, const std::string& rel,
                               const std::string& key, const toml::node* n) {
  fs::path p = fs::weakly_canonical(dir / rel);
  fs::path base = fs::weakly_canonical(dir);
  auto [a, b] = std::mismatch(base.begin(), base.end(), p.begin(), p.end());
  if (a != base.end()) {
    if (n)
      c.error(key, *n, fmt::format("'{}' is outside the puzzle's folder", rel));
    else
      c.errors.push_back(
          {c.file, key, 0, 0, fmt::format("'{}' is outside the puzzle's folder", rel)});
    return std::nullopt;
  }
  return p;
}

} // namespace

std::optional<Puzzle> load_puzzle(const fs::path& dir, const fs::path& solutions_dir,
                                  std::vector<LoadError>& errors) {
  fs::path file = dir / "puzzle.toml";
  Ctx c{file, errors};
  Puzzle p;
  p.id = dir.filename().string();
  p.dir = dir;

  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    errors.push_back({file, "", 0, 0, "missing puzzle.toml"});
    return std::nullopt;
  }
  if (fs::file_size(file, ec) > (1 << 20)) {
    errors.push_back({file, "", 0, 0, "puzzle.toml is larger than 1 MiB"});
    return std::nullopt;
  }
  toml::table doc;
  try {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.find('\0') != std::string::npos) {
      errors.push_back({file, "", 0, 0, "not a text file (it holds NUL bytes)"});
      return std::nullopt;
    }
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
      errors.push_back({file, "", 0, 0, "empty file"});
      return std::nullopt;
    }
    doc = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    errors.push_back({file, "", int(e.source().begin.line), int(e.source().begin.column),
                      fmt::format("TOML syntax: {}", e.description())});
    return std::nullopt;
  }

  c.only_keys(doc, "",
              {"title", "level", "tags", "lesson", "demo", "kernel", "buffer", "scalar",
               "tensor_map", "launch", "tunables", "case", "perf", "sim_perf", "check", "cost",
               "budget", "medals", "files"});
  if (auto s = c.str(doc, "title", "title", true)) p.title = *s;
  if (auto v = c.integer(doc, "level", "level")) p.level = int(*v);
  p.tags = c.strings(doc, "tags", "tags");
  if (auto s = c.str(doc, "lesson", "lesson", false)) p.lesson = *s;
  if (auto b = c.boolean(doc, "demo", "demo")) p.demo = *b;

  // [kernel]
  if (const toml::table* k = doc["kernel"].as_table()) {
    c.only_keys(*k, "kernel", {"name", "args"});
    if (auto s = c.str(*k, "name", "kernel.name", true)) {
      p.kernel_name = *s;
      if (!is_valid_identifier(*s))
        c.error("kernel.name", *k->get("name"), "must be a C identifier");
    }
    p.kernel_args = c.strings(*k, "args", "kernel.args");
    if (!k->get("args")) c.error("kernel.args", *k, "missing (required)");
  } else {
    c.error("kernel", doc, doc.get("kernel") ? "must be a table" : "missing [kernel] table");
  }

  // [[buffer]]
  std::set<std::string> names;
  auto declare = [&](const std::string& name, const std::string& key, const toml::node& n) {
    if (!is_valid_identifier(name)) c.error(key, n, fmt::format("'{}' is not a valid name", name));
    if (!names.insert(name).second) c.error(key, n, fmt::format("'{}' is declared twice", name));
  };
  if (const toml::node* bn = doc.get("buffer")) {
    const toml::array* arr = bn->as_array();
    if (!arr || !arr->is_array_of_tables())
      c.error("buffer", *bn, "must be [[buffer]] tables");
    else
      for (size_t i = 0; i < arr->size(); ++i) {
        const toml::table& t = *arr->get(i)->as_table();
        std::string key = fmt::format("buffer[{}]", i);
        BufferDecl b;
        b.line = int(t.source().begin.line);
        if (auto s = c.str(t, "name", key + ".name", true)) {
          b.name = *s;
          key = fmt::format("buffer '{}'", b.name);
          declare(b.name, key + ".name", *t.get("name"));
        }
        c.only_keys(t, key, {"name", "type", "count", "shape", "init", "output", "scratch"});
        if (auto d = dtype(c, t, key + ".type")) b.type = *d;
        if (const toml::node* sn = t.get("shape")) {
          if (const toml::array* a = sn->as_array(); a && !a->empty() && a->size() <= 4) {
            for (size_t j = 0; j < a->size(); ++j)
              if (auto e = c.expr(*a->get(j), fmt::format("{}.shape[{}]", key, j)))
                b.shape.push_back(*e);
          } else
            c.error(key + ".shape", *sn, "must be an array of 1 to 4 size expressions");
        }
        if (const toml::node* cn = t.get("count")) {
          if (auto e = c.expr(*cn, key + ".count")) b.count = *e;
        } else if (!b.shape.empty()) {
          std::string prod;
          for (auto& s : b.shape)
            prod += fmt::format("{}({})", prod.empty() ? "" : " * ", s.text());
          try {
            b.count = Expr::parse(prod);
          } catch (const ExprError& e) { // the product of long shape expressions is too long
            c.error(key + ".shape", *t.get("shape"), e.what());
          }
        } else {
          c.error(key + ".count", t, "missing (give count or shape)");
        }
        if (auto o = c.boolean(t, "output", key + ".output")) b.output = *o;
        if (auto o = c.boolean(t, "scratch", key + ".scratch")) b.scratch = *o;
        if (b.output && b.scratch)
          c.error(key, t, "a buffer is either output or scratch, not both");
        if (const toml::node* in = t.get("init")) {
          b.init = c.generator(*in, key + ".init");
          if (b.init && b.init->kind == "q4_0" && b.type != DType::u8)
            c.error(key + ".init", *in, "q4_0 writes 18-byte blocks: the buffer's type must be u8");
        } else if (b.is_input())
          c.error(key + ".init", t, "an input needs an init generator");
        p.buffers.push_back(std::move(b));
      }
  }
  if (std::none_of(p.buffers.begin(), p.buffers.end(), [](auto& b) { return b.output; }))
    c.errors.push_back({file, "buffer", 0, 0, "no buffer has output = true: nothing to check"});

  // [scalar.NAME]
  if (const toml::node* sn = doc.get("scalar")) {
    if (const toml::table* st = sn->as_table()) {
      for (auto&& [name, v] : *st) {
        std::string key = fmt::format("scalar.{}", name.str());
        ScalarDecl s;
        s.name = std::string(name.str());
        declare(s.name, key, v);
        const toml::table* t = v.as_table();
        if (!t) {
          c.error(key, v, "must be a table with type (and value)");
          continue;
        }
        c.only_keys(*t, key, {"type", "value"});
        if (auto d = dtype(c, *t, key + ".type")) s.type = *d;
        if (const toml::node* val = t->get("value")) {
          if (is_float(s.type)) {
            if (val->is_number())
              s.number = val->value<double>();
            else
              c.error(key + ".value", *val, "a float scalar's value must be a number");
          } else {
            s.expr = c.expr(*val, key + ".value");
          }
        } else if (is_float(s.type)) {
          c.error(key + ".value", *t, "a float scalar needs a value");
        }
        p.scalars.push_back(std::move(s));
      }
    } else
      c.error("scalar", *sn, "must be [scalar.NAME] tables");
  }

  // [[tensor_map]]
  if (const toml::node* tn = doc.get("tensor_map")) {
    const toml::array* arr = tn->as_array();
    if (!arr || !arr->is_array_of_tables())
      c.error("tensor_map", *tn, "must be [[tensor_map]] tables");
    else
      for (size_t i = 0; i < arr->size(); ++i) {
        const toml::table& t = *arr->get(i)->as_table();
        std::string key = fmt::format("tensor_map[{}]", i);
        TensorMapDecl m;
        m.line = int(t.source().begin.line);
        if (auto s = c.str(t, "name", key + ".name", true)) {
          m.name = *s;
          key = fmt::format("tensor_map '{}'", m.name);
          declare(m.name, key + ".name", *t.get("name"));
        }
        c.only_keys(t, key,
                    {"name", "buffer", "dims", "box", "strides", "swizzle", "l2_promotion"});
        if (auto s = c.str(t, "buffer", key + ".buffer", true)) {
          m.buffer = *s;
          if (!p.buffer(*s))
            c.error(key + ".buffer", *t.get("buffer"),
                    fmt::format("'{}' names no [[buffer]]: a tensor map describes a global buffer",
                                *s));
        }
        auto list = [&](const char* k, std::vector<Expr>& out, bool required) {
          const toml::node* n = t.get(k);
          if (!n) {
            if (required) c.error(key + "." + k, t, "missing (required)");
            return;
          }
          const toml::array* a = n->as_array();
          if (!a || a->empty() || a->size() > size_t(kTensorMapMaxRank)) {
            c.error(key + "." + k, *n,
                    "must be an array of 1 to 5 size expressions, innermost first");
            return;
          }
          for (size_t j = 0; j < a->size(); ++j)
            if (auto e = c.expr(*a->get(j), fmt::format("{}.{}[{}]", key, k, j))) out.push_back(*e);
        };
        list("dims", m.dims, true);
        list("box", m.box, true);
        list("strides", m.strides, false);
        if (!m.dims.empty() && !m.box.empty() && m.box.size() != m.dims.size())
          c.error(key + ".box", *t.get("box"),
                  fmt::format("has {} extents but dims has {}: one box extent per dimension",
                              m.box.size(), m.dims.size()));
        if (t.get("strides") && !m.dims.empty() && m.strides.size() + 1 != m.dims.size())
          c.error(key + ".strides", *t.get("strides"),
                  fmt::format("has {} entries; a {}-dimensional map takes {} (the byte strides of "
                              "dimensions 1 and up; dimension 0 is contiguous)",
                              m.strides.size(), m.dims.size(), m.dims.size() - 1));
        if (auto s = c.str(t, "swizzle", key + ".swizzle", false))
          if (!parse_swizzle(*s, m.swizzle))
            c.error(key + ".swizzle", *t.get("swizzle"),
                    fmt::format("unknown swizzle '{}' (none, 32B, 64B, 128B)", *s));
        if (auto v = c.integer(t, "l2_promotion", key + ".l2_promotion")) {
          m.l2_promotion = int(*v);
          if (*v != 0 && *v != 64 && *v != 128 && *v != 256)
            c.error(key + ".l2_promotion", *t.get("l2_promotion"), "must be 0, 64, 128 or 256");
        }
        p.tensor_maps.push_back(std::move(m));
      }
  }

  // Kernel args must name buffers, scalars or tensor maps.
  auto check_args = [&](const std::vector<std::string>& args, const std::string& key,
                        const toml::node& n) {
    for (auto& a : args)
      if (!p.buffer(a) && !p.scalar(a) && !p.tensor_map(a))
        c.error(
            key, n,
            fmt::format("'{}' names no [[buffer]], no [scalar.{}] and no [[tensor_map]]", a, a));
  };
  if (const toml::table* k = doc["kernel"].as_table(); k && k->get("args"))
    check_args(p.kernel_args, "kernel.args", *k->get("args"));

  // [tunables] and [launch] / [[launch]]
  if (const toml::node* tn = doc.get("tunables")) {
    if (const toml::table* tt = tn->as_table())
      for (auto&& [name, v] : *tt)
        p.tunables.push_back(tunable(c, name.str(), v, fmt::format("tunables.{}", name.str())));
    else
      c.error("tunables", *tn, "must be a table");
  }
  std::vector<const toml::table*> launch_tables;
  if (const toml::node* ln = doc.get("launch")) {
    if (const toml::table* lt = ln->as_table())
      launch_tables.push_back(lt);
    else if (const toml::array* la = ln->as_array(); la && la->is_array_of_tables())
      for (auto&& e : *la) launch_tables.push_back(e.as_table());
    else
      c.error("launch", *ln, "must be a [launch] table or [[launch]] tables");
  } else {
    c.error("launch", doc, "missing [launch] table");
  }
  for (size_t i = 0; i < launch_tables.size(); ++i) {
    const toml::table& t = *launch_tables[i];
    std::string key = launch_tables.size() == 1 ? "launch" : fmt::format("launch[{}]", i);
    c.only_keys(t, key, {"kernel", "args", "grid", "block", "shared", "tunables", "cooperative"});
    LaunchDecl l;
    l.kernel = c.str(t, "kernel", key + ".kernel", false).value_or(p.kernel_name);
    if (!is_valid_identifier(l.kernel)) c.error(key + ".kernel", t, "must be a C identifier");
    l.args = t.get("args") ? c.strings(t, "args", key + ".args") : p.kernel_args;
    if (t.get("args")) check_args(l.args, key + ".args", *t.get("args"));
    if (!t.get("grid")) c.error(key + ".grid", t, "missing (required)");
    if (!t.get("block")) c.error(key + ".block", t, "missing (required)");
    l.grid = dims(c, t.get("grid"), key + ".grid");
    l.block = dims(c, t.get("block"), key + ".block");
    if (const toml::node* sh = t.get("shared")) {
      if (auto e = c.expr(*sh, key + ".shared")) l.shared_bytes = *e;
    }
    if (const toml::node* co = t.get("cooperative")) {
      if (auto b = co->value<bool>())
        l.cooperative = *b;
      else
        c.error(key + ".cooperative", *co, "must be true or false");
    }
    if (const toml::node* tn = t.get("tunables")) {
      if (const toml::table* tt = tn->as_table()) {
        for (auto&& [name, v] : *tt) {
          if (p.tunable(name.str()))
            c.error(fmt::format("{}.tunables.{}", key, name.str()), v, "declared twice");
          else
            p.tunables.push_back(
                tunable(c, name.str(), v, fmt::format("{}.tunables.{}", key, name.str())));
        }
      } else
        c.error(key + ".tunables", *tn, "must be a table like { BLOCK = 256 }");
    }
    p.launches.push_back(std::move(l));
  }
  for (auto& t : p.tunables)
    if (!is_valid_identifier(t.name) || !names.insert(t.name).second)
      c.errors.push_back({file, "tunables." + t.name, 0, 0,
                          "not a valid name, or clashes with a buffer or scalar"});

  // Cases
  std::vector<int> case_lines; // where each [[case]] is, for problems found when evaluating sizes
  if (const toml::node* cn = doc.get("case")) {
    const toml::array* arr = cn->as_array();
    if (!arr || !arr->is_array_of_tables())
      c.error("case", *cn, "must be [[case]] tables");
    else
      for (size_t i = 0; i < arr->size(); ++i) {
        p.cases.push_back(read_case(c, *arr->get(i)->as_table(), fmt::format("case[{}]", i)));
        case_lines.push_back(int(arr->get(i)->source().begin.line));
      }
  }
  if (p.cases.empty())
    c.errors.push_back(
        {file, "case", 0, 0, "no [[case]]: at least one correctness case is required"});
  for (auto [name, slot] : {std::pair{"perf", &p.perf}, std::pair{"sim_perf", &p.sim_perf}}) {
    if (const toml::node* n = doc.get(name)) {
      if (const toml::table* t = n->as_table())
        *slot = read_case(c, *t, name);
      else
        c.error(name, *n, "must be a table of sizes");
    }
  }
  if (p.perf) p.perf->label = p.perf->label.empty() ? "perf" : p.perf->label;

  // [check] [cost] [budget] [medals]
  if (const toml::table* t = doc["check"].as_table()) {
    c.only_keys(*t, "check", {"rtol", "atol", "rtol_of_max"});
    p.rtol = c.number(*t, "rtol", "check.rtol");
    p.atol = c.number(*t, "atol", "check.atol");
    p.rtol_of_max = c.number(*t, "rtol_of_max", "check.rtol_of_max");
    for (auto [k, v] : {std::pair{"check.rtol", p.rtol}, std::pair{"check.atol", p.atol},
                        std::pair{"check.rtol_of_max", p.rtol_of_max}})
      if (v && !(*v >= 0)) c.error(k, *t, "must be >= 0");
  }
  if (const toml::table* t = doc["cost"].as_table()) {
    c.only_keys(*t, "cost", {"bytes", "flops", "precision"});
    if (const toml::node* n = t->get("bytes")) {
      if (auto e = c.expr(*n, "cost.bytes")) p.cost_bytes = *e;
    } else
      c.error("cost.bytes", *t, "missing (required)");
    if (const toml::node* n = t->get("flops")) {
      if (auto e = c.expr(*n, "cost.flops")) p.cost_flops = *e;
    }
    if (auto s = c.str(*t, "precision", "cost.precision", false)) {
      static const std::set<std::string> known{"f64",  "f32", "f16", "bf16",
                                               "tf32", "fp8", "i8",  "int"};
      if (!known.count(*s))
        c.error("cost.precision", *t->get("precision"),
                fmt::format("unknown precision '{}' (f64 f32 f16 bf16 tf32 fp8 i8 int)", *s));
      p.cost_precision = *s;
    }
  } else {
    c.error("cost", doc, "missing [cost] table (bytes, flops): the speed of light needs it");
  }
  if (const toml::table* t = doc["budget"].as_table()) {
    c.only_keys(*t, "budget", {"global_loads_per_thread", "global_stores_per_thread"});
    for (auto&& [k, v] : *t)
      if (auto i = c.integer(*t, k.str(), fmt::format("budget.{}", k.str())))
        p.budget[std::string(k.str())] = *i;
  }
  if (const toml::table* t = doc["medals"].as_table()) {
    c.only_keys(*t, "medals", {"bronze", "silver", "gold"});
    p.bronze = c.number(*t, "bronze", "medals.bronze").value_or(p.bronze);
    p.silver = c.number(*t, "silver", "medals.silver").value_or(p.silver);
    p.gold = c.number(*t, "gold", "medals.gold").value_or(p.gold);
    if (!(0 < p.bronze && p.bronze <= p.silver && p.silver <= p.gold && p.gold <= 1.5))
      c.error("medals", *t, "need 0 < bronze <= silver <= gold <= 1.5");
  }

  auto table_line = [&](const char* k) {
    const toml::node* n = doc.get(k);
    return n ? int(n->source().begin.line) : 0;
  };
  // Every name an expression uses must be a size some case gives, a tunable, or a scalar.
  std::set<std::string> known;
  for (auto& cs : p.cases)
    for (auto& [k, v] : cs.sizes) known.insert(k);
  for (auto& t : p.tunables) known.insert(t.name);
  auto check_names = [&](const Expr& e, const std::string& key, int line = 0) {
    for (auto& n : e.names())
      if (!known.count(n))
        c.errors.push_back(
            {file, key, line, 0,
             fmt::format("'{}' in \"{}\" is not a size of any [[case]] nor a tunable", n,
                         e.text())});
  };
  for (auto& b : p.buffers) {
    check_names(b.count, fmt::format("buffer '{}'.count", b.name), b.line);
    for (auto& s : b.shape) check_names(s, fmt::format("buffer '{}'.shape", b.name), b.line);
  }
  for (auto& m : p.tensor_maps)
    for (auto* l : {&m.dims, &m.box, &m.strides})
      for (auto& e : *l) check_names(e, fmt::format("tensor_map '{}'", m.name), m.line);
  for (size_t i = 0; i < p.launches.size(); ++i) {
    for (auto& e : p.launches[i].grid) check_names(e, "launch.grid");
    for (auto& e : p.launches[i].block) check_names(e, "launch.block");
    if (!p.launches[i].shared_bytes.empty())
      check_names(p.launches[i].shared_bytes, "launch.shared");
  }
  check_names(p.cost_bytes, "cost.bytes", table_line("cost"));
  if (!p.cost_flops.empty()) check_names(p.cost_flops, "cost.flops", table_line("cost"));
  for (auto& s : p.scalars) {
    if (s.expr)
      check_names(*s.expr, fmt::format("scalar.{}.value", s.name));
    else if (!is_float(s.type) && !known.count(s.name))
      c.errors.push_back(
          {file, "scalar." + s.name, 0, 0,
           fmt::format("integer scalar '{}' has no value and no case gives a size '{}'", s.name,
                       s.name)});
  }
  // Every case must give every size the expressions use, and they must evaluate sensibly.
  auto check_case = [&](const Case& cs, const std::string& key, int line) {
    Env env = p.env(cs);
    for (auto& b : p.buffers) {
      try {
        int64_t n = b.count.eval(env);
        if (n < 0)
          c.errors.push_back({file, key, line, 0,
                              fmt::format("buffer '{}' has a negative count ({})", b.name, n)});
        if (n > (int64_t(1) << 36))
          c.errors.push_back(
              {file, key, line, 0,
               fmt::format("buffer '{}' has {} elements: more than 2^36", b.name, n)});
      } catch (const ExprError& e) {
        c.errors.push_back(
            {file, key, line, 0, fmt::format("buffer '{}'.count: {}", b.name, e.what())});
      }
    }
    for (auto& m : p.tensor_maps) {
      if (!p.buffer(m.buffer) || m.dims.size() != m.box.size()) continue; // reported above
      try {
        if (auto why = tensor_map_problem(eval_tensor_map(p, m, env)); !why.empty())
          c.errors.push_back({file, key, m.line, 0, why});
      } catch (const ExprError& e) {
        c.errors.push_back({file, key, m.line, 0, e.what()});
      }
    }
    for (auto& [bn, g] : cs.init) {
      const BufferDecl* b = p.buffer(bn);
      if (!b)
        c.errors.push_back({file, key + ".init." + bn, line, 0, "names no buffer"});
      else if (g.kind == "q4_0" && b->type != DType::u8)
        c.errors.push_back({file, key + ".init." + bn, line, 0,
                            "q4_0 writes 18-byte blocks: the buffer's type must be u8"});
    }
  };
  for (size_t i = 0; i < p.cases.size(); ++i)
    check_case(p.cases[i], fmt::format("case[{}]", i), i < case_lines.size() ? case_lines[i] : 0);
  if (p.perf) check_case(*p.perf, "perf", table_line("perf"));
  if (p.sim_perf) check_case(*p.sim_perf, "sim_perf", table_line("sim_perf"));

  // Files: README.md, starter.cu, reference.cu and hints.md in the folder unless [files] names
  // others (which must stay inside it); the solution lives in solutions/ID.cu.
  const toml::table* files = doc["files"].as_table();
  if (files) c.only_keys(*files, "files", {"readme", "starter", "reference", "hints"});
  for (auto [k, def, slot] : {std::tuple{"readme", "README.md", &p.readme},
                              std::tuple{"starter", "starter.cu", &p.starter},
                              std::tuple{"reference", "reference.cu", &p.reference},
                              std::tuple{"hints", "hints.md", &p.hints}}) {
    std::string key = fmt::format("files.{}", k);
    std::string rel = def;
    const toml::node* n = files ? files->get(k) : nullptr;
    if (n) {
      if (auto s = c.str(*files, k, key, false))
        rel = *s;
      else
        continue;
    }
    auto in = inside(c, dir, rel, key, n);
    if (!in) continue;
    *slot = *in;
    if (!fs::is_regular_file(*slot, ec)) {
      if (n)
        c.error(key, *n, fmt::format("missing file {}", rel));
      else
        c.errors.push_back({file, "", 0, 0, fmt::format("missing file {}", (dir / rel).string())});
    }
  }
  p.solution = solutions_dir / (p.id + ".cu");

  if (!c.ok()) return std::nullopt;
  return p;
}

} // namespace wb
