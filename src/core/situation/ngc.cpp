#include "core/situation/ngc.hpp"

#include "core/situation/situation.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace torchfix {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string gpu_words(const Gpu& gpu) {
  std::string label = "GPU " + std::to_string(gpu.index);
  if (!gpu.name.empty())
    label += " (" + gpu.name + (gpu.cc ? ", " + gpu.cc->str() : "") + ")";
  else if (gpu.cc)
    label += " (" + gpu.cc->str() + ")";
  return label;
}

// The driver floor of `cuda` in the host's numbering. Tegra has none: its
// driver comes with L4T, and desktop floors do not number it.
std::optional<Version> floor_of(const Knowledge& k, const Version& cuda, DriverNumbering n) {
  const DriverFloor* floor = n == DriverNumbering::tegra ? nullptr : k.driver_floor(cuda);
  if (!floor) return std::nullopt;
  return n == DriverNumbering::windows ? floor->windows : std::optional<Version>(floor->linux);
}

// Decides how the host driver runs an image of CUDA `cuda`: the Situation's
// one decision (cuda_on_driver: native, or minor-version compatibility on
// every GPU, GeForce included, and on Jetson within L4T's CUDA major), then
// forward compatibility where it is allowed (data-centre GPUs; the release
// notes list its branches in Linux numbers).
DriverPath driver_path(const NgcHost& host, const Knowledge& k, const NgcTable& t, bool forward_compat,
                       const Version& cuda) {
  const DriverState& d = host.driver;
  switch (cuda_on_driver(k, d, host.numbering, cuda)) {
    case CudaOnDriver::native:
      return DriverPath::native;
    case CudaOnDriver::minor_compat:
      return DriverPath::minor_compat;
    case CudaOnDriver::unknown:
      return DriverPath::unknown;
    case CudaOnDriver::too_old:
      break;
  }
  if (!forward_compat || !d.version || host.numbering != DriverNumbering::linux) return DriverPath::too_old;
  const NgcForwardCompat* fc = t.forward_compat_for(cuda.major());
  for (const Version& branch : fc ? fc->drivers : std::vector<Version>{}) {
    if (d.version->major() == branch.major() && *d.version >= branch) return DriverPath::forward_compat;
  }
  return DriverPath::too_old;
}

// True when the host driver cannot know the GPU's generation (its first CUDA
// `first_cuda`), which no compatibility package can add (Blackwell: R570+).
bool generation_too_new(const NgcHost& host, const Knowledge& k, const Version& first_cuda) {
  const DriverState& d = host.driver;
  const auto floor = floor_of(k, first_cuda, host.numbering);
  if (d.version && floor) return !d.meets(*floor);
  return d.cuda && *d.cuda < first_cuda;
}

// Says why torch in `release` does not serve `gpu` ("" when it does), and how it reaches it.
std::string kernel_gap(const Knowledge& k, const NgcTable& t, const NgcRelease& release, const NgcArchList& list,
                       const std::string& label, ComputeCapability cc, Reach& reach) {
  const auto first_cuda = k.first_nvcc_for(cc);
  reach = best_reach(list.images, cc);
  const auto late = std::ranges::find_if(t.first_tags, [&](const NgcFirstTag& f) { return f.cc == cc; });
  if (first_cuda && release.cuda < *first_cuda) {
    return label + ": CUDA " + release.cuda.str() + " of " + release.tag + " predates compute capability " + cc.str() +
           " (first targeted by CUDA " + first_cuda->str() + "): neither torch's kernels (" + list.arch_list +
           ") nor the image's cuBLAS/cuDNN carry code for it";
  }
  if (late != t.first_tags.end() && release.tag_version < late->tag) {
    return label + ": the first tag that runs compute capability " + cc.str() + " is " + late->tag.str() + " (" +
           late->source + ")";
  }
  if (reach == Reach::none) {
    return label + ": " + release.kernels + " in " + release.tag + " is built for " + list.arch_list +
           ", nothing runs on " + cc.str();
  }
  return "";
}

