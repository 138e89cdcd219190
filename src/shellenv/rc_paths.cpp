// The parts of shellenv/rc_file.hpp every build has: where the lock and the
// backup of an rc edit live, how long a lock is waited for, how an rc path
// is resolved and how much of one is read, and where a PowerShell profile
// is. The edit itself is rc_file.cpp.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>

#include "shellenv/quote.hpp"
#include "shellenv/rc_file.hpp"
#include "util/file.hpp"

namespace torchfix::shellenv {

namespace fs = std::filesystem;

std::string_view backup_suffix() {
  return ".torchfix-backup";
}

fs::path lock_path(const fs::path& target) {
  return target.parent_path() / ("." + target.filename().string() + ".torchfix-lock");
}

std::chrono::milliseconds rc_lock_wait() {
  return std::chrono::seconds(30);
}

Expected<fs::path> resolve_rc_target(const fs::path& rc) {
  // By hand (util), not canonical(): a dangling link still names the file to
  // create, a loop is reported, and as root a user's link into a file that is
  // not theirs (/etc/environment) is refused instead of edited.
  return util::resolve_trusted(rc);
}

util::ReadLimits rc_limits() {
  return util::ReadLimits{256u << 20, util::Pipes::refuse, "rc file"};
}

Expected<fs::path> powershell_profile(const fs::path& documents, std::string_view host) {
  const std::string name = program_stem(host);
  // Source: MicrosoftDocs/PowerShell-Docs, reference/7.4 and reference/5.1,
  // Microsoft.PowerShell.Core/About/about_Profiles.md ("Current user,
  // Current Host"); $HOME\Documents there is the Documents known folder.
  const char* folder = name == "pwsh" ? "PowerShell" : name == "powershell" ? "WindowsPowerShell" : nullptr;
  if (!folder) {
    return fail("cannot tell which PowerShell's profile to edit: torchfix was started by '" + std::string(host) +
                "', not pwsh.exe or powershell.exe; run it from PowerShell, or pass --rc $PROFILE");
  }
  return documents / folder / "Microsoft.PowerShell_profile.ps1";
}

}  // namespace torchfix::shellenv
