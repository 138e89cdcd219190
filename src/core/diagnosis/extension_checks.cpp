#include "core/diagnosis/extension_checks.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/base/quote.hpp"
#include "core/base/text.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/situation/what_if.hpp"

namespace torchfix::detail {
namespace {

Finding make_finding(std::string id, Severity severity, const PythonEnv& env, const PackageKernels& p,
                     std::string title) {
  return env_finding(std::move(id), severity, env, p.distribution, std::move(title));
}

std::string who(const PackageKernels& p) {
  return p.distribution + (p.version.empty() ? "" : " " + p.version);
}

// Says the driver fix for CUDA `cuda` (shown as `label`) in the platform's numbering
// (recipes/toolkits.toml [[driver_floor]]); on Tegra the driver comes with JetPack.
std::string driver_fix(const Situation& x, const Knowledge& k, const Version& cuda, const std::string& label) {
  const DriverFloor* floor = k.driver_floor(cuda);
  std::string text = "Install an NVIDIA driver that supports CUDA " + label;
  if (x.platform == PlatformKind::tegra) {
    text += " (on Jetson: the JetPack release that ships it)";
  } else if (floor && windows_driver(x.platform) && floor->windows) {
    text += " (>= " + floor->windows->str() + " on Windows, " + floor->source + ")";
  } else if (floor) {
    text += " (>= " + floor->linux.str() + " on Linux, " + floor->source + ")";
  }
  return text;
}

// Turns "runs" verdicts of extensions built for a CUDA major above the
// driver's into problems: the kernels are there, the runtime will not start.
void check_driver_major(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  const std::optional<Version>& driver_cuda = x.driver.cuda;
  if (!driver_cuda) return;
  const int driver_major = driver_cuda->major();
  for (const PackageKernels& p : env.kernels) {
    const auto major = p.provenance.cuda_major;
    if (!major || *major <= driver_major || p.distribution == "torch" || p.distribution.starts_with("nvidia-")) {
      continue;
    }
    for (Finding& f : out) {
      if (f.id != "package.arch" || f.python != env.interpreter || f.package != p.distribution) continue;
      if (f.severity != Severity::ok) continue;
      f.id = "package.driver";
      f.severity = Severity::problem;
      f.title = who(p) + " cannot run: it was built with CUDA " + std::to_string(*major) +
                " and the driver supports CUDA " + driver_cuda->str() +
                " (\"CUDA driver version is insufficient for CUDA runtime version\")";
      f.details.push_back("its kernels cover the GPU; the CUDA " + std::to_string(*major) +
                          " runtime it loads refuses a driver of an older major");
      if (!x.driver.cuda_source.empty()) {
        f.details.push_back(x.driver.text() + ": CUDA " + driver_cuda->str() + " (" + x.driver.cuda_source + ")");
      }
      std::string text = driver_fix(x, k, Version({*major, 0}), std::to_string(*major));
      text += ", or install " + p.distribution + "'s build for CUDA " + std::to_string(driver_major);
      f.fixes.push_back({text, {}});
    }
  }
}

// Adds the move to the release of `p` whose build does not compress its
// kernels (recipes/extensions.toml [[uncompressed_release]]), when the
// installed one is in a compressed range.
void add_uncompressed_move(const Situation& x, const Knowledge& k, const PythonEnv& env, const PackageKernels& p,
                           Finding& f) {
  const auto installed = Version::parse(p.version);
  if (!installed) return;
  for (const UncompressedRelease& row : k.uncompressed_releases) {
    if (row.distribution != normalise_distribution(p.distribution) || *installed < row.min || row.max < *installed) {
      continue;
    }
    const std::string spec = row.distribution + "==" + row.release.str();
    f.details.push_back(row.source);
    f.fixes.push_back({"Install " + spec +
                           ", whose build does not compress its kernels (its setup.py fetches the "
                           "release's prebuilt wheel for this torch, or builds from source without one)",
                       {command_line(x.shell, {env.interpreter, "-m", "pip", "install", "--no-build-isolation",
                                               "--no-deps", spec})}});
    return;
  }
}

// Turns "runs" verdicts of extensions whose kernels are compressed in the
// fatbin format of nvcc's --compress-mode=size/balance into problems when the
// driver is older than that format needs (recipes/toolkits.toml
// [[fatbin_compression]]): the kernels are there, the driver cannot unpack
// them ("device kernel image is invalid"). A build of unknown CUDA major is
// judged by the driver's major (a newer one fails on the major already).
void check_compressed_fatbins(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  const std::optional<Version>& driver_cuda = x.driver.cuda;
  if (!driver_cuda) return;
  for (const PackageKernels& p : env.kernels) {
    if (std::ranges::none_of(p.binaries, &BinaryKernels::zstd_fatbins)) continue;
    const int major = p.provenance.cuda_major.value_or(driver_cuda->major());
    const auto row = std::ranges::find(k.fatbin_compression, major, &FatbinCompression::cuda_major);
    if (row == k.fatbin_compression.end() || !(*driver_cuda < row->driver_cuda)) continue;
    for (Finding& f : out) {
      if (f.id != "package.arch" || f.python != env.interpreter || f.package != p.distribution) continue;
      if (f.severity != Severity::ok) continue;
      f.id = "package.driver";
      f.severity = Severity::problem;
      f.title = who(p) + " cannot run: its kernels are compressed in a format that needs a driver for CUDA " +
                row->driver_cuda.str() + " or newer, and the driver supports CUDA " + driver_cuda->str() +
                " (\"device kernel image is invalid\")";
      for (const BinaryKernels& b : p.binaries) {
        if (b.zstd_fatbins)
          f.details.push_back(b.path +
                              ": fatbin entries compressed as nvcc --compress-mode=size "
                              "or balance writes them (flag 0x8000)");
      }
      f.details.push_back("CUDA " + std::to_string(major) + " builds compressed so need CUDA " +
                          row->driver_cuda.str() + "'s driver (" + row->source + ")");
      if (!x.driver.cuda_source.empty()) {
        f.details.push_back(x.driver.text() + ": CUDA " + driver_cuda->str() + " (" + x.driver.cuda_source + ")");
      }
      add_uncompressed_move(x, k, env, p, f);
      f.fixes.push_back({driver_fix(x, k, row->driver_cuda, row->driver_cuda.str()) + ", or install a build of " +
                             p.distribution + " made without --compress-mode=size/balance",
                         {}});
    }
  }
}

// Returns the name of the file at `path` (either separator) up to its first dot.
std::string library_stem(std::string_view path) {
  std::string_view name = path.substr(path.find_last_of("/\\") + 1);
  return std::string(name.substr(0, name.find('.')));
}

// Returns the [[cuda_library]] rows of `distribution` (recipes/extensions.toml).
std::vector<const CudaLibrary*> cuda_library_rows(const Knowledge& k, std::string_view distribution) {
  std::vector<const CudaLibrary*> rows;
  for (const CudaLibrary& r : k.cuda_libraries) {
    if (r.distribution == normalise_distribution(distribution)) rows.push_back(&r);
  }
  return rows;
}

// Returns the library `p` loads for the torch of `env` ("libbitsandbytes_cuda128"),
// or "" when `p` has no [[cuda_library]] row or torch has no CUDA version.
std::string wanted_library(const Knowledge& k, const PythonEnv& env, const PackageKernels& p) {
  const auto rows = cuda_library_rows(k, p.distribution);
  if (rows.empty() || !env.torch || !env.torch->cuda) return "";
  const auto cuda = Version::parse(*env.torch->cuda);
  if (!cuda) return "";
  return rows.front()->prefix + std::to_string(cuda->major()) + std::to_string(cuda->minor());
}

// Returns the [[cuda_library]] row of `p`'s library for torch's CUDA, or nullptr.
const CudaLibrary* cuda_library_row(const Knowledge& k, const PythonEnv& env, const PackageKernels& p) {
  const auto cuda = Version::parse(env.torch && env.torch->cuda ? *env.torch->cuda : "");
  if (!cuda) return nullptr;
  const Version series({cuda->major(), cuda->minor()});
  for (const CudaLibrary* r : cuda_library_rows(k, p.distribution)) {
    if (r->cuda == series) return r;
  }
  return nullptr;
}

// Says why `p` has no `wanted` library, or "" when it has it or nothing
// says: the libraries read from disk, or for a what-if `--with PKG==VER`
// (no binaries) a release below the table's first one with it.
std::string missing_library(const PackageKernels& p, const std::string& wanted, const std::string& prefix,
                            const CudaLibrary* row) {
  std::vector<std::string> held;
  for (const BinaryKernels& b : p.binaries) {
    if (library_stem(b.path).starts_with(prefix)) held.push_back(library_stem(b.path));
  }
  if (held.empty()) {
    const auto release = Version::parse(p.version);
    const bool older = p.provenance.installer == k_with_installer && row && release && *release < row->first;
    return older ? "its wheels hold " + wanted + " from " + row->first.str() + " on" : "";
  }
  if (std::ranges::find(held, wanted) != held.end()) return "";
  std::ranges::sort(held);
  std::string names;
  for (const std::string& name : held) names += (names.empty() ? "" : ", ") + name;
  return "it holds " + names;
}

// Says when an extension that loads one library per CUDA version, named by
// torch.version.cuda (recipes/extensions.toml [[cuda_library]]), holds none
// for the installed torch's: bitsandbytes then loads its CPU library. Its
// kernels are judged by the library it loads, so its "package.arch" verdicts
// (over the libraries of other CUDA versions) give way to this one; the fix
// moves to the first release that ships the library.
void check_cuda_libraries(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  for (const PackageKernels& p : env.kernels) {
    const std::string wanted = wanted_library(k, env, p);
    if (wanted.empty()) continue;
    const std::string& prefix = cuda_library_rows(k, p.distribution).front()->prefix;
    const CudaLibrary* row = cuda_library_row(k, env, p);
    const std::string why = missing_library(p, wanted, prefix, row);
    if (why.empty()) continue;
    std::erase_if(out, [&](const Finding& f) {
      return f.id == "package.arch" && f.python == env.interpreter && f.package == p.distribution;
    });
    Finding f = make_finding("package.cuda-library", Severity::problem, env, p,
                             who(p) + " has no " + wanted + " library for torch's CUDA " + *env.torch->cuda +
                                 ": it loads its CPU library instead, without GPU kernels");
    f.details.push_back(p.distribution + " loads the " + prefix + "XY library of torch.version.cuda X.Y; " + why);
    if (!row) {
      f.details.push_back("no release of " + p.distribution + " known to ship " + wanted +
                          " (recipes/extensions.toml [[cuda_library]])");
      out.push_back(std::move(f));
      continue;
    }
    f.details.push_back(row->source);
    if (!row->override_variable.empty()) {
      f.details.push_back(row->override_variable + " names another CUDA's library instead; it must cover the GPU");
    }
    const auto installed = Version::parse(p.version);
    if (!installed || *installed < row->first) {
      const std::string spec = row->distribution + "==" + row->first.str();
      f.fixes.push_back({"Install " + spec + ", the first release with " + wanted,
                         {command_line(x.shell, {env.interpreter, "-m", "pip", "install", "--no-deps", spec})}});
    }
    out.push_back(std::move(f));
  }
}

void check_shared_imports(const Situation& x, const PythonEnv& env, std::vector<Finding>& out) {
  std::map<std::string, std::vector<const PackageKernels*>> owners;
  for (const PackageKernels& p : env.kernels) {
    for (const std::string& top : p.provenance.owns) owners[top].push_back(&p);
  }
  for (const auto& [top, packages] : owners) {
    if (packages.size() < 2) continue;
    std::string names;
    std::vector<std::string> uninstall = {env.interpreter, "-m", "pip", "uninstall", "-y"};
    for (const PackageKernels* p : packages) {
      names += (names.empty() ? "" : " and ") + who(*p);
      uninstall.push_back(p->distribution);
    }
    Finding f = make_finding(
        "package.shared-import", Severity::problem, env, *packages.front(),
        names + " both install the import package `" + top + "`: whichever wrote its files last is the one imported");
    f.details.push_back("pip removes the files of one when it uninstalls the other, breaking both");
    const PackageKernels* torch = nullptr;
    for (const PackageKernels& p : env.kernels) {
      if (p.distribution == "torch") torch = &p;
    }
    // torch's own Requires-Dist names the one to keep, at a version its
    // index serves; without it, say where to read it.
    std::string keep_pin;
    if (torch) {
      for (const std::string& pin : torch->provenance.triton_pins) {
        f.details.push_back("torch " + torch->version + " requires " + pin);
        for (const PackageKernels* p : packages) {
          if (pin.starts_with(p->distribution + "==")) keep_pin = pin.substr(0, pin.find_first_of(" ;"));
        }
      }
    }
    std::vector<std::string> commands = {command_line(x.shell, uninstall)};
    if (!keep_pin.empty()) {
      commands.push_back(command_line(x.shell, {env.interpreter, "-m", "pip", "install", "--no-deps", keep_pin}));
      f.fixes.push_back({"Remove both, then reinstall only " + keep_pin + ", the one torch requires", commands});
    } else {
      f.fixes.push_back({"Remove both, then reinstall only the one your torch requires (`" + env.interpreter +
                             " -m pip show torch` lists it under Requires)",
                         commands});
    }
    out.push_back(std::move(f));
  }
}

// An editable checkout whose setup.py sets the arch itself: a rebuild with
// TORCH_CUDA_ARCH_LIST gives the same binary; name the flag and the change.
void name_arch_overrides(const Situation& x, const PythonEnv& env, std::vector<Finding>& out) {
  for (const PackageKernels& p : env.kernels) {
    if (p.provenance.arch_flags.empty()) continue;
    for (Finding& f : out) {
      if (f.id != "package.arch" || f.python != env.interpreter || f.package != p.distribution) continue;
      if (f.severity == Severity::ok || !f.gpu) continue;
      std::string gencode = "-gencode arch=compute_XY,code=sm_XY";
      if (const GpuGroup* group = x.group_of(*f.gpu)) {
        const std::string n = std::to_string(group->cc.number());
        gencode = "-gencode arch=compute_" + n + ",code=sm_" + n;
      }
      std::string flags;
      for (const std::string& flag : p.provenance.arch_flags) flags += (flags.empty() ? "`" : ", `") + flag + "`";
      f.details.push_back(p.provenance.editable_root + "/setup.py sets the arch itself (" + flags +
                          "): torch.utils.cpp_extension ignores TORCH_CUDA_ARCH_LIST when an nvcc flag in "
                          "extra_compile_args contains \"arch\", so a rebuild as it is gives the same kernels");
      f.fixes.insert(
          f.fixes.begin(),
          Fix{"Before the rebuild, edit " + p.provenance.editable_root + "/setup.py: remove " + flags +
                  " from extra_compile_args (TORCH_CUDA_ARCH_LIST then decides), or add `" + gencode + "` beside it",
              {}});
    }
  }
}

void note_provenance(const PythonEnv& env, std::vector<Finding>& out) {
  for (const PackageKernels& p : env.kernels) {
    const Provenance& o = p.provenance;
    if (o.editable_root.empty()) continue;
    Finding f = make_finding("package.editable", Severity::note, env, p,
                             who(p) + " is an editable install of " + o.editable_root);
    f.details.push_back("installed by " + (o.installer.empty() ? std::string("an unknown installer") : o.installer));
    for (const BinaryKernels& b : p.binaries) f.details.push_back("read " + b.path);
    if (o.cuda_major) f.details.push_back("links the CUDA " + std::to_string(*o.cuda_major) + " runtime");
    for (const std::string& pin : o.torch_pins) f.details.push_back("requires " + pin);
    out.push_back(std::move(f));
  }
}

// --with PKG==VER without a table row: say that its archs are unknown, and
// apply the compute-capability floor the tables have for PKG.
void check_unknown_with(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  for (const PackageKernels& p : env.kernels) {
    if (p.provenance.installer != k_with_installer || !p.binaries.empty()) continue;
    Finding f = make_finding("package.unknown", Severity::note, env, p,
                             "archs of " + p.distribution + "==" + p.version +
                                 " unknown (no row in recipes/extensions.toml): its kernels are not checked");
    f.unchecked = true;
    const ExtensionSupport* support = k.extension(p.distribution);
    if (!support) {
      f.details.push_back("no compute-capability floor is recorded for " + p.distribution + " either");
    } else {
      f.details.push_back(p.distribution + " needs compute capability >= " + support->min_cc.str() + " (" +
                          support->source + ")");
    }
    out.push_back(std::move(f));
    if (!support) continue;
    for (const GpuGroup& group : x.gpu_groups) {
      if (!(group.cc < support->min_cc)) continue;
      Finding below = make_finding(
          "package.min-cc", Severity::problem, env, p,
          who(p) + " cannot run on " + group.label() + ": it needs compute capability >= " + support->min_cc.str());
      about_gpus(below, group);
      below.details.push_back(support->source);
      below.details.push_back("no build of " + p.distribution + " holds kernels for " + group.cc.str() +
                              ": there is no fix in this project; use another GPU or a project that supports it");
      out.push_back(std::move(below));
    }
  }
}

// Says when an installed extension requires another torch release than the
// one installed: by its own METADATA (Requires-Dist torch==X) where it was
// read, else by recipes/torch-wheels.toml [[extension_pin]] (read from each
// release's METADATA). Its C++/CUDA part was built against that torch's ABI
// and does not load with this one (xformers prints "xFormers was built for:
// PyTorch 2.6.0 ... (you have 2.7.0+cu128)"). A build made here against the
// installed torch (a remedy's rebuild) is not judged by the wheel's pin.
// Says when a C++ extension needs torch symbols the installed torch does not
// export (the probe read both: TorchSymbols): it was built against another
// torch and its import fails with "undefined symbol", whatever it declares
// (sgl-kernel 0.1.1 pins no torch: sgl-project/sglang#5100). Its "runs"
// verdict, when it has kernels, becomes this problem.
void check_torch_symbols(const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  if (!env.torch) return;
  for (const PackageKernels& p : env.kernels) {
    const TorchSymbols* t = missing_torch_symbols(p, env.torch->version);
    if (!t || p.provenance.installer == k_rebuilt_installer) continue;
    const std::string count = std::to_string(t->missing) + (t->missing == 1 ? " symbol" : " symbols");
    const std::string title = who(p) + " was built against another torch: " + count + " torch " + env.torch->version +
                              " does not export, e.g. " +
                              (t->examples.empty() ? std::string("?") : t->examples.front());
    auto ran = std::ranges::find_if(out, [&](const Finding& f) {
      return f.id == "package.arch" && f.python == env.interpreter && f.package == p.distribution &&
             f.severity == Severity::ok;
    });
    Finding& f = ran != out.end() ? *ran : out.emplace_back(make_finding("", Severity::problem, env, p, ""));
    f.id = "package.torch-abi";
    f.severity = Severity::problem;
    f.title = title;
    f.details.push_back("its import fails with \"undefined symbol\": " + std::to_string(t->missing) + " of the " +
                        std::to_string(t->needed) +
                        " c10/at/torch symbols it needs are in none of torch's lib/libc10*.so, libtorch*.so");
    for (std::size_t i = 1; i < t->examples.size(); ++i) f.details.push_back("also missing: " + t->examples[i]);
    const auto metadata_pin = metadata_torch_pin(p.provenance);
    if (const auto wanted = required_torch(k, p.distribution, p.version, metadata_pin)) {
      f.details.push_back("it was built for torch " + wanted->torch.str() + (wanted->series ? ".x" : "") + " (" +
                          (wanted->row ? "recipes/torch-wheels.toml [[extension_pin]]: " + wanted->row->source
                                       : std::string(wanted->series ? "its local tag" : "its METADATA")) +
                          ")");
    } else {
      f.details.push_back("it declares no torch pin and no table row names the torch it was built for");
    }
  }
}

void check_torch_pins(const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  if (!env.torch) return;
  const std::string& installed = env.torch->version;
  const auto release = Version::parse(installed.substr(0, installed.find('+')));
  if (!release) return;
  // The packages with kernels (their METADATA read) and those the probe lists by name.
  std::map<std::string, std::string> installed_packages = env.distributions;
  for (const PackageKernels& p : env.kernels) installed_packages.emplace(p.distribution, p.version);
  for (const auto& [name, version] : installed_packages) {
    const auto kernels = std::ranges::find(env.kernels, name, &PackageKernels::distribution);
    const PackageKernels* p = kernels == env.kernels.end() ? nullptr : &*kernels;
    if (p && p->provenance.installer == k_rebuilt_installer) continue;
    // Its binary was read against this torch: check_torch_symbols said it.
    if (p && missing_torch_symbols(*p, installed)) continue;
    const auto wanted = required_torch(k, name, version, p ? metadata_torch_pin(p->provenance) : std::nullopt);
    if (!wanted || wanted->admits(*release)) continue;
    Finding f = env_finding("package.torch-pin", Severity::problem, env, name,
                            name + " " + version + " was built for torch " + wanted->torch.str() +
                                (wanted->series ? ".x" : "") + ", not the installed " + installed +
                                ": its C++/CUDA part does not load");
    if (wanted->series) {
      f.details.push_back("its version's local tag +" + version.substr(version.find('+') + 1) + " names torch " +
                          wanted->torch.str() + " (PyG's wheel naming: VERSION+ptXYcuNNN)");
      f.details.push_back("import fails with: undefined symbol (a C++ symbol of the torch it was built against)");
    } else {
      f.details.push_back(wanted->row
                              ? "its wheel requires torch==" + wanted->torch.str() +
                                    " (recipes/torch-wheels.toml [[extension_pin]]: " + wanted->row->source + ")"
                              : "its METADATA requires torch==" + wanted->torch.str());
    }
    out.push_back(std::move(f));
  }
}

}  // namespace

PackageKernels as_loaded(const Knowledge& k, const PythonEnv& env, const PackageKernels& p) {
  const std::string wanted = wanted_library(k, env, p);
  if (wanted.empty()) return p;
  const std::string& prefix = cuda_library_rows(k, p.distribution).front()->prefix;
  const bool held =
      std::ranges::any_of(p.binaries, [&](const BinaryKernels& b) { return library_stem(b.path) == wanted; });
  if (!held) return p;
  PackageKernels loaded = p;
  std::erase_if(loaded.binaries, [&](const BinaryKernels& b) {
    const std::string stem = library_stem(b.path);
    return stem.starts_with(prefix) && stem != wanted;
  });
  return loaded;
}

Finding env_finding(std::string id, Severity severity, const PythonEnv& env, std::string package, std::string title) {
  Finding f;
  f.id = std::move(id);
  f.severity = severity;
  f.section = Section::python;
  f.title = std::move(title);
  f.python = env.interpreter;
  f.package = std::move(package);
  return f;
}

const TorchSymbols* missing_torch_symbols(const PackageKernels& p, std::string_view torch_version) {
  // Another variant of the same release (cu124 -> cu121 of 2.5.1) has the same C++ ABI.
  const auto release = [](std::string_view v) { return v.substr(0, v.find('+')); };
  for (const BinaryKernels& b : p.binaries) {
    const auto& t = b.torch_symbols;
    if (t && release(t->torch) == release(torch_version) && t->missing > 0) {
      return &*b.torch_symbols;
    }
  }
  return nullptr;
}

std::optional<Version> metadata_torch_pin(const Provenance& p) {
  for (const std::string& req : p.torch_pins) {
    const std::string spec = req.substr(0, req.find(';'));
    const auto at = spec.find("==");
    if (at == std::string::npos || spec.find_first_of("<>!~,", at) != std::string::npos) continue;
    std::string text = spec.substr(at + 2);
    std::erase_if(text, [](char c) { return c == ' ' || c == '\t' || c == ')'; });
    if (auto v = Version::parse(text)) return v;
  }
  return std::nullopt;
}

bool RequiredTorch::admits(const Version& release) const {
  return series ? torch.major_minor() == release.major_minor() : torch == release;
}

// PyG's wheel workflow names each wheel VERSION+ptXYcuNNN: "pt" and the torch
// version with its ".0" dropped and the dots removed (torch 1.11.0: pt111, 2.3.0:
// pt23; rusty1s/pytorch_scatter .github/workflows/building.yml at 140d3ad, "Set
// version"). torch majors are one digit, so the first digit is the major.
std::optional<Version> local_tag_torch(std::string_view version) {
  const auto plus = version.find('+');
  if (plus == std::string_view::npos || version.substr(plus + 1, 2) != "pt") return std::nullopt;
  std::string_view digits = version.substr(plus + 3);
  digits = digits.substr(0, std::min(digits.size(), digits.find_first_not_of("0123456789")));
  if (digits.size() < 2) return std::nullopt;
  return Version::parse(std::string(digits.substr(0, 1)) + "." + std::string(digits.substr(1)));
}

std::optional<RequiredTorch> required_torch(const Knowledge& k, std::string_view name, std::string_view version,
                                            const std::optional<Version>& metadata_pin) {
  if (metadata_pin) return RequiredTorch{*metadata_pin, nullptr};
  if (const ExtensionPin* row = k.pin_of(name, version)) return RequiredTorch{row->torch, row};
  if (auto series = local_tag_torch(version)) return RequiredTorch{*series, nullptr, true};
  return std::nullopt;
}

void check_extension_stack(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  check_cuda_libraries(x, k, env, out);
  check_driver_major(x, k, env, out);
  check_compressed_fatbins(x, k, env, out);
  check_unknown_with(x, k, env, out);
  check_torch_symbols(k, env, out);
  check_torch_pins(k, env, out);
  check_shared_imports(x, env, out);
  name_arch_overrides(x, env, out);
  note_provenance(env, out);
}

}  // namespace torchfix::detail
