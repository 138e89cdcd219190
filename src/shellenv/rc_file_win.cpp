// rc_file_os.hpp on Windows: the lock is LockFileEx on a sidecar file
// (util::try_lock_file), the profile is looked at through std::filesystem
// (its read-only attribute shows as perms without write bits), and a
// hard-linked one is rewritten in place through the same file object.
// No owners or modes to keep: a new file takes its folder's ACL.
#include <chrono>
#include <fstream>
#include <thread>

#include "shellenv/rc_file.hpp"
#include "shellenv/rc_file_os.hpp"

namespace torchfix::shellenv::os {

namespace fs = std::filesystem;

// The lock file is never removed, as on POSIX: a third run must not lock a
// new file while a second still waits on the old one.
Expected<util::FileLock> lock_rc(const fs::path& target) {
  const fs::path lock = lock_path(target);
  const auto deadline = std::chrono::steady_clock::now() + rc_lock_wait();
  for (;;) {
    auto held = util::try_lock_file(lock);
    if (!held) return fail("cannot use the lock file: " + held.error().message);
    if (*held) return std::move(**held);
    if (std::chrono::steady_clock::now() >= deadline) return fail(lock_timeout(target, lock));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Expected<RcFile> look_at_rc(const fs::path& target) {
  RcFile file;
  std::error_code ec;
  const fs::file_status st = fs::status(target, ec);
  if (st.type() == fs::file_type::not_found) return file;
  if (ec) return fail("cannot read " + target.string() + ": " + ec.message());
  if (st.type() != fs::file_type::regular) {
    return fail(target.string() + " is not a regular file; give a profile file with --rc");
  }
  // Replacing a read-only file would succeed and silently defeat the user's
  // protection, so refuse, as on POSIX.
  if ((st.permissions() & fs::perms::owner_write) == fs::perms::none) {
    return fail("refusing to edit the read-only file " + target.string() +
                "; make it writable (attrib -R) or choose another file with --rc");
  }
  file.exists = true;
  file.hard_links = fs::hard_link_count(target, ec);
  if (ec) file.hard_links = 1;
  return file;
}

// The backup written before is the way back if this is cut short.
Expected<void> write_in_place(const fs::path& target, const RcFile& file, std::string_view bytes,
                              std::string_view expected) {
  std::error_code ec;
  auto current = read_file_bytes(target, rc_limits());
  if (!current || *current != expected || fs::hard_link_count(target, ec) != file.hard_links) {
    return fail(target.string() + " changed while torchfix was editing it; nothing was written. Run the command again");
  }
  {
    // in | out: open the existing file without truncating it (C's "r+b").
    std::ofstream out(target, std::ios::binary | std::ios::in | std::ios::out);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) return fail("cannot write " + target.string() + " in place; its backup holds the previous text");
  }
  fs::resize_file(target, bytes.size(), ec);
  if (ec) return fail("cannot truncate " + target.string() + ": " + ec.message());
  return {};
}

}  // namespace torchfix::shellenv::os
