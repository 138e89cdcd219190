// Whether an extension's binaries load at all, whatever their archs: the
// CUDA major each was built with against the driver's, kernels compressed in
// a format the driver cannot unpack, the one library of several that an
// extension loads for torch's CUDA (bitsandbytes), and releases known to fail
// on a range of GPUs (xformers' FlashAttention-3 dispatch). Pure, like
// extension_checks.cpp, whose check_extension_stack calls these.

#include <algorithm>

#include "core/base/quote.hpp"
#include "core/base/text.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/diagnosis/extension_checks.hpp"
#include "core/situation/what_if.hpp"

namespace torchfix::detail {
namespace {

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

// Adds where the driver's CUDA version was read, when the probe said.
void add_driver_detail(const Situation& x, Finding& f) {
  if (x.driver.cuda && !x.driver.cuda_source.empty()) {
    f.details.push_back(x.driver.text() + ": CUDA " + x.driver.cuda->str() + " (" + x.driver.cuda_source + ")");
  }
}

// Returns the move of `p` to its release's build for the CUDA of the torch
// of `env` from its project's own index (recipes/extensions.toml
// [[variant_index]]), torch staying, where the driver runs that torch;
// nullopt when no source names such an index.
std::optional<Fix> variant_build(const Situation& x, const Knowledge& k, const PythonEnv& env,
                                 const PackageKernels& p) {
  const std::string& torch = env.torch ? env.torch->version : std::string();
  const auto cuda = Version::parse(env.torch && env.torch->cuda ? *env.torch->cuda : "");
  if (torch.find('+') == std::string::npos || !cuda || !x.driver.cuda || cuda->major() > x.driver.cuda->major()) {
    return std::nullopt;
  }
  const VariantIndex* row = k.variant_index(p.distribution, p.version, torch.substr(torch.find('+') + 1));
  if (!row) return std::nullopt;
  const std::string spec = p.distribution + "==" + row->version;
  return Fix{"Install " + p.distribution + " " + row->version + "'s build for the " + row->variant +
                 " torch from its own index, torch " + torch + " staying (" + row->source + ")",
             {command_line(x.shell, {env.interpreter, "-m", "pip", "install", "--force-reinstall", "--no-deps", spec,
                                     "--extra-index-url", row->index})}};
}

}  // namespace

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
    for (Finding* verdict : runs_verdicts(out, env, p)) {
      Finding& f = *verdict;
      f.id = "package.driver";
      f.severity = Severity::problem;
      f.title = package_label(p) + " cannot run: it was built with CUDA " + std::to_string(*major) +
                " and the driver supports CUDA " + driver_cuda->str() +
                " (\"CUDA driver version is insufficient for CUDA runtime version\")";
      f.details.push_back("its kernels cover the GPU; the CUDA " + std::to_string(*major) +
                          " runtime it loads refuses a driver of an older major");
      add_driver_detail(x, f);
      std::string text = driver_fix(x, k, Version({*major, 0}), std::to_string(*major));
      if (const auto build = variant_build(x, k, env, p)) {
        f.fixes.push_back(*build);
      } else {
        text += ", or install " + p.distribution + "'s build for CUDA " + std::to_string(driver_major);
      }
      f.fixes.push_back({text, {}});
    }
  }
}

std::optional<int> linked_cudart_major(const PackageKernels& p) {
  for (const BinaryKernels& b : p.binaries) {
    if (b.cudart_major && b.links_torch) return b.cudart_major;
  }
  return std::nullopt;
}

