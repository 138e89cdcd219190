#include "core/recipe.hpp"

#include <algorithm>

#include "core/arch.hpp"
#include "core/toml_text.hpp"

namespace torchfix {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

// Field access on one TOML table with file:line in every error, so a user who
// edits a recipe is pointed at the line that is wrong.
class Fields {
 public:
  Fields(const toml::table& table, const std::string& file, std::string what)
      : m_table(table), m_file(file), m_what(std::move(what)) {}

  Error error(const std::string& message, const toml::node* node = nullptr) const {
    const auto line = node ? node->source().begin.line : m_table.source().begin.line;
    return Error{m_file + ":" + std::to_string(line) + ": " + m_what + ": " + message};
  }
  Expected<std::string> string(const char* key) const {
    if (auto v = m_table[key].value<std::string>()) return *v;
    return std::unexpected(error(std::string("missing or non-string field '") + key + "'", m_table.get(key)));
  }
  Expected<std::string> optional_string(const char* key) const {
    if (!m_table.contains(key)) return std::string{};
    return string(key);
  }
  Expected<std::int64_t> integer(const char* key, std::int64_t fallback, std::int64_t min) const {
    if (!m_table.contains(key)) return fallback;
    auto v = m_table[key].value<std::int64_t>();
    if (!v || *v < min) {
      return std::unexpected(
          error(std::string("field '") + key + "' must be an integer >= " + std::to_string(min), m_table.get(key)));
    }
    return *v;
  }
  bool flag(const char* key) const { return m_table[key].value_or(false); }
  Expected<std::optional<Version>> version(const char* key) const {
    if (!m_table.contains(key)) return std::optional<Version>{};
    TF_TRY(text, string(key));
    auto v = Version::parse(text);
    if (!v || v->str() != text)
      return std::unexpected(
          error("field '" + std::string(key) + "' = '" + text + "' is not a version", m_table.get(key)));
    return std::optional<Version>(*v);
  }
  Expected<std::vector<std::string>> strings(const char* key) const {
    const toml::array* array = m_table[key].as_array();
    if (!array || array->empty())
      return std::unexpected(error(std::string("missing or empty list '") + key + "'", m_table.get(key)));
    std::vector<std::string> out;
    for (const auto& item : *array) {
      auto s = item.value<std::string>();
      if (!s) return std::unexpected(error(std::string("list '") + key + "' must hold strings", &item));
      out.push_back(*s);
    }
    return out;
  }
  const toml::array* tables(const char* key) const { return m_table[key].as_array(); }
  const toml::table& table() const { return m_table; }
  const std::string& file() const { return m_file; }

 private:
  const toml::table& m_table;
  const std::string& m_file;
  std::string m_what;
};

// Every {word} in `text` must be a known placeholder: a typo would otherwise
// reach the build as a literal "{pyhton}".
Expected<void> check_placeholders(const std::string& text, const Fields& where, const toml::node* node) {
  for (std::size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) return std::unexpected(where.error("unclosed '{' in '" + text + "'", node));
    const std::string_view word(text.data() + open, close - open + 1);
    if (std::ranges::find(k_recipe_placeholders, word) == std::end(k_recipe_placeholders)) {
      std::string known;
      for (std::string_view p : k_recipe_placeholders) known += (known.empty() ? "" : " ") + std::string(p);
      return std::unexpected(where.error("unknown placeholder " + std::string(word) + " (known: " + known + ")", node));
    }
  }
  return {};
}

Expected<std::vector<RecipeEnv>> parse_env(const Fields& parent, const char* what) {
  std::vector<RecipeEnv> out;
  const toml::array* array = parent.tables("env");
  if (!array) return out;
  for (const auto& node : *array) {
    const toml::table* t = node.as_table();
    if (!t) return std::unexpected(parent.error("[[env]] entries must be tables", &node));
    Fields f(*t, parent.file(), std::string(what) + " [[env]]");
    RecipeEnv env;
    TF_TRY(name, f.string("name"));
    TF_TRY(value, f.string("value"));
    TF_TRY(source, f.string("source"));
    if (auto ok = check_placeholders(value, f, t->get("value")); !ok) return std::unexpected(ok.error());
    out.push_back({name, value, source});
  }
  return out;
}

Expected<FrontEnd> parse_front_end(const toml::table& t, const std::string& file) {
  Fields f(t, file, "[[front_end]]");
  FrontEnd fe;
  TF_TRY(name, f.string("name"));
  fe.name = name;
  Fields named(t, file, "[[front_end]] '" + name + "'");
  TF_TRY(min, named.version("min"));
  TF_TRY(max, named.version("max"));
  TF_TRY(source, named.string("source"));
  fe.min = min;
  fe.max = max;
  fe.source = source;
  fe.default_for_branches = named.flag("default_for_branches");
  if (t.contains("requires_any")) {
    TF_TRY(files, named.strings("requires_any"));
    fe.requires_any = std::move(files);
  }
  TF_TRY(env, parse_env(named, "front_end"));
  fe.env = std::move(env);
  const toml::array* steps = named.tables("step");
  if (!steps || steps->empty()) return std::unexpected(named.error("needs at least one [[front_end.step]]"));
  for (const auto& node : *steps) {
    const toml::table* st = node.as_table();
    if (!st) return std::unexpected(named.error("[[front_end.step]] entries must be tables", &node));
    Fields sf(*st, file, "[[front_end.step]]");
    RecipeStep step;
    TF_TRY(step_name, sf.string("name"));
    TF_TRY(argv, sf.strings("argv"));
    for (const std::string& arg : argv) {
      if (auto ok = check_placeholders(arg, sf, st->get("argv")); !ok) return std::unexpected(ok.error());
    }
    step.name = step_name;
    step.argv = std::move(argv);
    step.compiles = sf.flag("compiles");
    fe.steps.push_back(std::move(step));
  }
  return fe;
}

