// The resolver's NGC container candidate: torch in NVIDIA's PyTorch image
// instead of a wheel. The image is judged by the rules of core/situation/ngc.hpp (its
// torch arch list, the host driver against the image's CUDA with forward
// compatibility only on data-centre GPUs and Jetson, the first tag of late
// parts) and by the same per-generation driver check as every wheel. Also
// the install line of a driver, the other change outside the environment.

#include <algorithm>

#include "core/resolver/resolver_internal.hpp"
#include "core/situation/ngc.hpp"

namespace torchfix::detail {
namespace {

// The judge's view of one machine of the constraints: GPUs by capability
// (deduplicated, so labelled by capability), one driver, the image platform.
NgcHost host_of(const Constraints& c, const DriverState& driver) {
  NgcHost host;
  host.platform = ngc_platform(c.platform, c.l4t, c.gpus, &host.no_platform_reason);
  host.driver = driver;
  host.numbering = driver_numbering(c.platform);
  for (std::size_t i = 0; i < c.gpus.size(); ++i) {
    host.gpus.push_back({static_cast<int>(i), "the " + c.gpus[i].str() + " GPU", c.gpus[i], c.forward_compat});
  }
  return host;
}

// Why no image runs on `advice`'s host: the oldest image that covers every
// GPU and the driver it needs, or why none covers them.
std::vector<std::string> no_image_reasons(const NgcAdvice& advice, const Constraints& c) {
  if (!advice.oldest) return advice.reasons;
  const NgcVerdict& v = *advice.oldest;
  const DriverNumbering numbering = driver_numbering(c.platform);
  const std::string needs = numbering == DriverNumbering::tegra
                                ? ngc_needs_text(v.driver_needed, v.jetpack_needed, numbering, v.release->cuda)
                                : "driver " + ngc_driver_text(v.driver_needed);
  std::vector<std::string> out = {
      "no NGC PyTorch image runs with this driver: " + v.image + " is the oldest that covers every GPU and needs " +
      needs + (c.forward_compat ? "" : " (GeForce and workstation cards get no forward compatibility)")};
  for (const NgcGpuFit& fit : v.gpus) {
    if (fit.driver == DriverPath::too_old) out.push_back(fit.why);
  }
  return out;
}

}  // namespace

void container_candidates(const Constraints& c, const Knowledge& k, std::vector<Scored>& out) {
  // NGC images are Linux images: Docker on Linux or on WSL2, not native Windows.
  if (c.gpus.empty() || k.ngc.releases.empty() || c.platform == PlatformKind::windows) return;
  std::vector<NgcHost> hosts;
  for (const DriverState& d : c.drivers) hosts.push_back(host_of(c, d));
  if (hosts.empty()) hosts.push_back(host_of(c, {}));  // driver unknown: judged on the GPUs alone
  // The newest image each driver runs; the oldest of those is the candidate
  // (newest first is what choose_ngc_image picks) and must run on every driver.
  Scored s;
  s.remedy.kind = CandidateKind::container;
  s.label = "an NGC PyTorch container";
  // Another torch build, with the extension as it was built: no fix of an ABI mismatch.
  s.reasons = same_abi_reasons(c);
  std::optional<NgcVerdict> pick;
  for (const NgcHost& host : hosts) {
    NgcAdvice advice = choose_ngc_image(host, k, k.ngc);
    if (!advice.image) {
      s.reasons = no_image_reasons(advice, c);
      out.push_back(std::move(s));
      return;
    }
    if (!pick || advice.image->release->tag_version < pick->release->tag_version) pick = std::move(advice.image);
  }
  ContainerChange change;
  change.release = pick->release;
  change.arch_list = k.ngc.arch_list(*pick->release, pick->platform);
  change.image = pick->image;
  change.run_line = pick->run_line;
  change.driver_needed = pick->driver_needed;
  change.jetpack_needed = pick->jetpack_needed;
  change.notes = pick->notes;
  for (const NgcHost& host : hosts) {
    const NgcVerdict v = judge_ngc_image(host, k, k.ngc, *pick->release);
    for (const NgcGpuFit& fit : v.gpus) {
      if (!fit.covered || fit.driver == DriverPath::too_old) s.reasons.push_back(fit.why);
      if (fit.driver == DriverPath::forward_compat || fit.driver == DriverPath::minor_compat) change.compat = true;
    }
  }
  s.remedy.reach = Reach::native;
  for (ComputeCapability gpu : c.gpus) {
    if (change.arch_list && best_reach(change.arch_list->images, gpu) == Reach::ptx_jit)
      s.remedy.reach = Reach::ptx_jit;
  }
  s.remedy.minor_compat = change.compat;
  s.remedy.container = std::move(change);
  // The host driver must drive every GPU's generation, as for any wheel.
  add_gpu_driver_reasons(s, c, k);
  s.label.clear();
  out.push_back(std::move(s));
}

// The install line of a Linux driver: the distribution's row of
// recipes/drivers.toml [[driver_package]] (its source there), else the download page.
std::vector<std::string> driver_commands(const DriverChange& d, const Constraints& c, const Knowledge& k) {
  const std::string floor =
      d.minimum.str() + (d.downgrade ? " of the " + d.branch + " branch" : " (" + d.branch + " or newer)");
  if (c.platform == PlatformKind::windows) {
    return {"# install NVIDIA driver >= " + floor + " from https://www.nvidia.com/Download/index.aspx, then restart"};
  }
  if (d.windows) {
    return {"# on Windows (not inside WSL): install NVIDIA driver >= " + floor +
                " from https://www.nvidia.com/Download/index.aspx",
            "wsl --shutdown   # in Windows, after the install, so WSL picks up the new driver"};
  }
  if (d.host) return {"# on the host (a container uses the host's driver): install NVIDIA driver >= " + floor};
  const std::string branch = d.branch.substr(1);
  for (const DriverPackage& p : k.driver_packages) {
    if (std::ranges::none_of(p.os, [&](const std::string& word) { return c.os.find(word) != std::string::npos; }))
      continue;
    std::string line = p.command;
    for (auto at = line.find("{branch}"); at != std::string::npos; at = line.find("{branch}", at + branch.size()))
      line.replace(at, 8, branch);
    return {line};
  }
  return {"# install NVIDIA driver >= " + floor + " from https://www.nvidia.com/Download/index.aspx"};
}

}  // namespace torchfix::detail