// What a too-old host needs for `release` on a GPU first targeted by `first_cuda`:
// a driver in the host's numbering, or on Tegra an L4T release.
void set_needed(NgcGpuFit& fit, const NgcHost& host, const Knowledge& k, const NgcRelease& release,
                const std::optional<Version>& first_cuda) {
  if (host.numbering == DriverNumbering::tegra) {
    Version cuda = release.cuda;
    if (first_cuda && *first_cuda > cuda) cuda = *first_cuda;
    fit.jetpack_needed = oldest_l4t_for(k, cuda);
    return;
  }
  // The image's own floor, raised to the GPU generation's; unknown when
  // recipes/toolkits.toml does not track the image's CUDA yet.
  if (auto needed = floor_of(k, release.cuda, host.numbering)) {
    if (first_cuda) {
      if (auto gen = floor_of(k, *first_cuda, host.numbering); gen && *gen > *needed) needed = gen;
    }
    fit.driver_needed = needed;
  }
}

// Says in one line how the host driver serves (or fails) a covered GPU.
std::string driver_why(const NgcGpuFit& fit, const NgcHost& host, const Knowledge& k, const NgcRelease& release,
                       const NgcGpu& gpu, Reach reach) {
  const DriverState& d = host.driver;
  const std::string cuda = "CUDA " + release.cuda.str();
  const std::string needs = ngc_needs_text(floor_of(k, release.cuda, host.numbering), oldest_l4t_for(k, release.cuda),
                                           host.numbering, release.cuda);
  const std::string via = " (data-centre GPU or Jetson)";
  switch (fit.driver) {
    case DriverPath::native:
      return gpu.label + ": torch has " + (reach == Reach::native ? "SASS" : "PTX") + " for it; the driver supports " +
             cuda;
    case DriverPath::forward_compat:
      return gpu.label + ": runs " + cuda + " on " + d.text() + " through forward compatibility" + via;
    case DriverPath::minor_compat:
      return gpu.label + ": runs " + cuda + " on " + d.text() +
             " through minor-version compatibility (any GPU: no JIT of PTX newer than the driver)";
    case DriverPath::too_old:
      return gpu.label + ": " + cuda + " needs " + needs + ", this is " + d.text() +
             (d.cuda ? " (CUDA " + d.cuda->major_minor() + ")" : "") +
             (gpu.forward_compat ? "" : "; forward compatibility is for data-centre GPUs and Jetson only");
    case DriverPath::unknown:
      return gpu.label + ": torch has kernels for it; the driver is unknown (needs " + needs + ")";
  }
  return "";
}

NgcGpuFit judge_gpu(const NgcHost& host, const Knowledge& k, const NgcTable& t, const NgcRelease& release,
                    const NgcArchList* list, const NgcGpu& gpu, std::vector<std::string>& notes) {
  NgcGpuFit fit;
  fit.gpu = gpu.index;
  const std::string& label = gpu.label;
  if (!gpu.cc) {
    fit.why = label + ": compute capability unknown; give it with --gpu X.Y";
    return fit;
  }
  if (!list) {
    fit.why =
        host.platform.empty() ? host.no_platform_reason : "tag " + release.tag + " has no " + host.platform + " image";
    return fit;
  }
  const auto first_cuda = k.first_nvcc_for(*gpu.cc);
  Reach reach = Reach::none;
  fit.why = kernel_gap(k, t, release, *list, label, *gpu.cc, reach);
  fit.covered = fit.why.empty();
  fit.driver = driver_path(host, k, t, gpu.forward_compat, release.cuda);
  if (first_cuda && generation_too_new(host, k, *first_cuda)) fit.driver = DriverPath::too_old;
  if (fit.covered && reach == Reach::ptx_jit) {
    if (fit.driver == DriverPath::native) {
      notes.push_back(label + ": " + release.kernels + " in " + release.tag +
                      " reaches it only through PTX JIT (slow first start)");
    } else {
      fit.covered = false;
      fit.why = label + ": " + release.kernels + " in " + release.tag +
                " has only PTX for it, which compatibility mode cannot JIT";
    }
  }
  if (!fit.covered) return fit;
  if (fit.driver == DriverPath::too_old) set_needed(fit, host, k, release, first_cuda);
  fit.why = driver_why(fit, host, k, release, gpu, reach);
  return fit;
}

}  // namespace

