// MSVC against nvcc's accepted _MSC_VER range (recipes/toolkits.toml
// [[host_compiler]] msvc_min/msvc_below, from include/crt/host_config.h).

#include <string>

#include "core/situation/toolchain.hpp"

namespace torchfix {

int msc_ver(const Version& version) {
  return version.major() * 100 + version.minor();
}

MsvcFit msvc_fit(const HostCompiler& c, const HostCompilerBounds* bounds) {
  if (c.family != CompilerFamily::msvc || !c.version || !bounds || !bounds->msvc_min || !bounds->msvc_below) {
    return MsvcFit::unknown;
  }
  const int v = msc_ver(*c.version);
  if (v < *bounds->msvc_min) return MsvcFit::too_old;
  if (v >= *bounds->msvc_below) return MsvcFit::too_new;
  return MsvcFit::inside;
}

std::string msvc_range_text(const HostCompilerBounds& bounds) {
  if (!bounds.msvc_min || !bounds.msvc_below) return "";
  const auto dotted = [](int msc) { return std::to_string(msc / 100) + "." + std::to_string(msc % 100); };
  return dotted(*bounds.msvc_min) + " to " + dotted(*bounds.msvc_below - 1);
}

}  // namespace torchfix