// Turns "runs" verdicts of torch's C++ extensions that link the CUDA runtime
// of another major than torch's into problems (or adds one where no verdict
// says it runs and nothing else already stops it): the loader looks for their
// libcudart.so.N, which torch's wheels of another CUDA major do not bring.
// Libraries that do not link torch (JAX's plugins, CuPy, bitsandbytes' ctypes
// libraries) bring their own runtime (nvidia-cuda-runtime-cuN, found through
// their RUNPATH) or choose one per CUDA version: they are not judged here.
// Where an installed toolkit of that major may put it on the loader's path
// (its installer's ld.so.conf entry), it is a warning beside the verdict.
void check_runtime_major(const Situation& x, const PythonEnv& env, std::vector<Finding>& out) {
  const auto torch_cuda = Version::parse(env.torch && env.torch->cuda ? *env.torch->cuda : "");
  if (!torch_cuda) return;
  for (const PackageKernels& p : env.kernels) {
    const auto major = linked_cudart_major(p);
    if (!major || *major == torch_cuda->major() || p.distribution == "torch" || p.distribution.starts_with("nvidia-") ||
        p.provenance.installer == k_rebuilt_installer) {
      continue;
    }
    const auto toolkit = std::ranges::find_if(
        x.snapshot->toolkits, [&](const Toolkit& t) { return t.version && t.version->major() == *major; });
    const bool system_runtime = toolkit != x.snapshot->toolkits.end();
    std::vector<Finding*> runs = runs_verdicts(out, env, p);
    const bool stopped = std::ranges::any_of(out, [&](const Finding& f) {
      return f.python == env.interpreter && f.package == p.distribution && f.severity == Severity::problem;
    });
    if (stopped && (runs.empty() || system_runtime)) continue;
    const std::string library = "libcudart.so." + std::to_string(*major);
    const std::string links = " links " + library + " (CUDA " + std::to_string(*major) + ") and torch " +
                              env.torch->version + " brings the CUDA " + std::to_string(torch_cuda->major()) +
                              " runtime";
    Finding& f = runs.empty() || system_runtime ? out.emplace_back(package_finding("", Severity::ok, env, p, ""))
                                                : *runs.front();
    f.id = "package.cuda-runtime";
    f.severity = system_runtime ? Severity::warning : Severity::problem;
    f.title = package_label(p) + (system_runtime ? links : " cannot load: it" + links);
    f.details.push_back(
        system_runtime
            ? "it loads only where the CUDA " + std::to_string(*major) + " runtime of " + toolkit->nvcc +
                  "'s toolkit is on the loader's path (ld.so.conf, LD_LIBRARY_PATH), and then two CUDA runtimes "
                  "share one process"
            : "its import fails with \"" + library + ": cannot open shared object file\": no CUDA " +
                  std::to_string(*major) + " toolkit is installed to provide it");
    f.details.push_back("it needs " + p.distribution + "'s build for torch " + env.torch->version + " (CUDA " +
                        torch_cuda->major_minor() + "), or a torch built for CUDA " + std::to_string(*major));
  }
}

const FatbinCompression* missed_compression_floor(const Situation& x, const Knowledge& k, const PackageKernels& p,
                                                  std::optional<int> cuda_major) {
  const std::optional<Version>& driver_cuda = x.driver.cuda;
  if (!driver_cuda || std::ranges::none_of(p.binaries, &BinaryKernels::zstd_fatbins)) return nullptr;
  const int major = cuda_major.value_or(driver_cuda->major());
  const auto row = std::ranges::find(k.fatbin_compression, major, &FatbinCompression::cuda_major);
  return row == k.fatbin_compression.end() || !(*driver_cuda < row->driver_cuda) ? nullptr : &*row;
}

// Turns "runs" verdicts of extensions whose kernels are compressed in the
// fatbin format of nvcc's --compress-mode=size/balance into problems when the
// driver is older than that format needs (recipes/toolkits.toml
// [[fatbin_compression]]): the kernels are there, the driver cannot unpack
// them ("device kernel image is invalid"). A build of unknown CUDA major is
// judged by the driver's major (a newer one fails on the major already).
void check_compressed_fatbins(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  for (const PackageKernels& p : env.kernels) {
    const FatbinCompression* row = missed_compression_floor(x, k, p, p.provenance.cuda_major);
    if (!row) continue;
    const int major = row->cuda_major;
    const Version& driver_cuda = *x.driver.cuda;
    for (Finding* verdict : runs_verdicts(out, env, p)) {
      Finding& f = *verdict;
      f.id = "package.driver";
      f.severity = Severity::problem;
      f.title = package_label(p) + " cannot run: its kernels are compressed in a format that needs a driver for CUDA " +
                row->driver_cuda.str() + " or newer, and the driver supports CUDA " + driver_cuda.str() +
                " (\"device kernel image is invalid\")";
      for (const BinaryKernels& b : p.binaries) {
        if (b.zstd_fatbins)
          f.details.push_back(b.path +
                              ": fatbin entries compressed as nvcc --compress-mode=size "
                              "or balance writes them (flag 0x8000)");
      }
      f.details.push_back("CUDA " + std::to_string(major) + " builds compressed so need CUDA " +
                          row->driver_cuda.str() + "'s driver (" + row->source + ")");
      add_driver_detail(x, f);
      add_uncompressed_move(x, k, env, p, f);
      f.fixes.push_back({driver_fix(x, k, row->driver_cuda, row->driver_cuda.str()) + ", or install a build of " +
                             p.distribution + " made without --compress-mode=size/balance",
                         {}});
    }
  }
}