std::string_view to_string(DriverPath path) {
  switch (path) {
    case DriverPath::native:
      return "native";
    case DriverPath::forward_compat:
      return "forward-compat";
    case DriverPath::minor_compat:
      return "minor-compat";
    case DriverPath::too_old:
      return "too-old";
    case DriverPath::unknown:
      return "unknown";
  }
  return "unknown";
}

Expected<NgcImageRef> parse_ngc_image(std::string_view text) {
  static const std::regex k_form(R"(^(?:(?:nvcr\.io/)?nvidia/)?(?:pytorch:)?(\d\d\.\d\d)(-py3(-igpu)?)?$)");
  std::cmatch m;
  const std::string value(text);
  if (!std::regex_match(value.c_str(), m, k_form)) {
    return fail("--container '" + value +
                "' is not an NGC PyTorch image; give it as nvcr.io/nvidia/pytorch:YY.MM-py3 (or YY.MM-py3-igpu)");
  }
  return NgcImageRef{m[1].str(), m[3].matched ? "igpu" : ""};
}

std::string ngc_platform(PlatformKind platform, const std::optional<Version>& l4t,
                         const std::vector<ComputeCapability>& gpus, std::string* why) {
  auto none = [&](std::string text) {
    if (why) *why = std::move(text);
    return std::string();
  };
  switch (platform) {
    case PlatformKind::windows:
      return none("NGC PyTorch images are Linux images: run them under Docker on Linux or WSL2, not native Windows");
    case PlatformKind::linux_aarch64:
      return "arm64-sbsa";
    case PlatformKind::linux_x86_64:
    case PlatformKind::wsl2:
      return "x86_64";
    case PlatformKind::tegra:
      break;
  }
  if (l4t && l4t->major() >= 38) return "arm64-sbsa";
  if (l4t && l4t->major() >= 36) return "igpu";
  if (l4t) {
    return none("Jetson Linux R" + l4t->str() +
                " (JetPack 5 or older) has no NGC PyTorch image: the -py3-igpu images are for JetPack 6 (R36), "
                "the arm64 ones for JetPack 7 (R38) and later; JetPack 4/5 use NVIDIA's l4t-pytorch images "
                "(shared/facts/ngc-containers.md 1d)");
  }
  const bool thor =
      std::ranges::any_of(gpus, [](ComputeCapability cc) { return cc.number() == 110 || cc.number() == 101; });
  return thor ? "arm64-sbsa" : "igpu";
}

NgcHost ngc_host(const Situation& x, std::string_view platform) {
  NgcHost host;
  for (const Gpu& g : x.snapshot->gpus) host.gpus.push_back({g.index, gpu_words(g), g.cc, forward_compat_allowed(g)});
  host.driver = x.driver;
  host.numbering = x.numbering;
  host.platform = platform.empty() ? ngc_platform(x.platform, x.l4t_release, x.gpus, &host.no_platform_reason)
                                   : std::string(platform);
  return host;
}

const L4tRelease* oldest_l4t_for(const Knowledge& k, const Version& cuda) {
  const L4tRelease* best = nullptr;
  for (const L4tRelease& row : k.l4t) {
    if (row.cuda.major() == cuda.major() && (!best || row.release < best->release)) best = &row;
  }
  return best;
}

bool forward_compat_allowed(const Gpu& gpu) {
  if (gpu.cc && is_tegra(*gpu.cc)) return true;
  const std::string name = lower(gpu.name);
  if (name.empty()) return false;
  // "NGC Server Ready" RTX SKUs are the server editions.
  if (name.find("server edition") != std::string::npos) return true;
  static const std::regex k_desk(R"((geforce|titan|quadro|rtx \d{4}|rtx a\d{4}|rtx pro))");
  return !std::regex_search(name, k_desk);
}

std::string ngc_driver_text(const std::optional<Version>& driver) {
  return driver ? driver->str() + " (R" + std::to_string(driver->major()) + ") or newer"
                : std::string("a newer driver");
}

std::string ngc_needs_text(const std::optional<Version>& driver, const L4tRelease* jetpack, DriverNumbering numbering,
                           const Version& image_cuda) {
  if (numbering == DriverNumbering::tegra) {
    // The oldest tracked release of any Jetson module: which one a module
    // gets (Thor, Orin) the table does not say.
    const std::string ships = "a JetPack that ships CUDA " + std::to_string(image_cuda.major()) + ".x";
    if (!jetpack) return ships;
    return ships + " (the oldest tracked: JetPack " + jetpack->jetpack.str() + ", Jetson Linux R" +
           jetpack->release.str() + ")";
  }
  if (!driver) return "a driver that supports CUDA " + image_cuda.str();
  return "driver " + ngc_driver_text(driver);
}

