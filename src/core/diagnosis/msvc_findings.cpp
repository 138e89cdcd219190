// The warning for an MSVC host compiler outside the range nvcc accepts
// (recipes/toolkits.toml [[host_compiler]] msvc_min/msvc_below, read from
// CUDA's host_config.h), with the fixes Visual Studio users have.

#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/situation/toolchain.hpp"

namespace torchfix::detail {

// The MSVC half of report_compiler_bounds: nvcc's #error names Visual Studio
// versions, and its own escape hatch (host_config.h's text).
Finding msvc_outside_bounds(const Toolchain& tc, const HostCompilerBounds& bounds, const Knowledge& k) {
  const HostCompiler& host = *tc.current;
  const std::string cl = version_or(host.version);
  const std::string range = msvc_range_text(bounds);
  const std::string nvcc = tc.toolkit->version->str();
  const bool too_new = msvc_fit(host, &bounds) == MsvcFit::too_new;
  Finding w = finding("compiler.outside-nvcc-bounds", Severity::warning, Section::compilers,
                      "MSVC " + cl + " (" + host.path + ") is " + (too_new ? "newer" : "older") + " than nvcc " + nvcc +
                          " accepts (MSVC " + range + ")");
  w.details.push_back("extension builds stop with: #error -- unsupported Microsoft Visual Studio version!");
  w.details.push_back("source: " + bounds.source);
  if (tc.compiler && tc.compiler->cxx.family == CompilerFamily::msvc) {
    const HostCompiler& fit = tc.compiler->cxx;
    w.fixes.push_back({"Build with MSVC " + version_or(fit.version) + " (" + fit.path +
                           "), inside the range: start the build from that Visual Studio's x64 Native Tools prompt",
                       {}});
  } else {
    w.fixes.push_back({"Install an MSVC toolset nvcc " + nvcc + " accepts (MSVC " + range +
                           ") with the Visual Studio Installer, and build from its x64 Native Tools prompt",
                       {}});
  }
  for (const HostCompilerBounds& b : k.host_compilers) {
    if (too_new && msvc_fit(host, &b) == MsvcFit::inside) {
      w.fixes.push_back({"Or use CUDA " + b.cuda_min.str() + " or newer, which accepts MSVC " + cl, {}});
      break;
    }
  }
  w.fixes.push_back(
      {"Or pass -allow-unsupported-compiler to nvcc (NVIDIA: an unsupported host compiler may cause "
       "compilation failure or incorrect run time execution)",
       {}});
  return w;
}

}  // namespace torchfix::detail
