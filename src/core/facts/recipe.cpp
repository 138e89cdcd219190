#include "core/facts/recipe.hpp"

#include <algorithm>

#include "core/arch/arch.hpp"
#include "core/facts/toml_text.hpp"

namespace torchfix {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

using enum FieldType;
constexpr Need opt = Need::optional;

constexpr std::string_view k_kinds[] = {"project", "extension"};
constexpr std::string_view k_arch_formats[] = {"torch", "cmake", "gencode", "flash_attn"};
constexpr std::string_view k_artefact_kinds[] = {"cuda_library", "wheel"};

constexpr Field k_env_fields[] = {{"name", text}, {"value", text}, {"source", text}};
constexpr TableSchema k_env{"[[env]]", k_env_fields};
constexpr Field k_step_fields[] = {{"name", text}, {"argv", texts}, {"compiles", boolean, opt}};
constexpr TableSchema k_step{"[[front_end.step]]", k_step_fields};
constexpr Field k_front_end_fields[] = {{"name", text},
                                        {"min", version, opt},
                                        {"max", version, opt},
                                        {"source", text},
                                        {"default_for_branches", boolean, opt},
                                        {"requires_any", texts, opt},
                                        {"env", tables, opt, {}, &k_env},
                                        {"step", tables, Need::required, {}, &k_step}};
constexpr TableSchema k_front_end{"[[front_end]]", k_front_end_fields};
constexpr Field k_memory_fields[] = {{"per_job_mib", integer}, {"nested", integer, opt}, {"source", text}};
constexpr TableSchema k_memory{"[memory]", k_memory_fields};
constexpr Field k_artefact_fields[] = {{"glob", text}, {"kind", text, Need::required, k_artefact_kinds}};
constexpr TableSchema k_artefact{"[[artefact]]", k_artefact_fields};
constexpr Field k_recipe_fields[] = {{"name", text},
                                     {"description", text},
                                     {"source", text},
                                     {"kind", text, Need::required, k_kinds},
                                     {"repository", text, opt},
                                     {"default_ref", text, opt},
                                     {"ref_help", text, opt},
                                     {"tag_format", text, opt},
                                     {"submodules", boolean, opt},
                                     {"arch_variable", text},
                                     {"arch_format", text, Need::required, k_arch_formats},
                                     {"arch_supported", texts, opt},
                                     {"jobs_variable", text},
                                     {"nvcc_threads_variable", text, opt},
                                     {"nvcc_threads_max", integer, opt},
                                     {"extra_gencode_variable", text, opt},
                                     {"disk_mib", integer, opt},
                                     {"gcc_min", integer, opt},
                                     {"memory", table, Need::required, {}, &k_memory},
                                     {"env", tables, opt, {}, &k_env},
                                     {"front_end", tables, Need::required, {}, &k_front_end},
                                     {"artefact", tables, opt, {}, &k_artefact}};
constexpr TableSchema k_recipe{"recipe", k_recipe_fields};

// Reads an optional integer of at least `min`, `fallback` when absent.
// The largest count a recipe field holds: 2^30 MiB is 1 PiB, far above any
// machine, and times 2^20 (bytes) still fits in 64 bits.
constexpr std::int64_t k_field_max = std::int64_t{1} << 30;

Expected<std::int64_t> bounded(const Row& row, std::string_view key, std::int64_t fallback, std::int64_t min) {
  if (!row.has(key)) return fallback;
  auto v = row.optional_integer(key);
  if (!v || *v < min || *v > k_field_max) {
    return std::unexpected(row.error("field '" + std::string(key) + "' must be an integer from " + std::to_string(min) +
                                         " to " + std::to_string(k_field_max),
                                     key));
  }
  return *v;
}

// Every {word} in `text` must be a known placeholder: a typo would otherwise
// reach the build as a literal "{pyhton}".
Expected<void> check_placeholders(const std::string& text, const Row& where, std::string_view key) {
  for (std::size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) return std::unexpected(where.error("unclosed '{' in '" + text + "'", key));
    const std::string_view word(text.data() + open, close - open + 1);
    if (std::ranges::find(k_recipe_placeholders, word) == std::end(k_recipe_placeholders)) {
      std::string known;
      for (std::string_view p : k_recipe_placeholders) known += (known.empty() ? "" : " ") + std::string(p);
      return std::unexpected(where.error("unknown placeholder " + std::string(word) + " (known: " + known + ")", key));
    }
  }
  return {};
}

