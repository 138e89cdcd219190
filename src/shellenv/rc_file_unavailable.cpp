// shellenv/rc_file.hpp's edits for builds without the POSIX rc editor
// (TORCHFIX_RC_EDIT=OFF, the Windows build for now: no flock, fchown or
// O_NOFOLLOW there). Nothing is written: the caller prints the lines and
// the user pastes them into the file.
#include "shellenv/rc_file.hpp"

namespace torchfix::shellenv {
namespace {

Expected<RcChange> refuse(const std::filesystem::path& rc) {
  return fail("editing " + rc.string() +
              " is not available in this Windows build yet; print the lines with `torchfix env` and paste them in");
}

}  // namespace

Expected<RcChange> install_into_rc(const std::filesystem::path& rc, std::string_view /*body*/) {
  return refuse(rc);
}

Expected<RcChange> uninstall_from_rc(const std::filesystem::path& rc) {
  return refuse(rc);
}

}  // namespace torchfix::shellenv
