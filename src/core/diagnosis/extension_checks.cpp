#include "core/diagnosis/extension_checks.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/base/quote.hpp"
#include "core/base/text.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/diagnosis/triton_checks.hpp"
#include "core/situation/what_if.hpp"

namespace torchfix::detail {

Finding package_finding(std::string id, Severity severity, const PythonEnv& env, const PackageKernels& p,
                        std::string title) {
  return env_finding(std::move(id), severity, env, p.distribution, std::move(title));
}

std::string package_label(const PackageKernels& p) {
  return p.distribution + (p.version.empty() ? "" : " " + p.version);
}

std::vector<Finding*> runs_verdicts(std::vector<Finding>& out, const PythonEnv& env, const PackageKernels& p) {
  std::vector<Finding*> verdicts;
  for (Finding& f : out) {
    if (f.id == "package.arch" && f.python == env.interpreter && f.package == p.distribution &&
        f.severity == Severity::ok)
      verdicts.push_back(&f);
  }
  return verdicts;
}

namespace {

// One distribution installed twice on the interpreter's path (a venv over
// --system-site-packages, a .pth to another site-packages, the user site):
// Python imports the copy first on sys.path, and pip uninstalls that one.
Finding shadowed_install(const Situation& x, const PythonEnv& env, const std::string& top,
                         const std::vector<const PackageKernels*>& packages) {
  const std::string& name = packages.front()->distribution;
  std::string versions;
  for (const PackageKernels* p : packages) versions += (versions.empty() ? "" : " and ") + p->version;
  Finding f = package_finding("package.shadowed", Severity::problem, env, *packages.front(),
                              name + " is installed twice on this Python's path (" + versions +
                                  "): the copy first on sys.path is the one `import " + top + "` loads");
  f.details.push_back("pip uninstalls that same first copy; the doctor then judges the one left");
  f.fixes.push_back({"Remove the copy imported first, then run the doctor again",
                     {command_line(x.shell, {env.interpreter, "-m", "pip", "uninstall", "-y", name})}});
  return f;
}

void check_shared_imports(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  std::map<std::string, std::vector<const PackageKernels*>> owners;
  for (const PackageKernels& p : env.kernels) {
    for (const std::string& top : p.provenance.owns) owners[top].push_back(&p);
  }
  for (const auto& [top, packages] : owners) {
    if (packages.size() < 2) continue;
    if (std::ranges::all_of(
            packages, [&](const PackageKernels* p) { return p->distribution == packages.front()->distribution; })) {
      out.push_back(shadowed_install(x, env, top, packages));
      continue;
    }
    std::string names;
    std::vector<std::string> uninstall = {env.interpreter, "-m", "pip", "uninstall", "-y"};
    for (const PackageKernels* p : packages) {
      names += (names.empty() ? "" : " and ") + package_label(*p);
      uninstall.push_back(p->distribution);
    }
    Finding f = package_finding(
        "package.shared-import", Severity::problem, env, *packages.front(),
        names + " both install the import package `" + top + "`: whichever wrote its files last is the one imported");
    f.details.push_back("pip removes the files of one when it uninstalls the other, breaking both");
    // The Triton torch needs (its Requires-Dist, else [[torch_triton]]),
    // the one decision triton.pin also reads; other packages: torch's pins.
    std::string keep;
    std::string keep_command;
    if (const auto pair = top == "triton" ? triton_pair(x, k, env) : std::nullopt) {
      f.details.push_back("torch " + pair->torch + " needs " + pair->requirement() + " (" + pair->source + ")");
      keep = pair->requirement();
      keep_command = triton_install_command(x, env, *pair);
    }
    std::vector<std::string> commands = {command_line(x.shell, uninstall)};
    if (!keep.empty()) {
      commands.push_back(keep_command);
      f.fixes.push_back({"Remove both, then reinstall only " + keep + ", the one torch requires", commands});
    } else {
      f.fixes.push_back({"Remove both, then reinstall only the one your torch requires (`" + env.interpreter +
                             " -m pip show torch` lists it under Requires)",
                         commands});
    }
    out.push_back(std::move(f));
  }
}

// An editable checkout whose setup.py sets the arch itself: a rebuild with
// TORCH_CUDA_ARCH_LIST alone gives the same binary. Name the flag: the
// resolver's rebuild of the checkout appends the GPU's arch through nvcc's
// NVCC_APPEND_FLAGS (resolver_fix.cpp appended_archs); editing setup.py once
// is the alternative.
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
                          "extra_compile_args contains \"arch\", so its rebuild adds the GPU's arch through nvcc's own "
                          "NVCC_APPEND_FLAGS");
      const std::string edit = "edit " + p.provenance.editable_root + "/setup.py: remove " + flags +
                               " from extra_compile_args (TORCH_CUDA_ARCH_LIST then decides), or add `" + gencode +
                               "` beside it";
      f.fixes.push_back(Fix{"Or, once, " + edit + "; later rebuilds then need no NVCC_APPEND_FLAGS", {}});
    }
  }
}

