#pragma once
// Finds MSVC host compilers the way Visual Studio installs them: vswhere's
// list of installs (Build Tools included), each install's default toolset
// and its x64 cl.exe.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/version.hpp"
#include "core/situation/snapshot.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Holds one Visual Studio install as vswhere lists it.
struct VsInstall {
  std::string path;  // installationPath, "C:\Program Files\Microsoft Visual Studio\2022\Community"
  std::string name;  // displayName, "Visual Studio Community 2022"
};

/// Parses `vswhere -format json` output (an array of instance objects):
/// each object's installationPath and displayName; objects without a
/// string installationPath are skipped. Errors: not JSON, or not an array.
Expected<std::vector<VsInstall>> parse_vswhere(std::string_view json);

/// Returns cl.exe's version for an MSVC toolset version ("14.35.32215" ->
/// 19.35.32215: toolsets 14.1x on carry the compiler's minor and build;
/// _MSC_FULL_VER 194334808 is toolset 14.43.34808). nullopt for anything
/// that is not 14.NN[.build] with NN >= 10.
std::optional<Version> msvc_version_of_toolset(std::string_view toolset);

/// Finds every install `vswhere.exe -all -products * -format json -utf8`
/// lists (vswhere from `%ProgramFiles(x86)%\Microsoft Visual
/// Studio\Installer`, run through `runner` within `timeout`), reads its
/// `VC\Auxiliary\Build\Microsoft.VCToolsVersion.default.txt` and returns
/// its `VC\Tools\MSVC\<toolset>\bin\Hostx64\x64\cl.exe` as an msvc
/// compiler, origin "vswhere". No vswhere (any non-Windows machine): none.
/// What fails (vswhere, its JSON, a missing file) is a note in `notes`.
std::vector<HostCompiler> probe_msvc(const Environment& env, ProcessRunner& runner, std::chrono::milliseconds timeout,
                                     std::vector<ProbeNote>& notes);

}  // namespace torchfix