Expected<std::vector<RecipeEnv>> parse_env(const Row& parent, const char* what) {
  std::vector<RecipeEnv> out;
  for (const Row& f : parent.rows("env", std::string(what) + " [[env]]")) {
    TF_TRY(name, f.string("name"));
    TF_TRY(value, f.string("value"));
    TF_TRY(source, f.string("source"));
    if (auto ok = check_placeholders(value, f, "value"); !ok) return std::unexpected(ok.error());
    out.push_back({name, value, source});
  }
  return out;
}

Expected<RecipeStep> parse_step(const Row& sf) {
  RecipeStep step;
  TF_TRY(step_name, sf.string("name"));
  TF_TRY(argv, sf.strings("argv"));
  for (const std::string& arg : argv) {
    if (auto ok = check_placeholders(arg, sf, "argv"); !ok) return std::unexpected(ok.error());
  }
  step.name = step_name;
  step.argv = std::move(argv);
  step.compiles = sf.flag("compiles");
  return step;
}

Expected<FrontEnd> parse_front_end(const Row& row) {
  FrontEnd fe;
  TF_TRY(name, row.string("name"));
  fe.name = name;
  Row named(row.table(), row.file(), "[[front_end]] '" + name + "'");
  TF_TRY(min, named.optional_version("min"));
  TF_TRY(max, named.optional_version("max"));
  TF_TRY(source, named.string("source"));
  fe.min = min;
  fe.max = max;
  fe.source = source;
  fe.default_for_branches = named.flag("default_for_branches");
  if (named.has("requires_any")) {
    TF_TRY(files, named.strings("requires_any"));
    fe.requires_any = std::move(files);
  }
  TF_TRY(env, parse_env(named, "front_end"));
  fe.env = std::move(env);
  const std::vector<Row> steps = named.rows("step", "[[front_end.step]]");
  if (steps.empty()) return std::unexpected(named.error("needs at least one [[front_end.step]]"));
  for (const Row& sf : steps) {
    TF_TRY(step, parse_step(sf));
    fe.steps.push_back(std::move(step));
  }
  return fe;
}

Expected<ArchFormat> parse_arch_format(const Row& f) {
  TF_TRY(text, f.string("arch_format"));
  for (ArchFormat format : {ArchFormat::torch, ArchFormat::cmake, ArchFormat::gencode, ArchFormat::flash_attn}) {
    if (text == to_string(format)) return format;
  }
  return std::unexpected(
      f.error("arch_format '" + text + "' is unknown (use torch, cmake, gencode or flash_attn)", "arch_format"));
}

// Reads the [memory] table: the peak memory of one compile job.
Expected<void> parse_memory(const Row& f, Recipe& r) {
  const toml::table* memory = f.table()["memory"].as_table();
  if (!memory) return std::unexpected(f.error("missing [memory] table (per_job_mib, nested, source)"));
  Row m(*memory, f.file(), "[memory]");
  if (!m.has("per_job_mib")) return std::unexpected(m.error("missing field 'per_job_mib'"));
  TF_TRY(per_job, bounded(m, "per_job_mib", 0, 1));
  TF_TRY(nested, bounded(m, "nested", 1, 1));
  TF_TRY(memory_source, m.string("source"));
  r.job_memory_mib = static_cast<std::uint64_t>(per_job);
  r.nested_parallelism = static_cast<int>(nested);
  r.memory_source = memory_source;
  return {};
}