Expected<ArchFormat> parse_arch_format(const Fields& f) {
  TF_TRY(text, f.string("arch_format"));
  for (ArchFormat format : {ArchFormat::torch, ArchFormat::cmake, ArchFormat::gencode, ArchFormat::flash_attn}) {
    if (text == to_string(format)) return format;
  }
  return std::unexpected(f.error("arch_format '" + text + "' is unknown (use torch, cmake, gencode or flash_attn)",
                                 f.table().get("arch_format")));
}

}  // namespace

std::string_view to_string(ArchFormat format) {
  switch (format) {
    case ArchFormat::torch:
      return "torch";
    case ArchFormat::cmake:
      return "cmake";
    case ArchFormat::gencode:
      return "gencode";
    case ArchFormat::flash_attn:
      return "flash_attn";
  }
  return "torch";
}

const FrontEnd* Recipe::front_end_for(const std::optional<Version>& release,
                                      const std::vector<std::string>& top_files) const {
  for (const FrontEnd& fe : front_ends) {
    if (!fe.requires_any.empty() && !top_files.empty() &&
        std::ranges::none_of(fe.requires_any, [&](const std::string& f) {
          return std::ranges::find(top_files, f) != top_files.end();
        })) {
      continue;
    }
    if (!release) {
      if (fe.default_for_branches || (!fe.min && !fe.max)) return &fe;
      continue;
    }
    const Version mm({release->major(), release->minor()});
    if (fe.min && mm < *fe.min) continue;
    if (fe.max && mm > *fe.max) continue;
    return &fe;
  }
  return nullptr;
}

Expected<Recipe> parse_recipe(std::string_view text, const std::string& file) {
  auto parsed = parse_toml_text(text, file);
  if (!parsed) return std::unexpected(parsed.error());
  const toml::table& root = *parsed;
  Fields f(root, file, "recipe");
  Recipe r;
  r.file = file;
  TF_TRY(name, f.string("name"));
  TF_TRY(description, f.string("description"));
  TF_TRY(source, f.string("source"));
  TF_TRY(kind, f.string("kind"));
  if (kind != "project" && kind != "extension") {
    return std::unexpected(f.error("kind '" + kind + "' is unknown (use project or extension)", root.get("kind")));
  }
  TF_TRY(repository, f.optional_string("repository"));
  TF_TRY(default_ref, f.optional_string("default_ref"));
  TF_TRY(ref_help, f.optional_string("ref_help"));
  TF_TRY(arch_variable, f.string("arch_variable"));
  TF_TRY(arch_format, parse_arch_format(f));
  TF_TRY(jobs_variable, f.string("jobs_variable"));
  TF_TRY(threads_variable, f.optional_string("nvcc_threads_variable"));
  TF_TRY(extra_gencode_variable, f.optional_string("extra_gencode_variable"));
  TF_TRY(threads_max, f.integer("nvcc_threads_max", 1, 1));
  TF_TRY(disk_mib, f.integer("disk_mib", 1024, 0));
  r.name = name;
  r.description = description;
  r.source = source;
  r.kind = kind == "project" ? RecipeKind::project : RecipeKind::extension;
  r.repository = repository;
  r.default_ref = default_ref;
  r.ref_help = ref_help;
  r.submodules = f.flag("submodules");
  r.arch_variable = arch_variable;
  r.arch_format = arch_format;
  r.jobs_variable = jobs_variable;
  r.nvcc_threads_variable = threads_variable;
  r.extra_gencode_variable = extra_gencode_variable;
  r.nvcc_threads_max = static_cast<int>(threads_max);
  r.disk_mib = static_cast<std::uint64_t>(disk_mib);
  if (root.contains("gcc_min")) {
    TF_TRY(gcc_min, f.integer("gcc_min", 0, 1));
    r.gcc_min = static_cast<int>(gcc_min);
  }
  if (root.contains("arch_supported")) {
    TF_TRY(supported, f.strings("arch_supported"));
    for (const std::string& s : supported) {
      auto cc = ComputeCapability::parse(s);
      if (!cc) return std::unexpected(f.error("arch_supported: " + cc.error().message, root.get("arch_supported")));
      r.arch_supported.push_back(*cc);
    }
    std::ranges::sort(r.arch_supported);
  }

  const toml::table* memory = root["memory"].as_table();
  if (!memory) return std::unexpected(f.error("missing [memory] table (per_job_mib, nested, source)"));
  Fields m(*memory, file, "[memory]");
  TF_TRY(per_job, m.integer("per_job_mib", 0, 1));
  if (!memory->contains("per_job_mib")) return std::unexpected(m.error("missing field 'per_job_mib'"));
  TF_TRY(nested, m.integer("nested", 1, 1));
  TF_TRY(memory_source, m.string("source"));
  r.job_memory_mib = static_cast<std::uint64_t>(per_job);
  r.nested_parallelism = static_cast<int>(nested);
  r.memory_source = memory_source;

  TF_TRY(env, parse_env(f, "recipe"));
  r.env = std::move(env);
  const toml::array* front_ends = root["front_end"].as_array();
  if (!front_ends || front_ends->empty()) return std::unexpected(f.error("needs at least one [[front_end]]"));
  for (const auto& node : *front_ends) {
    const toml::table* t = node.as_table();
    if (!t) return std::unexpected(f.error("[[front_end]] entries must be tables", &node));
    TF_TRY(fe, parse_front_end(*t, file));
    r.front_ends.push_back(std::move(fe));
  }
  if (const toml::array* artefacts = root["artefact"].as_array()) {
    for (const auto& node : *artefacts) {
      const toml::table* t = node.as_table();
      if (!t) return std::unexpected(f.error("[[artefact]] entries must be tables", &node));
      Fields af(*t, file, "[[artefact]]");
      TF_TRY(glob, af.string("glob"));
      if (auto ok = check_placeholders(glob, af, t->get("glob")); !ok) return std::unexpected(ok.error());
      TF_TRY(akind, af.string("kind"));
      if (akind != "cuda_library" && akind != "wheel") {
        return std::unexpected(af.error("kind '" + akind + "' is unknown (use cuda_library or wheel)", t->get("kind")));
      }
      r.artefacts.push_back({glob, akind == "wheel" ? ArtefactKind::wheel : ArtefactKind::cuda_library});
    }
  }
  return r;
}