void torch_cannot_unpack(const Situation& x, const PythonEnv& env, const PackageKernels& torch,
                         const FatbinCompression& row, const Version& cuda, const GpuGroup& group, Finding& f) {
  f.severity = Severity::problem;
  f.reach = Reach::none;
  f.title = "torch " + env.torch->version + " cannot run on " + group.label() +
            ": its kernels are compressed in a format that needs a driver for CUDA " + row.driver_cuda.str() +
            " or newer, and the driver supports CUDA " + x.driver.cuda->str() + " (\"device kernel image is invalid\")";
  // The reason of the fix first: the doctor shows the first details.
  std::vector<std::string> why = {
      "torch for CUDA " + cuda.major_minor() + " itself runs on this driver" +
      (row.torch_wheels.empty() ? std::string(": a build without --compress-mode=size/balance")
                                : ": an official wheel (not compressed so: recipes/toolkits.toml torch_wheels)") +
      " or the driver upgrade fixes this"};
  for (const BinaryKernels& b : torch.binaries) {
    if (b.zstd_fatbins)
      why.push_back(b.path + ": fatbin entries compressed as nvcc --compress-mode=size or balance writes them");
  }
  f.details.insert(f.details.begin(), why.begin(), why.end());
  f.details.push_back("CUDA " + std::to_string(row.cuda_major) + " builds compressed so need CUDA " +
                      row.driver_cuda.str() + "'s driver (" + row.source + ")");
  if (!row.torch_wheels.empty()) f.details.push_back("official torch wheels: " + row.torch_wheels);
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
    Finding f = package_finding("package.cuda-library", Severity::problem, env, p,
                                package_label(p) + " has no " + wanted + " library for torch's CUDA " +
                                    *env.torch->cuda + ": it loads its CPU library instead, without GPU kernels");
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

// Says when a release is known to fail on a GPU here whatever its kernels
// hold (recipes/extensions.toml [[broken_release]]: the project picks kernels
// the GPU cannot run). The verdicts on its kernels for that GPU give way to
// this one, which a what-if `--with PKG==VER` (no binaries) gets too; the
// resolver moves it to a release at or after the fixed one, with torch where
// that release pins another (InstalledPackage::fixed_release).
void check_broken_releases(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  for (const PackageKernels& p : env.kernels) {
    const auto release = Version::parse(p.version);
    if (!release) continue;
    for (const GpuGroup& group : x.gpu_groups) {
      const BrokenRelease* row = k.broken_release(normalise_distribution(p.distribution), *release, group.cc);
      if (!row) continue;
      Finding f = package_finding("package.broken-release", Severity::problem, env, p,
                                  package_label(p) + " fails on " + group.label() + ": " + row->what);
      about_gpus(f, group);
      const auto on_group = [&](const Finding& v) {
        return v.id == "package.arch" && v.python == env.interpreter && v.package == p.distribution && v.gpu == f.gpu;
      };
      // Its kernels' verdict on that GPU is beside the point: keep what it read.
      if (const auto verdict = std::ranges::find_if(out, on_group); verdict != out.end() && !verdict->details.empty()) {
        f.details.push_back(verdict->details.front());
      }
      std::erase_if(out, on_group);
      f.details.push_back(row->distribution + " " + row->min.str() + " to " + row->max.str() + " fail on GPUs of " +
                          row->min_cc.str() + (row->max_cc ? " to " + row->max_cc->str() : " and newer") +
                          "; the first release that runs there is " + row->fixed.str() + " (" + row->source + ")");
      out.push_back(std::move(f));
    }
  }
}

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

}  // namespace torchfix::detail
