// The parts of shellenv/rc_file.hpp every build has: where the lock and the
// backup of an rc edit live, how long a lock is waited for, how an rc path
// is resolved and how much of one is read. The edit itself is rc_file.cpp
// (POSIX) or, without it (TORCHFIX_RC_EDIT=OFF), rc_file_unavailable.cpp.
#include <chrono>

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

}  // namespace torchfix::shellenv
