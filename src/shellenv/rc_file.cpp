#include "shellenv/rc_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "shellenv/rc_edit.hpp"
#include "util/file.hpp"

namespace torchfix::shellenv {
namespace {

namespace fs = std::filesystem;
using util::os_error;

enum class Edit { install, uninstall };

Expected<RcChange> edit_rc(const fs::path& rc, Edit edit, std::string_view body) {
  auto target = resolve_rc_target(rc);
  if (!target) return std::unexpected(target.error());
  RcChange change;
  change.target = *target;

  struct stat st {};
  const bool exists = ::stat(target->c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return fail(os_error("cannot read", *target, errno));
  if (exists && !S_ISREG(st.st_mode)) {
    return fail(target->string() + " is not a regular file; give an rc file with --rc");
  }
  if (!exists && edit == Edit::uninstall) return change;
  // Renaming over a read-only file would succeed (the folder is writable)
  // and silently defeat the user's protection, so refuse. access() says yes
  // to root for any file, hence the look at the write bits too.
  if (exists && (::access(target->c_str(), W_OK) != 0 || (st.st_mode & 0222) == 0)) {
    return fail("refusing to edit the read-only file " + target->string() +
                "; make it writable (chmod u+w) or choose another file with --rc");
  }

  std::string old_bytes;
  if (exists) {
    auto read = read_file_bytes(*target);
    if (!read) return std::unexpected(read.error());
    old_bytes = std::move(*read);
  }
  auto edited = edit == Edit::install ? install_block(old_bytes, body) : remove_block(old_bytes);
  if (!edited) return fail(target->string() + ": " + edited.error().message);
  if (exists && *edited == old_bytes) return change;

  const auto mode =
      exists ? static_cast<fs::perms>(st.st_mode & 07777)
             : fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  if (exists) {
    fs::path backup = *target;
    backup += backup_suffix();
    if (auto ok = write_file_atomically(backup, old_bytes, mode); !ok) {
      return fail("cannot write the backup, so the rc file was left unchanged: " + ok.error().message);
    }
    // Same owner as the rc file (root editing a user's rc must not leave the
    // user a backup they cannot read or remove); best effort, it is a copy.
    if (::chown(backup.c_str(), st.st_uid, st.st_gid) != 0) {
      // Without the privilege the backup keeps our own owner, which is then
      // the rc file's owner anyway.
    }
    change.backup = backup;
  }
  std::optional<std::optional<std::string_view>> expected(std::in_place);
  if (exists) *expected = old_bytes;
  if (auto ok = write_file_atomically(*target, *edited, mode, expected); !ok) return std::unexpected(ok.error());
  change.changed = true;
  change.created = !exists;
  return change;
}

}  // namespace

std::string_view backup_suffix() {
  return ".torchfix-backup";
}

Expected<fs::path> resolve_rc_target(const fs::path& rc) {
  fs::path path = fs::absolute(rc);
  // Follow the chain by hand (not canonical()) so a dangling link still names
  // the file to create, and a loop is reported instead of spinning.
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(path, ec))) return path;
    const fs::path link = fs::read_symlink(path, ec);
    if (ec) return fail("cannot read the symlink " + path.string() + ": " + ec.message());
    path = link.is_absolute() ? link : path.parent_path() / link;
    path = path.lexically_normal();
  }
  return fail("too many levels of symlinks at " + rc.string() + "; point --rc at the real file");
}

Expected<RcChange> install_into_rc(const fs::path& rc, std::string_view body) {
  return edit_rc(rc, Edit::install, body);
}

Expected<RcChange> uninstall_from_rc(const fs::path& rc) {
  return edit_rc(rc, Edit::uninstall, "");
}

}  // namespace torchfix::shellenv