Expected<const Recipe*> find_recipe(const std::vector<Recipe>& recipes, std::string_view name) {
  std::string known;
  for (const Recipe& r : recipes) {
    if (r.name == name) return &r;
    known += (known.empty() ? "" : ", ") + r.name;
  }
  return fail("no recipe called '" + std::string(name) + "' (known: " + known +
              "); for any other project use the cuda-extension recipe with --src DIR");
}

// Snap each target down to the newest arch the project has kernels for, of
// the same major (flash-attn builds 80 and runs it on 8.6: SASS of 8.0 runs
// on 8.x, CUDA Programming Guide "Binary Compatibility").
Expected<RecipeArch> snap_arch_for_recipe(const ArchList& list, const Recipe& recipe, std::vector<std::string>& notes) {
  if (recipe.arch_supported.empty()) return RecipeArch{list, {}};
  std::vector<std::string> known;
  for (ComputeCapability s : recipe.arch_supported) known.push_back(s.str());
  RecipeArch out;
  for (const ArchTarget& t : list.targets) {
    if (std::ranges::find(recipe.arch_supported, t.cc) != recipe.arch_supported.end()) {
      out.all.targets.push_back(t);
      continue;
    }
    std::optional<ComputeCapability> best;
    for (ComputeCapability s : recipe.arch_supported) {
      if (s.major == t.cc.major && s <= t.cc) best = s;
    }
    if (!best) {
      return fail("recipe '" + recipe.name + "' has no kernels for compute capability " + t.cc.str() +
                  " (it builds only " + join(known, ";") + ", per " + recipe.file +
                  "): the project does not support this GPU upstream");
    }
    // An integrated (Tegra) GPU runs only SASS built for exactly its
    // capability (arch-rules.md): snapping 8.7 to 8.0 would rebuild a binary
    // that cannot run there. The project supports the generation (8.0), so
    // its kernels compile for 8.7 when nvcc is asked directly.
    if (is_tegra(t.cc)) {
      if (recipe.extra_gencode_variable.empty()) {
        return fail("recipe '" + recipe.name + "' cannot ask for SASS of exactly " + t.cc.str() +
                    " (an integrated GPU): its " + recipe.arch_variable + " accepts only " + join(known, ";") + " (" +
                    recipe.file + ")");
      }
      out.all.targets.push_back(t);
      out.extra.targets.push_back(t);
      notes.push_back(recipe.arch_variable + " accepts only " + join(known, ";") + ": " + t.cc.str() +
                      " (integrated GPU, exact SASS) is added through " + recipe.extra_gencode_variable);
      continue;
    }
    notes.push_back(recipe.name + " builds " + best->str() + " kernels for " + t.cc.str() + " GPUs");
    out.all.targets.push_back({*best, ArchVariant::generic, t.ptx, std::nullopt});
  }
  out.all = normalise(std::move(out.all));
  out.extra = normalise(std::move(out.extra));
  return out;
}

}  // namespace torchfix