std::string ngc_run_line(const std::string& image, bool jetson) {
  return std::string("docker run ") + (jetson ? "--runtime nvidia" : "--gpus all") +
         " --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 -it --rm " + image;
}

NgcVerdict judge_ngc_image(const Situation& x, const Knowledge& k, const NgcTable& t, const NgcRelease& release,
                           std::string_view platform) {
  return judge_ngc_image(ngc_host(x, platform), k, t, release);
}

NgcVerdict judge_ngc_image(const NgcHost& host, const Knowledge& k, const NgcTable& t, const NgcRelease& release) {
  NgcVerdict v;
  v.release = &release;
  v.platform = host.platform;
  v.image = "nvcr.io/nvidia/pytorch:" + release.tag + "-py3" + (v.platform == "igpu" ? "-igpu" : "");
  const bool jetson = host.numbering == DriverNumbering::tegra ||
                      std::ranges::any_of(host.gpus, [](const NgcGpu& g) { return g.cc && is_tegra(*g.cc); });
  v.run_line = ngc_run_line(v.image, jetson);
  const bool published = std::ranges::find(release.platforms, v.platform) != release.platforms.end();
  const NgcArchList* list = published ? t.arch_list(release, v.platform) : nullptr;
  if (release.doubtful) v.notes.push_back("table row " + release.tag + " is doubtful: " + release.doubt);
  if (list && list->doubtful) v.notes.push_back("arch list of " + release.tag + " is doubtful: " + list->doubt);
  bool all = !host.gpus.empty();
  for (const NgcGpu& gpu : host.gpus) {
    NgcGpuFit fit = judge_gpu(host, k, t, release, list, gpu, v.notes);
    if (!fit.covered || fit.driver == DriverPath::too_old) all = false;
    if (fit.driver_needed && (!v.driver_needed || *fit.driver_needed > *v.driver_needed))
      v.driver_needed = fit.driver_needed;
    if (fit.jetpack_needed && (!v.jetpack_needed || fit.jetpack_needed->release > v.jetpack_needed->release))
      v.jetpack_needed = fit.jetpack_needed;
    v.gpus.push_back(std::move(fit));
  }
  if (!v.driver_needed) v.driver_needed = floor_of(k, release.cuda, host.numbering);
  if (!v.jetpack_needed && host.numbering == DriverNumbering::tegra) v.jetpack_needed = oldest_l4t_for(k, release.cuda);
  v.runs = all;
  return v;
}

NgcAdvice choose_ngc_image(const Situation& x, const Knowledge& k, const NgcTable& t) {
  return choose_ngc_image(ngc_host(x), k, t);
}

NgcAdvice choose_ngc_image(const NgcHost& host, const Knowledge& k, const NgcTable& t) {
  NgcAdvice advice;
  if (host.gpus.empty()) {
    advice.reasons.push_back("no GPU to run a container on");
    return advice;
  }
  const std::string& platform = host.platform;
  if (platform.empty()) {
    advice.reasons.push_back(host.no_platform_reason);
    return advice;
  }
  for (auto it = t.releases.rbegin(); it != t.releases.rend(); ++it) {
    if (std::ranges::find(it->platforms, platform) == it->platforms.end()) continue;
    NgcVerdict v = judge_ngc_image(host, k, t, *it);
    const bool covered = std::ranges::all_of(v.gpus, [](const NgcGpuFit& f) { return f.covered; });
    if (covered && !advice.with_driver) advice.with_driver = v;
    if (covered) advice.oldest = v;
    if (v.runs) {
      advice.image = std::move(v);
      break;
    }
  }
  if (advice.image && advice.with_driver && advice.with_driver->release == advice.image->release)
    advice.with_driver.reset();
  if (advice.image) advice.oldest.reset();
  if (!advice.image && !advice.with_driver) {
    advice.reasons.push_back("no " + platform + " image in recipes/ngc-pytorch.toml has torch kernels for every GPU");
  }
  return advice;
}

}  // namespace torchfix