Expected<void> parse_arch_supported(const Row& f, Recipe& r) {
  if (!f.has("arch_supported")) return {};
  TF_TRY(supported, f.strings("arch_supported"));
  for (const std::string& s : supported) {
    auto cc = ComputeCapability::parse(s);
    if (!cc) return std::unexpected(f.error("arch_supported: " + cc.error().message, "arch_supported"));
    r.arch_supported.push_back(*cc);
  }
  std::ranges::sort(r.arch_supported);
  return {};
}

Expected<void> parse_artefacts(const Row& f, Recipe& r) {
  for (const Row& af : f.rows("artefact", "[[artefact]]")) {
    TF_TRY(glob, af.string("glob"));
    if (auto ok = check_placeholders(glob, af, "glob"); !ok) return std::unexpected(ok.error());
    TF_TRY(akind, af.string("kind"));
    if (akind != "cuda_library" && akind != "wheel") {
      return std::unexpected(af.error("kind '" + akind + "' is unknown (use cuda_library or wheel)", "kind"));
    }
    r.artefacts.push_back({glob, akind == "wheel" ? ArtefactKind::wheel : ArtefactKind::cuda_library});
  }
  return {};
}

// Reads the recipe's top-level keys (name, kind, arch switch, jobs, limits).
Expected<void> parse_header(const Row& f, Recipe& r) {
  TF_TRY(name, f.string("name"));
  TF_TRY(description, f.string("description"));
  TF_TRY(source, f.string("source"));
  TF_TRY(kind, f.string("kind"));
  if (kind != "project" && kind != "extension") {
    return std::unexpected(f.error("kind '" + kind + "' is unknown (use project or extension)", "kind"));
  }
  TF_TRY(arch_variable, f.string("arch_variable"));
  TF_TRY(arch_format, parse_arch_format(f));
  TF_TRY(jobs_variable, f.string("jobs_variable"));
  TF_TRY(threads_max, bounded(f, "nvcc_threads_max", 1, 1));
  TF_TRY(disk_mib, bounded(f, "disk_mib", 1024, 0));
  r.name = name;
  r.description = description;
  r.source = source;
  r.kind = kind == "project" ? RecipeKind::project : RecipeKind::extension;
  r.repository = f.optional_string("repository").value_or("");
  r.default_ref = f.optional_string("default_ref").value_or("");
  r.ref_help = f.optional_string("ref_help").value_or("");
  r.tag_format = f.optional_string("tag_format").value_or(r.tag_format);
  r.submodules = f.flag("submodules");
  r.arch_variable = arch_variable;
  r.arch_format = arch_format;
  r.jobs_variable = jobs_variable;
  r.nvcc_threads_variable = f.optional_string("nvcc_threads_variable").value_or("");
  r.extra_gencode_variable = f.optional_string("extra_gencode_variable").value_or("");
  r.nvcc_threads_max = static_cast<int>(threads_max);
  r.disk_mib = static_cast<std::uint64_t>(disk_mib);
  if (f.has("gcc_min")) {
    TF_TRY(gcc_min, bounded(f, "gcc_min", 0, 1));
    r.gcc_min = static_cast<int>(gcc_min);
  }
  return {};
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
  TF_TRY(root, parse_checked_toml(text, file, k_recipe));
  const Row f(root, file, "recipe");
  Recipe r;
  r.file = file;
  if (auto ok = parse_header(f, r); !ok) return std::unexpected(ok.error());
  if (auto ok = parse_arch_supported(f, r); !ok) return std::unexpected(ok.error());
  if (auto ok = parse_memory(f, r); !ok) return std::unexpected(ok.error());
  TF_TRY(env, parse_env(f, "recipe"));
  r.env = std::move(env);
  const std::vector<Row> front_ends = f.rows("front_end", "[[front_end]]");
  if (front_ends.empty()) return std::unexpected(f.error("needs at least one [[front_end]]"));
  for (const Row& row : front_ends) {
    TF_TRY(fe, parse_front_end(row));
    r.front_ends.push_back(std::move(fe));
  }
  if (auto ok = parse_artefacts(f, r); !ok) return std::unexpected(ok.error());
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
