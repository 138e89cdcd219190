#include "core/situation/toolchain.hpp"

#include "core/situation/situation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <tuple>

namespace torchfix {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

std::string version_text(const Toolkit& t) {
  return t.version ? t.version->str() : std::string("unknown version");
}

// The first nvcc of an 'a' or 'f' target is the table's (recipes/toolkits.toml
// [[nvcc_arch]]: sm_90a from 12.0, the family targets from 12.9):
// `nvcc --list-gpu-code` prints only the generic targets. Without the tables
// no variant target is accepted.
std::optional<Version> variant_floor(const Knowledge* knowledge, ArchVariant variant) {
  return knowledge ? knowledge->first_nvcc_for_variant(variant) : std::nullopt;
}

bool toolkit_accepts(const std::vector<Arch>& accepted, const std::optional<Version>& version, const ArchTarget& t,
                     const Knowledge* knowledge) {
  auto has = [&](ComputeCapability cc) {
    return std::ranges::any_of(accepted, [&](const Arch& a) { return a.cc == cc; });
  };
  if (!has(t.cc) || !has(t.ptx_cc())) return false;
  if (t.variant == ArchVariant::generic) return true;
  const std::optional<Version> floor = variant_floor(knowledge, t.variant);
  return floor && version && *version >= *floor;
}

std::string compiler_name(const HostCompiler& c) {
  std::string family(to_string(c.family));
  return family + " " + (c.version ? c.version->str() : std::string("?")) + " (" + c.path + ")";
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// A C++ driver by name: g++, g++-12, clang++-17, c++, x86_64-linux-gnu-g++-12;
// MSVC's cl.exe compiles both languages.
bool is_cxx_driver(const HostCompiler& c) {
  return c.family == CompilerFamily::msvc || file_name(c.path).find("++") != std::string::npos;
}

std::optional<int> bound_for(const HostCompilerBounds* bounds, CompilerFamily family) {
  if (!bounds) return std::nullopt;
  if (family == CompilerFamily::gcc) return bounds->gcc_below;
  if (family == CompilerFamily::clang) return bounds->clang_below;
  return std::nullopt;
}

// The bounds that concern `family`: MSVC's range on Windows, gcc's and
// clang's elsewhere.
std::string bounds_text(const HostCompilerBounds& b, CompilerFamily family) {
  std::vector<std::string> parts;
  if (family == CompilerFamily::msvc) {
    if (b.msvc_min && b.msvc_below) parts.push_back("MSVC " + msvc_range_text(b));
    return join(parts, ", ");
  }
  if (b.gcc_below) parts.push_back("gcc < " + std::to_string(*b.gcc_below));
  if (b.clang_below) parts.push_back("clang < " + std::to_string(*b.clang_below));
  return join(parts, ", ");
}

// Whether nvcc with `bounds` accepts `c`: gcc and clang below their bound,
// MSVC inside its range; a clang or MSVC without a recorded bound is not
// trusted (nvcc checks both too).
std::optional<std::string> rejects(const HostCompiler& c, const Toolkit& toolkit, const HostCompilerBounds* bounds,
                                   std::optional<int> gcc_min) {
  if (c.family == CompilerFamily::other || !c.version)
    return compiler_name(c) + ": not gcc, clang or MSVC, or no version";
  if (c.family == CompilerFamily::msvc) {
    const MsvcFit fit = msvc_fit(c, bounds);
    if (fit == MsvcFit::unknown) return compiler_name(c) + ": no MSVC range recorded for nvcc " + version_text(toolkit);
    if (fit != MsvcFit::inside)
      return compiler_name(c) + ": nvcc " + version_text(toolkit) + " accepts MSVC " + msvc_range_text(*bounds);
    return std::nullopt;
  }
  if (bounds && c.family == CompilerFamily::clang && !bounds->clang_below)
    return compiler_name(c) + ": no clang bound recorded for nvcc " + version_text(toolkit);
  if (auto below = bound_for(bounds, c.family); below && c.version->major() >= *below) {
    return compiler_name(c) + ": nvcc " + version_text(toolkit) + " needs " + std::string(to_string(c.family)) + " < " +
           std::to_string(*below);
  }
  if (gcc_min && c.family == CompilerFamily::gcc && c.version->major() < *gcc_min)
    return compiler_name(c) + ": the project needs gcc >= " + std::to_string(*gcc_min);
  return std::nullopt;
}

// The C compiler of the same installation: same family and version, a C
// driver name (gcc-12 for g++-12, clang-17 for clang++-17), listed in the
// snapshot, so no path is made up. Same folder first.
std::string c_compiler_for(const HostCompiler& cxx, const std::vector<HostCompiler>& compilers) {
  const std::string dir = std::filesystem::path(cxx.path).parent_path().string();
  const HostCompiler* best = nullptr;
  for (const HostCompiler& c : compilers) {
    if (is_cxx_driver(c) || c.family != cxx.family || c.version != cxx.version) continue;
    const bool same_dir = std::filesystem::path(c.path).parent_path().string() == dir;
    if (!best || (same_dir && std::filesystem::path(best->path).parent_path().string() != dir)) best = &c;
  }
  return best ? best->path : std::string();
}

// The newest generic SASS `archs` has that still runs on `gpu` (GB10, 12.1,
// runs sm_120: arch-rules.md, "SASS"); the GPU's own when nvcc has it or
// nothing fits (the build then says nvcc is too old, which is the truth).
ComputeCapability target_for(ComputeCapability gpu, const std::vector<Arch>& archs) {
  const auto exact = [&](const Arch& a) {
    return a.kind == ImageKind::sass && a.variant == ArchVariant::generic && a.cc == gpu;
  };
  if (archs.empty() || std::ranges::any_of(archs, exact)) return gpu;
  std::optional<ComputeCapability> best;
  for (const Arch& a : archs) {
    if (a.kind == ImageKind::sass && a.variant == ArchVariant::generic && sass_runs_on(a, gpu) &&
        (!best || a.cc > *best)) {
      best = a.cc;
    }
  }
  return best.value_or(gpu);
}

// Where each probe looks for nvcc, in order (probe/toolkit_paths.cpp: the
// Linux one, summed up; probe/toolkit_paths_win.cpp: the native Windows one).
std::string_view nvcc_places(NvccSearch search) {
  if (search == NvccSearch::windows) {
    return "PATH, CUDA_PATH, CUDA_HOME, CUDA_PATH_V*, %ProgramFiles%\\NVIDIA GPU Computing Toolkit\\CUDA\\v*, "
           "%CONDA_PREFIX%\\Library\\bin, pip's nvidia wheels";
  }
  return "CUDA_HOME, PATH, /usr/local/cuda*";
}

// A [[compiler_package]] text with its {major} filled in.
std::string with_major(std::string text, const std::string& major) {
  for (auto at = text.find("{major}"); at != std::string::npos; at = text.find("{major}", at + major.size()))
    text.replace(at, 7, major);
  return text;
}

}  // namespace

std::vector<Arch> toolkit_archs(const Toolkit& toolkit, const Knowledge* knowledge) {
  if (!toolkit.archs.empty()) return toolkit.archs;
  if (knowledge && toolkit.version) return knowledge->nvcc_archs_for(*toolkit.version);
  return {};
}

Expected<std::pair<Toolkit, std::string>> choose_toolkit(const std::vector<Toolkit>& toolkits, const ArchList& arch,
                                                         const Knowledge* knowledge, std::optional<Version> torch_cuda,
                                                         std::optional<Version> driver_cuda, NvccSearch search) {
  std::vector<const Toolkit*> sorted;
  for (const Toolkit& t : toolkits) sorted.push_back(&t);
  std::ranges::stable_sort(sorted, [](const Toolkit* a, const Toolkit* b) {
    return a->version.value_or(Version()) > b->version.value_or(Version());
  });
  std::vector<std::string> rejected;
  for (const Toolkit* t : sorted) {
    if (torch_cuda && (!t->version || t->version->major() != torch_cuda->major())) {
      rejected.push_back("nvcc " + version_text(*t) + " (" + t->nvcc + "): major differs from torch's CUDA " +
                         torch_cuda->str() + " (cpp_extension refuses a mismatched major)");
      continue;
    }
    if (driver_cuda && t->version && t->version->major() > driver_cuda->major()) {
      rejected.push_back("nvcc " + version_text(*t) + " (" + t->nvcc + "): what it builds needs a driver for CUDA " +
                         std::to_string(t->version->major()) + ".x; this driver supports CUDA " + driver_cuda->str());
      continue;
    }
    const std::vector<Arch> accepted = toolkit_archs(*t, knowledge);
    std::vector<std::string> missing;
    for (const ArchTarget& target : arch.targets) {
      if (!toolkit_accepts(accepted, t->version, target, knowledge))
        missing.push_back(render(ArchList{{target}}, ArchFormat::torch));
    }
    if (missing.empty()) {
      std::string reason = "newest installed nvcc that accepts every target (" +
                           (t->archs.empty() ? std::string("table") : t->archs_source) + ")";
      if (torch_cuda) reason += " and matches torch's CUDA " + torch_cuda->str();
      return std::pair{*t, reason};
    }
    rejected.push_back("nvcc " + version_text(*t) + " (" + t->nvcc + ") cannot compile " + join(missing, ";"));
  }
  // Name the CUDA window that would do: every target's window intersected
  // (sm_70 ends at 12.9, sm_100 starts at 12.8, 'f' targets at 12.9: all from the table).
  std::optional<NvccWindow> needed;
  if (knowledge) {
    for (const ArchTarget& target : arch.targets) {
      auto window = knowledge->nvcc_window_for(target.cc);
      if (!window) continue;
      const std::optional<Version> floor = variant_floor(knowledge, target.variant);
      if (floor) window->narrow({floor, std::nullopt});
      if (!needed) needed.emplace();
      needed->narrow(*window);
    }
  }
  std::string message = "no installed CUDA toolkit can build for " + render(arch, ArchFormat::torch);
  if (toolkits.empty()) message += ": no nvcc found (looked at " + std::string(nvcc_places(search)) + ")";
  if (!rejected.empty()) message += ": " + join(rejected, "; ");
  if (needed && needed->empty()) {
    message += ". No single CUDA version compiles all of these targets (recipes/toolkits.toml): build them separately";
  } else if (needed && (needed->first || needed->last)) {
    message += ". Install " + needed->str();
    if (torch_cuda)
      message += " with major " + std::to_string(torch_cuda->major()) + " (torch's CUDA is " + torch_cuda->str() + ")";
    if (driver_cuda && !torch_cuda)
      message += " with major <= " + std::to_string(driver_cuda->major()) + " (the driver supports CUDA " +
                 driver_cuda->str() + ")";
  }
  return fail(message);
}

CompilerInstall compiler_install(const Knowledge* knowledge, std::string_view os, CompilerFamily family, int major) {
  const std::string v = std::to_string(major);
  const bool gcc = family == CompilerFamily::gcc;
  const auto named = [&](const CompilerPackage& p) {
    return p.family == to_string(family) &&
           std::ranges::any_of(p.os, [&](const std::string& word) { return os.find(word) != std::string_view::npos; });
  };
  if (knowledge) {
    const auto row = std::ranges::find_if(knowledge->compiler_packages, named);
    if (row != knowledge->compiler_packages.end())
      return {with_major(row->command, v), with_major(row->cxx, v), with_major(row->cc, v)};
  }
  return {"# install " + std::string(gcc ? "gcc " : "clang ") + v +
              " from your distribution (Debian/Ubuntu: apt install " + (gcc ? "g++-" : "clang-") + v + ")",
          gcc ? "/usr/bin/g++-" + v : "/usr/bin/clang++-" + v, gcc ? "/usr/bin/gcc-" + v : "/usr/bin/clang-" + v};
}

const HostCompiler* current_host_compiler(const std::vector<HostCompiler>& compilers) {
  for (const char* origin : {"CUDAHOSTCXX", "CXX"}) {
    for (const HostCompiler& c : compilers) {
      if (c.origin == origin) return &c;
    }
  }
  // nvcc runs g++ from PATH; CMake's default CXX is c++.
  for (const char* name : {"g++", "c++", "clang++"}) {
    for (const HostCompiler& c : compilers) {
      if (c.origin != k_gcc_toolset_origin && file_name(c.path) == name) return &c;
    }
  }
  // Windows: PyTorch's cpp_extension builds through distutils, whose
  // _msvccompiler (_find_vc2017) takes `vswhere -latest`: the newest install.
  const HostCompiler* newest = nullptr;
  for (const HostCompiler& c : compilers) {
    if (c.family == CompilerFamily::msvc && c.version && (!newest || *c.version > *newest->version)) newest = &c;
  }
  return newest;
}

Expected<HostCompilerChoice> choose_host_compiler(const std::vector<HostCompiler>& compilers, const Toolkit& toolkit,
                                                  const Knowledge* knowledge, std::optional<int> gcc_min,
                                                  std::string_view os) {
  const HostCompilerBounds* bounds =
      knowledge && toolkit.version ? knowledge->host_bounds_for(*toolkit.version) : nullptr;
  const HostCompiler* current = current_host_compiler(compilers);
  std::vector<const HostCompiler*> fits;
  std::vector<std::string> rejected;
  for (const HostCompiler& c : compilers) {
    if (!is_cxx_driver(c)) continue;
    if (std::ranges::any_of(fits, [&](const HostCompiler* f) { return f->path == c.path; })) continue;
    if (auto why = rejects(c, toolkit, bounds, gcc_min)) {
      rejected.push_back(*why);
      continue;
    }
    fits.push_back(&c);
  }
  // The user's own compiler when nvcc accepts it; else its family (CC and
  // CXX stay one family), else gcc (what CUDA and PyTorch CI use); newest.
  const auto rank = [&](const HostCompiler* c) {
    return std::tuple(current && c->path == current->path, current && c->family == current->family,
                      c->family == CompilerFamily::gcc, *c->version);
  };
  std::ranges::stable_sort(fits, [&](const HostCompiler* a, const HostCompiler* b) { return rank(a) > rank(b); });
  if (!fits.empty()) {
    const HostCompiler& c = *fits.front();
    std::string reason;
    if (current && c.path == current->path) {
      reason = "your compiler (" + current->origin + "), inside nvcc " + version_text(toolkit) + "'s bounds";
    } else {
      reason = "newest " + std::string(current && c.family == current->family ? "same-family " : "") +
               "compiler inside nvcc " + version_text(toolkit) + "'s bounds";
      if (current) reason += " (" + compiler_name(*current) + " is not)";
    }
    if (bounds) {
      reason += " (" + bounds_text(*bounds, c.family) + "; " + bounds->source + ")";
    } else {
      reason += " (no host compiler bounds recorded for nvcc " + version_text(toolkit) + ")";
    }
    return HostCompilerChoice{c, c_compiler_for(c, compilers), reason};
  }
  std::string message = "no installed C++ compiler fits nvcc " + version_text(toolkit);
  if (compilers.empty()) message += ": none found on PATH";
  if (!rejected.empty()) message += ": " + join(rejected, "; ");
  const bool windows =
      std::ranges::any_of(compilers, [](const HostCompiler& c) { return c.family == CompilerFamily::msvc; });
  if (windows && bounds && bounds->msvc_below) {
    message += ". Install an MSVC toolset of " + msvc_range_text(*bounds) + " with the Visual Studio Installer";
  } else if (bounds && bounds->gcc_below) {
    const int want = std::max(*bounds->gcc_below - 1, gcc_min.value_or(0));
    const CompilerInstall install = compiler_install(knowledge, os, CompilerFamily::gcc, want);
    message += ". Install gcc " + std::to_string(want) +
               (install.command.starts_with('#') ? " from your distribution" : " (" + install.command + ")") +
               " and rerun: torchfix finds " + install.cxx + " and sets CUDAHOSTCXX, CC and CXX to it";
    // A newer toolkit that accepts the installed gcc is the other way out:
    // the lowest CUDA whose bound admits the newest installed gcc.
    if (knowledge) {
      const HostCompiler* newest_gcc = nullptr;
      for (const HostCompiler& c : compilers) {
        if (c.family == CompilerFamily::gcc && c.version && (!newest_gcc || *c.version > *newest_gcc->version))
          newest_gcc = &c;
      }
      const HostCompilerBounds* lowest = nullptr;
      for (const HostCompilerBounds& b : knowledge->host_compilers) {
        if (!newest_gcc || !b.gcc_below || newest_gcc->version->major() >= *b.gcc_below) continue;
        if (b.cuda_min <= toolkit.version.value_or(Version())) continue;
        if (!lowest || b.cuda_min < lowest->cuda_min) lowest = &b;
      }
      if (lowest)
        message += "; or install CUDA >= " + lowest->cuda_min.str() + " (accepts " + compiler_name(*newest_gcc) + ")";
    }
  }
  return fail(message);
}

Toolchain decide_toolchain(const ToolchainFacts& facts, const Knowledge& knowledge, const ToolchainRequest& request) {
  Toolchain t;
  const std::vector<ComputeCapability> gpus = distinct_capabilities(facts.gpus);
  if (request.arch) {
    t.arch = *request.arch;
    t.arch_reason = request.arch_reason;
  } else if (!gpus.empty()) {
    t.arch = arch_list_for_gpus(gpus, request.ptx);
    std::vector<std::string> names;
    for (ComputeCapability cc : gpus) names.push_back(cc.str());
    t.arch_reason = "GPUs " + join(names, ", ") + "; PTX " + std::string(to_string(request.ptx));
  }
  const std::optional<Version> torch_cuda =
      request.recipe && request.recipe->kind == RecipeKind::extension ? facts.torch_cuda : std::nullopt;
  if (!t.arch.empty()) {
    auto toolkit = choose_toolkit(facts.toolkits, t.arch, &knowledge, torch_cuda, facts.driver_cuda, facts.nvcc_search);
    if (!toolkit && !request.arch) {
      // No nvcc knows a GPU's own arch: build SASS the best toolkit has that
      // still runs on it (its major matching torch's for extensions, newest).
      const Toolkit* best = nullptr;
      for (const Toolkit& k : facts.toolkits) {
        if (!k.version || (torch_cuda && k.version->major() != torch_cuda->major())) continue;
        if (!best || *k.version > *best->version) best = &k;
      }
      if (best) {
        const std::vector<Arch> archs = toolkit_archs(*best, &knowledge);
        std::vector<ComputeCapability> targets;
        std::vector<std::string> notes;
        for (ComputeCapability cc : gpus) {
          const ComputeCapability target = target_for(cc, archs);
          targets.push_back(target);
          if (target != cc) {
            notes.push_back(cc.str() + " via " + target.str() + " SASS (nvcc " + best->version->str() + " has no sm_" +
                            std::to_string(cc.number()) + ")");
          }
        }
        ArchList adapted = arch_list_for_gpus(distinct_capabilities(targets), request.ptx);
        if (auto retry =
                choose_toolkit(facts.toolkits, adapted, &knowledge, torch_cuda, facts.driver_cuda, facts.nvcc_search)) {
          t.arch = adapted;
          t.arch_reason += ": " + join(notes, ", ");
          toolkit = retry;
        }
      }
    }
    if (toolkit) {
      t.toolkit = toolkit->first;
      t.toolkit_reason = toolkit->second;
    } else {
      t.toolkit_reason = toolkit.error().message;
      // An explicit list may hold archs no GPU here needs.
      if (request.arch) t.toolkit_reason += ", or build only the archs your GPUs need (--arch auto)";
    }
  } else {
    t.toolkit_reason = "no GPU and no arch list to build for";
  }
  if (const HostCompiler* current = current_host_compiler(facts.compilers)) t.current = *current;
  if (t.toolkit) {
    const HostCompilerBounds* bounds = t.toolkit->version ? knowledge.host_bounds_for(*t.toolkit->version) : nullptr;
    if (bounds) {
      t.bounds_text = bounds_text(*bounds, t.current ? t.current->family : CompilerFamily::gcc);
      t.bounds_source = bounds->source;
    }
    if (t.current && t.current->version) {
      const auto below = bound_for(bounds, t.current->family);
      const MsvcFit fit = msvc_fit(*t.current, bounds);
      t.current_outside_bounds =
          (below && t.current->version->major() >= *below) || fit == MsvcFit::too_old || fit == MsvcFit::too_new;
    }
    auto compiler = choose_host_compiler(facts.compilers, *t.toolkit, &knowledge,
                                         request.recipe ? request.recipe->gcc_min : std::nullopt, facts.os);
    if (compiler) {
      t.compiler = *compiler;
    } else {
      t.compiler_error = compiler.error().message;
    }
  }
  if (request.recipe) t.jobs = plan_jobs(facts.resources, *request.recipe, t.arch, request.jobs);
  return t;
}

}  // namespace torchfix
