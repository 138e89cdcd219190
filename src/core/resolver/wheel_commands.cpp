// How a wheel remedy is installed: the requirement (a pinned release, or
// NVIDIA's JetPack file by URL) and the pip and uv lines that install it.

#include "core/base/quote.hpp"
#include "core/resolver/resolver.hpp"

namespace torchfix {

std::string wheel_requirement(const WheelChange& w) {
  if (!w.wheel->url.empty()) return "torch @ " + w.wheel->url;
  // The nightly index keeps recent builds only: an installed dev build may be gone.
  if (w.nightly) return "torch";
  return w.same_release || w.exact ? "torch==" + w.release.str() : "torch==" + w.release.major_minor() + ".*";
}

std::string wheel_index_url(const WheelChange& w) {
  if (!w.wheel->url.empty()) return "";
  return w.nightly ? "https://download.pytorch.org/whl/nightly/" + w.wheel->variant : w.wheel->index_url();
}

std::vector<std::string> wheel_commands(const WheelChange& w, const std::string& interpreter,
                                        const std::vector<std::string>& companions, CommandShell shell) {
  std::vector<std::string> tail = {wheel_requirement(w)};
  // A JetPack wheel is one file: torchvision and torchaudio are not beside it.
  if (w.wheel->url.empty()) {
    for (const std::string& companion : companions) tail.push_back(companion);
    tail.insert(tail.end(), {"--index-url", wheel_index_url(w)});
  }
  std::vector<std::string> pip = {interpreter, "-m", "pip", "install", "--force-reinstall"};
  std::vector<std::string> uv = {"uv", "pip", "install", "--python", interpreter, "--reinstall"};
  if (w.nightly) {
    pip.push_back("--pre");
    uv.insert(uv.end(), {"--prerelease", "allow"});
  }
  pip.insert(pip.end(), tail.begin(), tail.end());
  uv.insert(uv.end(), tail.begin(), tail.end());
  return {command_line(shell, pip), command_line(shell, uv)};
}

}  // namespace torchfix
