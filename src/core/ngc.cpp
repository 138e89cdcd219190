#include "core/ngc.hpp"

#include "core/situation.hpp"

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

std::optional<Version> floor_of(const Knowledge& knowledge, const Version& cuda) {
  if (const DriverFloor* floor = knowledge.driver_floor(cuda)) return floor->linux;
  return std::nullopt;
}

std::string driver_words(const Knowledge& knowledge, const Version& cuda) {
  if (auto floor = floor_of(knowledge, cuda)) return floor->str() + " (R" + std::to_string(floor->major()) + ")";
  return "a driver that supports CUDA " + cuda.str();
}

// Decides how the host driver runs an image of CUDA `cuda` on `gpu`.
DriverPath driver_path(const Driver& d, const Knowledge& k, const NgcTable& t, bool forward_compat,
                       const Version& cuda) {
  if (!d.cuda_version && !d.version) return DriverPath::unknown;
  if (d.cuda_version && *d.cuda_version >= cuda) return DriverPath::native;
  if (!d.cuda_version && d.version) {
    if (auto floor = floor_of(k, cuda); floor && *d.version >= *floor) return DriverPath::native;
  }
  if (!forward_compat) return DriverPath::too_old;
  if (d.version) {
    const MinorCompat* mc = k.minor_compat_for(cuda.major());
    if (mc && *d.version >= mc->linux && d.cuda_version && d.cuda_version->major() == cuda.major())
      return DriverPath::minor_compat;
    if (const NgcForwardCompat* fc = t.forward_compat_for(cuda.major())) {
      for (const Version& branch : fc->drivers) {
        if (d.version->major() == branch.major() && *d.version >= branch) return DriverPath::forward_compat;
      }
    }
    return DriverPath::too_old;
  }
  // Only the CUDA version is known (what-if --driver 12.4): minor-version
  // compatibility within the major is the one path that can be judged.
  return d.cuda_version->major() == cuda.major() ? DriverPath::minor_compat : DriverPath::too_old;
}

