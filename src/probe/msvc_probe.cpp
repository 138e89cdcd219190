#include "probe/msvc_probe.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/base/text.hpp"
#include "util/file.hpp"

namespace torchfix {
namespace fs = std::filesystem;

Expected<std::vector<VsInstall>> parse_vswhere(std::string_view json) {
  const nlohmann::json list = nlohmann::json::parse(json, nullptr, false);
  if (list.is_discarded()) return fail("vswhere printed no JSON");
  if (!list.is_array()) return fail("vswhere's JSON is not a list of installs");
  std::vector<VsInstall> installs;
  for (const nlohmann::json& install : list) {
    if (!install.is_object() || !install.contains("installationPath") || !install["installationPath"].is_string())
      continue;
    const auto name = install.find("displayName");
    installs.push_back({install["installationPath"].get<std::string>(),
                        name != install.end() && name->is_string() ? name->get<std::string>() : std::string()});
  }
  return installs;
}

std::optional<Version> msvc_version_of_toolset(std::string_view toolset) {
  const auto version = Version::parse(toolset);
  if (!version || version->major() != 14 || version->minor() < 10) return std::nullopt;
  std::vector<int> parts = {19, version->minor()};
  if (version->parts().size() > 2) parts.push_back(version->parts()[2]);
  return Version(parts);
}

namespace {

// One install's default x64 cl.exe, or why there is none.
Expected<HostCompiler> msvc_of_install(const VsInstall& install) {
  const fs::path build = fs::path(install.path) / "VC" / "Auxiliary" / "Build";
  auto text = util::read_file_bytes(build / "Microsoft.VCToolsVersion.default.txt", {4096, util::Pipes::refuse});
  if (!text) return fail(text.error().message);
  const std::string toolset = trim(*text);
  const auto version = msvc_version_of_toolset(toolset);
  if (!version) return fail("Microsoft.VCToolsVersion.default.txt holds '" + toolset + "', not an MSVC toolset");
  const fs::path cl = fs::path(install.path) / "VC" / "Tools" / "MSVC" / toolset / "bin" / "Hostx64" / "x64" / "cl.exe";
  std::error_code ec;
  if (!fs::is_regular_file(cl, ec)) return fail("no " + cl.string() + " (the x64 C++ build tools are not installed)");
  return HostCompiler{cl.string(), "vswhere", CompilerFamily::msvc, version};
}

}  // namespace

std::vector<HostCompiler> probe_msvc(const Environment& env, ProcessRunner& runner, std::chrono::milliseconds timeout,
                                     std::vector<ProbeNote>& notes) {
  // github.com/microsoft/vswhere README: included with the installer from
  // Visual Studio 2017 15.2, at %ProgramFiles(x86)%\Microsoft Visual
  // Studio\Installer\vswhere.exe; -utf8 makes its JSON UTF-8 (vswhere-rs).
  const std::string x86 = env_value(env, "ProgramFiles(x86)");
  if (x86.empty()) return {};
  const fs::path vswhere = fs::path(x86) / "Microsoft Visual Studio" / "Installer" / "vswhere.exe";
  std::error_code ec;
  if (!fs::is_regular_file(vswhere, ec)) return {};
  auto result = runner.run(
      {vswhere.string(), {"-all", "-products", "*", "-format", "json", "-utf8"}, env, {}, timeout, 1u << 20});
  if (!result || !result->succeeded()) {
    notes.push_back({"vswhere", !result ? result.error().message : "vswhere.exe failed: " + result->err});
    return {};
  }
  auto installs = parse_vswhere(result->out);
  if (!installs) {
    notes.push_back({"vswhere", installs.error().message});
    return {};
  }
  std::vector<HostCompiler> found;
  for (const VsInstall& install : *installs) {
    if (auto compiler = msvc_of_install(install)) {
      found.push_back(std::move(*compiler));
    } else {
      notes.push_back({"vswhere", install.name + " (" + install.path + "): " + compiler.error().message});
    }
  }
  return found;
}

}  // namespace torchfix
