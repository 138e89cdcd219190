#include "core/wheel_choice.hpp"

#include "core/quote.hpp"

#include <algorithm>
#include <tuple>

namespace torchfix {
namespace {

// One quoting rule for every printed command (core/quote.hpp).
std::string shell_word(const std::string& word) {
  return quote_posix(word);
}

// How well a wheel reaches all GPUs: nullopt if some GPU cannot run it.
std::optional<Reach> reach_all(const WheelVariant& wheel, const std::vector<ComputeCapability>& gpus) {
  Reach worst = Reach::native;
  for (ComputeCapability gpu : gpus) {
    const Reach reach = best_reach(wheel.images, gpu);
    if (reach == Reach::none) return std::nullopt;
    if (reach == Reach::ptx_jit) worst = Reach::ptx_jit;
  }
  return worst;
}

}  // namespace

bool driver_fits(const Knowledge& knowledge, const Version& wheel_cuda, const std::optional<Version>& driver_cuda,
                 const std::optional<Version>& driver_version, bool* minor_compat) {
  if (minor_compat) *minor_compat = false;
  if (!driver_cuda) return true;
  if (*driver_cuda >= wheel_cuda) return true;
  if (driver_cuda->major() != wheel_cuda.major()) return false;
  // Same major, older minor: minor-version compatibility
  // (https://docs.nvidia.com/deploy/cuda-compatibility/) when the driver is at
  // or above that major's floor. A driver reporting CUDA X.y is at or above
  // X's floor by construction unless its version says otherwise.
  if (const MinorCompat* floor = knowledge.minor_compat_for(wheel_cuda.major());
      floor && driver_version && *driver_version < floor->linux) {
    return false;
  }
  if (minor_compat) *minor_compat = true;
  return true;
}

std::optional<WheelChoice> choose_wheel(const Knowledge& knowledge, const WheelNeeds& needs) {
  std::optional<WheelChoice> best;
  // Higher tuple wins: same release, native over JIT, full driver support over
  // minor-version compatibility, newer release, newer CUDA.
  // With the driver unknown, the lowest CUDA wins over the newest release: it
  // runs on the most drivers.
  const bool driver_known = needs.driver_cuda.has_value() && !needs.ignore_driver;
  auto rank = [&](const WheelChoice& c) {
    const int cuda = c.wheel->cuda.major() * 10 + c.wheel->cuda.minor();
    const int release = c.wheel->max.major() * 100 + c.wheel->max.minor();
    return driver_known ? std::tuple(c.same_release, !c.needs_ptx_jit, !c.minor_compat, release, cuda)
                        : std::tuple(c.same_release, !c.needs_ptx_jit, !c.minor_compat, -cuda, release);
  };
  for (const WheelVariant& wheel : knowledge.wheels) {
    if (wheel.platform != needs.platform) continue;
    auto reach = reach_all(wheel, needs.gpus);
    if (!reach) continue;
    bool minor_compat = false;
    if (!needs.ignore_driver &&
        !driver_fits(knowledge, wheel.cuda, needs.driver_cuda, needs.driver_version, &minor_compat)) {
      continue;
    }
    // PTX JIT needs a driver that understands the wheel's PTX: no minor-version
    // compatibility for JIT (shared/facts/arch-rules.md).
    if (*reach == Reach::ptx_jit && minor_compat) continue;
    WheelChoice choice;
    choice.wheel = &wheel;
    choice.same_release = needs.current_release && wheel.covers_release(*needs.current_release);
    choice.release = choice.same_release ? *needs.current_release : wheel.max;
    choice.needs_ptx_jit = *reach == Reach::ptx_jit;
    choice.minor_compat = minor_compat;
    if (!best || rank(choice) > rank(*best)) best = choice;
  }
  return best;
}

std::vector<std::string> install_commands(const WheelChoice& choice, const std::vector<std::string>& companions,
                                          const std::string& python) {
  // Pin the release: the same one exactly (its local label differs, so pip
  // needs --force-reinstall), or the newest release the table knows covers
  // the GPU, as X.Y.* (an index may hold newer releases with other arch lists).
  const std::string pin =
      choice.same_release ? "torch==" + choice.release.str() : "torch==" + choice.release.major_minor() + ".*";
  std::string packages = shell_word(pin);
  for (const std::string& companion : companions) packages += " " + companion;
  const std::string index = " --index-url " + choice.wheel->index_url();
  const std::string py = python.empty() ? "python3" : shell_word(python);
  return {
      py + " -m pip install --force-reinstall " + packages + index,
      "uv pip install --python " + py + " --reinstall " + packages + index,
  };
}

}  // namespace torchfix