NgcGpuFit judge_gpu(const NgcHost& host, const Knowledge& k, const NgcTable& t, const NgcRelease& release,
                    const NgcArchList* list, const NgcGpu& gpu, std::vector<std::string>& notes) {
  const Driver& d = host.driver;
  NgcGpuFit fit;
  fit.gpu = gpu.index;
  const std::string& label = gpu.label;
  if (!gpu.cc) {
    fit.why = label + ": compute capability unknown; give it with --gpu X.Y";
    return fit;
  }
  const ComputeCapability cc = *gpu.cc;
  if (!list) {
    fit.why = "tag " + release.tag + " has no " + host.platform + " image";
    return fit;
  }
  const auto first_cuda = k.first_nvcc_for(cc);
  const Reach reach = best_reach(list->images, cc);
  const auto late = std::ranges::find_if(t.first_tags, [&](const NgcFirstTag& f) { return f.cc == cc; });
  if (first_cuda && release.cuda < *first_cuda) {
    fit.why = label + ": CUDA " + release.cuda.str() + " of " + release.tag + " predates compute capability " +
              cc.str() + " (first targeted by CUDA " + first_cuda->str() + "): neither torch's kernels (" +
              list->arch_list + ") nor the image's cuBLAS/cuDNN carry code for it";
  } else if (late != t.first_tags.end() && release.tag_version < late->tag) {
    fit.why = label + ": the first tag that runs compute capability " + cc.str() + " is " + late->tag.str() + " (" +
              late->source + ")";
  } else if (reach == Reach::none) {
    fit.why =
        label + ": torch in " + release.tag + " is built for " + list->arch_list + ", nothing runs on " + cc.str();
  } else {
    fit.covered = true;
  }
  fit.driver = driver_path(d, k, t, gpu.forward_compat, release.cuda);
  // The driver must also know the GPU's generation (Blackwell: R570+), which
  // no compatibility package can add.
  if (first_cuda) {
    const auto gen_floor = floor_of(k, *first_cuda);
    const bool old = (d.version && gen_floor && *d.version < *gen_floor) ||
                     (!d.version && d.cuda_version && *d.cuda_version < *first_cuda);
    if (old) fit.driver = DriverPath::too_old;
  }
  if (fit.covered && reach == Reach::ptx_jit) {
    if (fit.driver == DriverPath::native) {
      notes.push_back(label + ": torch in " + release.tag + " reaches it only through PTX JIT (slow first start)");
    } else {
      fit.covered = false;
      fit.why = label + ": torch in " + release.tag + " has only PTX for it, which compatibility mode cannot JIT";
    }
  }
  if (!fit.covered) return fit;
  const std::string cuda = "CUDA " + release.cuda.str();
  switch (fit.driver) {
    case DriverPath::native:
      fit.why =
          label + ": torch has " + (reach == Reach::native ? "SASS" : "PTX") + " for it; the driver supports " + cuda;
      break;
    case DriverPath::forward_compat:
      fit.why = label + ": runs " + cuda + " on driver " + d.version->str() +
                " through forward compatibility (data-centre GPU or Jetson)";
      break;
    case DriverPath::minor_compat:
      fit.why = label + ": runs " + cuda + " on driver " + (d.version ? d.version->str() : "") +
                " through minor-version compatibility (data-centre GPU or Jetson)";
      break;
    case DriverPath::too_old: {
      // The image's own floor, raised to the GPU generation's; unknown when
      // recipes/toolkits.toml does not track the image's CUDA yet.
      if (auto needed = floor_of(k, release.cuda)) {
        if (first_cuda) {
          if (auto gen = floor_of(k, *first_cuda); gen && *gen > *needed) needed = gen;
        }
        fit.driver_needed = needed;
      }
      fit.why = label + ": " + cuda + " needs driver " + driver_words(k, release.cuda) + ", this one is " +
                (d.version ? d.version->str() : "for CUDA " + d.cuda_version->str()) +
                (gpu.forward_compat ? "" : "; forward compatibility is for data-centre GPUs and Jetson only");
      break;
    }
    case DriverPath::unknown:
      fit.why =
          label + ": torch has kernels for it; the driver is unknown (needs " + driver_words(k, release.cuda) + ")";
      break;
  }
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

std::string ngc_platform(const Snapshot& snapshot) {
  const bool orin = std::ranges::any_of(snapshot.gpus, [](const Gpu& g) {
    return g.cc && *g.cc == ComputeCapability{8, 7};
  });
  return ngc_platform(wheel_platform(platform_kind(snapshot.platform, snapshot.gpus)) == "aarch64", orin);
}

std::string ngc_platform(bool aarch64, bool orin) {
  if (!aarch64) return "x86_64";
  return orin ? "igpu" : "arm64-sbsa";
}

NgcHost ngc_host(const Snapshot& snapshot, std::string_view platform) {
  NgcHost host;
  for (const Gpu& g : snapshot.gpus) host.gpus.push_back({g.index, gpu_words(g), g.cc, forward_compat_allowed(g)});
  host.driver = snapshot.driver;
  host.platform = platform.empty() ? ngc_platform(snapshot) : std::string(platform);
  return host;
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

std::string ngc_run_line(const std::string& image, bool jetson) {
  return std::string("docker run ") + (jetson ? "--runtime nvidia" : "--gpus all") +
         " --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 -it --rm " + image;
}

NgcVerdict judge_ngc_image(const Snapshot& s, const Knowledge& k, const NgcTable& t, const NgcRelease& release,
                           std::string_view platform) {
  return judge_ngc_image(ngc_host(s, platform), k, t, release);
}

NgcVerdict judge_ngc_image(const NgcHost& host, const Knowledge& k, const NgcTable& t, const NgcRelease& release) {
  NgcVerdict v;
  v.release = &release;
  v.platform = host.platform;
  v.image = "nvcr.io/nvidia/pytorch:" + release.tag + "-py3" + (v.platform == "igpu" ? "-igpu" : "");
  const bool jetson = std::ranges::any_of(host.gpus, [](const NgcGpu& g) { return g.cc && is_tegra(*g.cc); });
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
    v.gpus.push_back(std::move(fit));
  }
  if (!v.driver_needed) {
    if (auto floor = floor_of(k, release.cuda)) v.driver_needed = *floor;
  }
  v.runs = all;
  return v;
}

NgcAdvice choose_ngc_image(const Snapshot& s, const Knowledge& k, const NgcTable& t) {
  return choose_ngc_image(ngc_host(s), k, t);
}

NgcAdvice choose_ngc_image(const NgcHost& host, const Knowledge& k, const NgcTable& t) {
  NgcAdvice advice;
  if (host.gpus.empty()) {
    advice.reasons.push_back("no GPU to run a container on");
    return advice;
  }
  const std::string& platform = host.platform;
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
