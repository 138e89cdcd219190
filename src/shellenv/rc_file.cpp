// shellenv/rc_file.hpp: the edit of an rc file or PowerShell profile, the
// same on every system; the steps that differ (the lock, looking at the
// file, an in-place write) are rc_file_os.hpp's.
#include "shellenv/rc_file.hpp"

#include <utility>
#include <vector>

#include "shellenv/rc_edit.hpp"
#include "shellenv/rc_file_os.hpp"
#include "util/file.hpp"

namespace torchfix::shellenv {
namespace {

namespace fs = std::filesystem;

enum class Edit { install, uninstall };

// Removes temporary files a killed run left next to the rc file or its
// backup (util::is_temp_file_of): under the lock no other torchfix is
// writing them. Only plain files of exactly that shape go.
void remove_stale_temps(const fs::path& target) {
  const std::string name = target.filename().string();
  const std::string backup = name + std::string(backup_suffix());
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string file = entry.path().filename().string();
    if (!util::is_temp_file_of(file, name) && !util::is_temp_file_of(file, backup)) continue;
    std::error_code type_ec;
    if (!entry.is_symlink(type_ec) && entry.is_regular_file(type_ec)) fs::remove(entry.path(), type_ec);
  }
}

// The block's lines without comments and blank lines: what a shell runs.
std::vector<std::string> commands_of(std::string_view body) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t end = body.find('\n', start);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = body.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] != '#') out.emplace_back(line);
    start = end + 1;
  }
  return out;
}

// Writes the previous content to <target>.torchfix-backup, unless the backup
// there already holds the same lines of the user's (outside the block): it
// may be the file as it was before torchfix's first edit, the one copy worth
// having. A new backup gets the rc file's owner (root editing a user's rc
// must not leave the user a backup they cannot read or remove); util's
// writer applies it on the descriptor, never by path.
Expected<fs::path> write_backup(const fs::path& target, const os::RcFile& file, const std::string& old_bytes) {
  fs::path backup = target;
  backup += backup_suffix();
  auto kept = read_file_bytes(backup, rc_limits());
  auto kept_lines = kept ? remove_block(*kept) : Expected<std::string>(fail("no backup"));
  auto old_lines = remove_block(old_bytes);
  if (kept_lines && old_lines && *kept_lines == *old_lines) return backup;
  util::WriteOptions options;
  options.mode = file.mode;
  options.owner = file.owner;
  options.group = file.group;
  if (auto ok = util::write_file(backup, old_bytes, options); !ok) {
    return fail("cannot write the backup, so the rc file was left unchanged: " + ok.error().message);
  }
  return backup;
}

// The edited bytes, or nullopt when nothing is to be written: the same
// bytes, or (install) a block whose commands are the same, whose comments
// hold live facts (the memory behind MAX_JOBS, the torchfix version) that
// differ from run to run and must not rewrite the file and its backup.
Expected<std::optional<std::string>> edited_bytes(const fs::path& target, const std::optional<std::string>& old_bytes,
                                                  Edit edit, std::string_view body) {
  const std::string_view old_text = old_bytes ? std::string_view(*old_bytes) : std::string_view();
  auto edited = edit == Edit::install ? install_block(old_text, body) : remove_block(old_text);
  if (!edited) return fail(target.string() + ": " + edited.error().message);
  if (!old_bytes) return std::optional<std::string>(std::move(*edited));
  if (*edited == *old_bytes) return std::optional<std::string>();
  if (edit == Edit::install) {
    auto old_body = block_body(*old_bytes);
    if (old_body && *old_body && commands_of(**old_body) == commands_of(body)) return std::optional<std::string>();
  }
  return std::optional<std::string>(std::move(*edited));
}

Expected<RcChange> edit_rc(const fs::path& rc, Edit edit, std::string_view body) {
  auto target = resolve_rc_target(rc);
  if (!target) return std::unexpected(target.error());
  RcChange change;
  change.target = *target;
  auto lock = os::lock_rc(*target);
  if (!lock) return std::unexpected(lock.error());
  remove_stale_temps(*target);

  auto file = os::look_at_rc(*target);
  if (!file) return std::unexpected(file.error());
  if (!file->exists && edit == Edit::uninstall) return change;
  std::optional<std::string> old_bytes;
  if (file->exists) {
    auto read = read_file_bytes(*target, rc_limits());
    if (!read) return std::unexpected(read.error());
    old_bytes = std::move(*read);
  }
  auto edited = edited_bytes(*target, old_bytes, edit, body);
  if (!edited) return std::unexpected(edited.error());
  if (!*edited) return change;
  if (old_bytes) {
    auto backup = write_backup(*target, *file, *old_bytes);
    if (!backup) return std::unexpected(backup.error());
    change.backup = *backup;
  }
  if (old_bytes && file->hard_links > 1) {
    if (auto ok = os::write_in_place(*target, *file, **edited, *old_bytes); !ok) return std::unexpected(ok.error());
    change.hard_links = static_cast<int>(file->hard_links);
    change.changed = true;
    return change;
  }
  std::optional<std::optional<std::string_view>> expected(std::in_place);
  if (old_bytes) *expected = *old_bytes;
  if (auto ok = write_file_atomically(*target, **edited, file->mode, expected); !ok) return std::unexpected(ok.error());
  change.changed = true;
  change.created = !old_bytes;
  return change;
}

}  // namespace

std::string os::lock_timeout(const fs::path& target, const fs::path& lock) {
  return "another torchfix is still editing " + target.string() + " (it holds the lock " + lock.string() +
         "); nothing was written. Run the command again when it is done";
}

Expected<RcChange> install_into_rc(const fs::path& rc, std::string_view body) {
  return edit_rc(rc, Edit::install, body);
}

Expected<RcChange> uninstall_from_rc(const fs::path& rc) {
  return edit_rc(rc, Edit::uninstall, "");
}

}  // namespace torchfix::shellenv