void note_provenance(const PythonEnv& env, std::vector<Finding>& out) {
  for (const PackageKernels& p : env.kernels) {
    const Provenance& o = p.provenance;
    if (o.editable_root.empty()) continue;
    Finding f = package_finding("package.editable", Severity::note, env, p,
                                package_label(p) + " is an editable install of " + o.editable_root);
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
    // Its kernels are built here at run time (runtime_builds.cpp judges the toolkit).
    if (runtime_build_of(k, p)) continue;
    Finding f = package_finding("package.unknown", Severity::note, env, p,
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
      Finding below = package_finding("package.min-cc", Severity::problem, env, p,
                                      package_label(p) + " cannot run on " + group.label() +
                                          ": it needs compute capability >= " + support->min_cc.str());
      about_gpus(below, group);
      below.details.push_back(support->source);
      below.details.push_back("no build of " + p.distribution + " holds kernels for " + group.cc.str() +
                              ": there is no fix in this project; use another GPU or a project that supports it");
      out.push_back(std::move(below));
    }
  }
}

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
    const std::string title = package_label(p) + " was built against another torch: " + count + " torch " +
                              env.torch->version + " does not export, e.g. " +
                              (t->examples.empty() ? std::string("?") : t->examples.front());
    const std::vector<Finding*> runs = runs_verdicts(out, env, p);
    Finding& f = runs.empty() ? out.emplace_back(package_finding("", Severity::problem, env, p, "")) : *runs.front();
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
    } else if (const auto built = built_against_torch(k, p)) {
      f.details.push_back("it was built against torch " + built->torch.str() + (built->series ? ".x" : "") + " (" +
                          built->source + ")");
    } else {
      f.details.push_back("it declares no torch pin and no table row names the torch it was built for");
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
    // The torch a wheel was built against, where it pins none: its binary's symbols decide (above).
    if (!wanted || wanted->admits(*release) || wanted->built_against()) continue;
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

namespace {

// Returns the CUDA major of a cuNN/cuNNN tag ("cu12": 12, "cu130": 13, "cu118": 11).
std::optional<int> tag_cuda_major(std::string_view tag) {
  if (!tag.starts_with("cu")) return std::nullopt;
  const std::string_view digits = tag.substr(2, tag.find_first_not_of("0123456789", 2) - 2);
  if (digits.size() < 2 || digits.size() > 3) return std::nullopt;
  return std::stoi(std::string(digits.substr(0, digits.size() - (digits.size() == 3 ? 1 : 0))));
}

// The torch series and CUDA major a release wheel's file name names in its
// local version ("...+cu12torch2.5cxx11abiFALSE-..."), from the last segment
// of `url` (a `%2B` read as `+`).
std::optional<BuiltAgainst> wheel_name_torch(std::string_view url) {
  std::string name(url.substr(url.find_last_of('/') + 1));
  for (auto at = name.find("%2B"); at != std::string::npos; at = name.find("%2B")) name.replace(at, 3, "+");
  if (!name.ends_with(".whl")) return std::nullopt;
  const auto plus = name.find('+');
  if (plus == std::string::npos) return std::nullopt;
  const std::string local = name.substr(plus + 1, name.find('-', plus) - plus - 1);
  const auto at = local.find("torch");
  if (at == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(local).substr(at + 5);
  rest = rest.substr(0, rest.find_first_not_of("0123456789."));
  const auto series = Version::parse(std::string(rest));
  if (!series || series->str().find('.') == std::string::npos) return std::nullopt;
  return BuiltAgainst{Version({series->major(), series->minor()}), true, tag_cuda_major(local), "",
                      "the release wheel it was installed from, " + name};
}

}  // namespace

std::optional<BuiltAgainst> built_against_torch(const Knowledge& k, const PackageKernels& p) {
  std::optional<BuiltAgainst> out;
  if (const ExtensionPin* row = k.built_against_row(p.distribution, p.version)) {
    out = BuiltAgainst{row->torch, false, std::nullopt, "",
                       "recipes/torch-wheels.toml [[extension_pin]]: " + row->source};
  } else {
    out = wheel_name_torch(p.provenance.url);
  }
  if (!out) return out;
  const auto plus = p.version.find('+');
  const std::string_view local = plus == std::string::npos ? "" : std::string_view(p.version).substr(plus + 1);
  if (local.size() == 5 && tag_cuda_major(local)) out->variant = std::string(local);
  if (const auto linked = linked_cudart_major(p)) {
    out->cuda_major = linked;
  } else if (!out->cuda_major) {
    out->cuda_major = p.provenance.cuda_major;
  }
  return out;
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
  check_runtime_major(x, env, out);
  check_broken_releases(x, k, env, out);
  check_unknown_with(x, k, env, out);
  check_torch_symbols(k, env, out);
  check_torch_pins(k, env, out);
  check_companions(x, k, env, out);
  check_runtime_builds(x, k, env, out);
  check_shared_imports(x, k, env, out);
  name_arch_overrides(x, env, out);
  note_provenance(env, out);
}

}  // namespace torchfix::detail
