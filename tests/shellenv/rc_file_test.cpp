// Tests of rc file editing on real files: symlinks, modes, owners, backups,
// refusals, and a child process SIGKILLed at random points while installing.
#include "shellenv/rc_file.hpp"

#include <gtest/gtest.h>

#ifndef _WIN32
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif
#include <chrono>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "../support/linux_only.hpp"
#include "shellenv/rc_edit.hpp"

namespace torchfix::shellenv {
namespace {

namespace fs = std::filesystem;

#ifndef _WIN32  // RcFileTest is Linux-only (TORCHFIX_LINUX_ONLY); wine_profile.sh edits a real profile
// A fresh temporary folder per test; kept (and its path printed) on failure.
class RcFileTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "torchfix-rc-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    m_dir = tmpl;
  }
  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "kept test folder: " << m_dir << "\n";
    } else {
      fs::remove_all(m_dir);
    }
  }
  static void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }
  static std::string read(const fs::path& p) { return read_file_bytes(p).value(); }
  static mode_t mode_of(const fs::path& p) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    return st.st_mode & 07777;
  }
  fs::path m_dir;
};

const std::string k_body_a = "# reason a\nexport A='1'\n";
const std::string k_body_b = "# reason b\nexport B='2 two'\n";

TEST_F(RcFileTest, CreatesMissingFileAndIsIdempotent) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  const fs::path rc = m_dir / ".bashrc";
  auto first = install_into_rc(rc, k_body_a);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(first->changed && first->created);
  EXPECT_FALSE(first->backup);
  EXPECT_EQ(read(rc), *install_block("", k_body_a));
  EXPECT_EQ(mode_of(rc), 0644u);
  struct stat before {};
  ::stat(rc.c_str(), &before);
  auto second = install_into_rc(rc, k_body_a);
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->changed);
  struct stat after {};
  ::stat(rc.c_str(), &after);
  EXPECT_EQ(before.st_ino, after.st_ino);  // not even rewritten
}

TEST_F(RcFileTest, KeepsModeAndWritesBackupOfPreviousVersion) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  const fs::path rc = m_dir / ".zshrc";
  const std::string original = "setopt autocd\r\nexport Y=2";
  write(rc, original);
  ::chmod(rc.c_str(), 0640);
  auto change = install_into_rc(rc, k_body_a);
  ASSERT_TRUE(change) << change.error().message;
  ASSERT_TRUE(change->backup);
  EXPECT_EQ(*change->backup, fs::path(rc.string() + ".torchfix-backup"));
  EXPECT_EQ(read(*change->backup), original);
  EXPECT_EQ(mode_of(*change->backup), 0640u);
  EXPECT_EQ(mode_of(rc), 0640u);
  // A later edit keeps that backup: the user's lines are the same, and the
  // file from before torchfix's first edit is the copy worth keeping.
  ASSERT_TRUE(install_into_rc(rc, k_body_b));
  EXPECT_EQ(read(*change->backup), original);
  // Once the user's own lines change, the backup follows them.
  const std::string edited = "export Z=3\r\n" + read(rc);
  write(rc, edited);
  ASSERT_TRUE(install_into_rc(rc, k_body_a));
  EXPECT_EQ(read(*change->backup), edited);
  write(rc, *install_block(original, k_body_a));
  ASSERT_TRUE(uninstall_from_rc(rc));
  EXPECT_EQ(read(rc), original);
  EXPECT_EQ(mode_of(rc), 0640u);
}

TEST_F(RcFileTest, KeepsOwnerWhenRunAsRoot) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  if (::geteuid() != 0) GTEST_SKIP() << "changing a file's owner needs root; run the tests as root to cover it";
  const fs::path rc = m_dir / ".bashrc";
  write(rc, "x\n");
  ASSERT_EQ(::chown(rc.c_str(), 65534, 65534), 0);
  ASSERT_TRUE(install_into_rc(rc, k_body_a));
  for (const fs::path& p : {rc, fs::path(rc.string() + ".torchfix-backup")}) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    EXPECT_EQ(st.st_uid, 65534u) << p;
    EXPECT_EQ(st.st_gid, 65534u) << p;
  }
}

TEST_F(RcFileTest, FollowsSymlinkChainAndKeepsTheLinks) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  fs::create_directories(m_dir / "dotfiles");
  const fs::path real = m_dir / "dotfiles" / "bashrc";
  write(real, "real\n");
  fs::create_symlink("dotfiles/bashrc", m_dir / "middle");
  fs::create_symlink(m_dir / "middle", m_dir / ".bashrc");
  auto change = install_into_rc(m_dir / ".bashrc", k_body_a);
  ASSERT_TRUE(change) << change.error().message;
  EXPECT_EQ(change->target, real);
  EXPECT_TRUE(fs::is_symlink(m_dir / ".bashrc"));
  EXPECT_TRUE(fs::is_symlink(m_dir / "middle"));
  EXPECT_EQ(read(real), *install_block("real\n", k_body_a));
  EXPECT_TRUE(fs::exists(real.string() + ".torchfix-backup"));
}

TEST_F(RcFileTest, DanglingSymlinkCreatesItsTarget) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  fs::create_symlink("missing-target", m_dir / ".bashrc");
  auto change = install_into_rc(m_dir / ".bashrc", k_body_a);
  ASSERT_TRUE(change) << change.error().message;
  EXPECT_TRUE(change->created);
  EXPECT_TRUE(fs::is_symlink(m_dir / ".bashrc"));
  EXPECT_EQ(read(m_dir / "missing-target"), *install_block("", k_body_a));
}

TEST_F(RcFileTest, SymlinkLoopIsAnError) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  fs::create_symlink("b", m_dir / "a");
  fs::create_symlink("a", m_dir / "b");
  auto change = install_into_rc(m_dir / "a", k_body_a);
  ASSERT_FALSE(change);
  EXPECT_NE(change.error().message.find("symlinks"), std::string::npos);
}

TEST_F(RcFileTest, RefusalsLeaveFileUntouched) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  const fs::path rc = m_dir / "rc";
  const std::vector<std::string> bad = {std::string("bin\0ary\n", 8), "latin1 caf\xE9\n",
                                        "# >>> torchfix >>>\nno end\n", "# <<< torchfix <<<\n"};
  for (const std::string& bytes : bad) {
    write(rc, bytes);
    for (bool install : {true, false}) {
      auto change = install ? install_into_rc(rc, k_body_a) : uninstall_from_rc(rc);
      ASSERT_FALSE(change) << testing::PrintToString(bytes);
      EXPECT_NE(change.error().message.find(rc.string()), std::string::npos) << change.error().message;
      EXPECT_EQ(read(rc), bytes);
    }
  }
  EXPECT_FALSE(fs::exists(rc.string() + ".torchfix-backup"));
  // No temporary file is left; the edit's lock file stays (rc_file.hpp, lock_path).
  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(m_dir)) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{"rc", ".rc.torchfix-lock"}));
}

TEST_F(RcFileTest, RefusesReadOnlyFileAndDirectory) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  const fs::path rc = m_dir / "rc";
  write(rc, "x\n");
  ::chmod(rc.c_str(), 0444);
  auto change = install_into_rc(rc, k_body_a);
  ASSERT_FALSE(change);
  EXPECT_NE(change.error().message.find("read-only"), std::string::npos);
  EXPECT_EQ(read(rc), "x\n");
  fs::create_directory(m_dir / "dir");
  EXPECT_FALSE(install_into_rc(m_dir / "dir", k_body_a));
}

TEST_F(RcFileTest, WriteRefusesWhenTheFileChangedMeanwhile) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  const fs::path rc = m_dir / "rc";
  write(rc, "edited by someone else\n");
  const auto mode = fs::perms::owner_read | fs::perms::owner_write;
  auto ok = write_file_atomically(rc, "new\n", mode, std::optional<std::string_view>("what we read\n"));
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().message.find("changed while"), std::string::npos) << ok.error().message;
  EXPECT_EQ(read(rc), "edited by someone else\n");
  // Expected absent, but it exists now.
  EXPECT_FALSE(write_file_atomically(rc, "new\n", mode, std::optional<std::string_view>()));
  EXPECT_EQ(std::distance(fs::directory_iterator(m_dir), fs::directory_iterator()), 1);  // temp file removed
  ASSERT_TRUE(write_file_atomically(rc, "new\n", mode, std::optional<std::string_view>("edited by someone else\n")));
  EXPECT_EQ(read(rc), "new\n");
}

TEST_F(RcFileTest, UninstallOfMissingFileCreatesNothing) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  auto change = uninstall_from_rc(m_dir / "none");
  ASSERT_TRUE(change);
  EXPECT_FALSE(change->changed);
  EXPECT_FALSE(fs::exists(m_dir / "none"));
}

// A child loops installing body A then body B (each a real write); the parent
// SIGKILLs it after a random delay. The rc file must then be exactly the
// original, the original with A, or the original with B: never a mix. The
// backup, written the same way, must be one of those too.
TEST_F(RcFileTest, SigkillDuringInstallLeavesOldOrNewFile) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  const fs::path rc = m_dir / ".bashrc";
  const std::string original = "# user's own lines, é 🚀\nexport KEEP=1\nalias x=y";
  const std::set<std::string> whole = {original, *install_block(original, k_body_a),
                                       *install_block(original, k_body_b)};
  std::mt19937 rng(4242);
  std::set<std::string> seen;
  int killed_mid_loop = 0;
  for (int round = 0; round < 40; ++round) {
    write(rc, original);
    fs::remove(rc.string() + ".torchfix-backup");
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (;;) {
        if (!install_into_rc(rc, k_body_a) || !install_into_rc(rc, k_body_b)) ::_exit(3);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 20000)(rng)));
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the installing child stopped by itself (status " << status << ")";
    killed_mid_loop += WTERMSIG(status) == SIGKILL;
    const std::string now = read(rc);
    EXPECT_TRUE(whole.contains(now)) << "round " << round << ": torn file: " << testing::PrintToString(now);
    seen.insert(now);
    const fs::path backup = rc.string() + ".torchfix-backup";
    if (fs::exists(backup)) {
      EXPECT_TRUE(whole.contains(read(backup))) << "round " << round;
    }
    // A kill between mkstemp and rename leaves a temporary file; it never
    // replaces the rc file. Remove them so each round starts clean.
    for (const auto& entry : fs::directory_iterator(m_dir)) {
      if (entry.path().filename().string().starts_with(".") &&
          entry.path().filename().string().find(".torchfix-") != std::string::npos) {
        fs::remove(entry.path());
      }
    }
  }
  EXPECT_EQ(killed_mid_loop, 40);
  // The kills landed at different points: both new versions were observed.
  EXPECT_GE(seen.size(), 2u);
}

TEST_F(RcFileTest, DirectorySymlinkThenDotDotIsResolvedByTheRealPath) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  // home/.bashrc -> dotlink/../bashrc.real, home/dotlink -> dotfiles/sub: the
  // kernel opens dotfiles/bashrc.real; a lexical resolution would create
  // home/bashrc.real, a file no shell reads (issue 9).
  fs::create_directories(m_dir / "dotfiles" / "sub");
  fs::create_directories(m_dir / "home");
  const fs::path real = m_dir / "dotfiles" / "bashrc.real";
  write(real, "real\n");
  fs::create_directory_symlink(m_dir / "dotfiles" / "sub", m_dir / "home" / "dotlink");
  fs::create_symlink("dotlink/../bashrc.real", m_dir / "home" / ".bashrc");
  auto change = install_into_rc(m_dir / "home" / ".bashrc", k_body_a);
  ASSERT_TRUE(change) << change.error().message;
  EXPECT_EQ(change->target, fs::canonical(real));
  EXPECT_FALSE(fs::exists(m_dir / "home" / "bashrc.real"));
  EXPECT_EQ(read(real), *install_block("real\n", k_body_a));
  EXPECT_EQ(read(m_dir / "home" / ".bashrc"), read(real));  // what a shell reads through the links
  EXPECT_TRUE(fs::is_symlink(m_dir / "home" / ".bashrc"));
}

TEST_F(RcFileTest, HardLinkedRcIsEditedInPlaceSoEveryNameSeesIt) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  const fs::path rc = m_dir / ".bashrc";
  const fs::path other = m_dir / "dotfiles-bashrc";
  write(rc, "mine\n");
  fs::create_hard_link(rc, other);
  struct stat before {};
  ::stat(rc.c_str(), &before);
  auto change = install_into_rc(rc, k_body_a);
  ASSERT_TRUE(change) << change.error().message;
  EXPECT_TRUE(change->changed);
  EXPECT_EQ(change->hard_links, 2);
  struct stat after {};
  ::stat(rc.c_str(), &after);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_nlink, 2u);
  EXPECT_EQ(read(other), *install_block("mine\n", k_body_a));
  EXPECT_EQ(read(rc.string() + ".torchfix-backup"), "mine\n");
  ASSERT_TRUE(uninstall_from_rc(other));
  EXPECT_EQ(read(rc), "mine\n");
}

TEST_F(RcFileTest, TemporaryFilesOfAKilledRunAreRemovedByTheNext) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  const fs::path rc = m_dir / ".bashrc";
  write(rc, "mine\n");
  // A real run SIGKILLed while it writes: whatever it leaves behind...
  const std::string big(8 << 20, '#');
  const pid_t child = ::fork();
  if (child == 0) {
    for (;;) (void)write_file_atomically(m_dir / ".bashrc", big, fs::perms::owner_read | fs::perms::owner_write);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  write(rc, "mine\n");
  // ...and the names such runs leave, next to decoys that must stay.
  const fs::path victim = m_dir / "victim";
  write(victim, "precious");
  // (util/file.hpp names a temporary file "." + NAME + ".torchfix-XXXXXX".)
  for (const char* name : {"..bashrc.torchfix-Ab12Cd", "..bashrc.torchfix-backup.torchfix-Zz9Yy8"})
    write(m_dir / name, big);
  for (const char* name : {".bashrc.torchfix-backup", ".other.torchfix-Ab12Cd", "..bashrc.torchfix-Ab12Cd7", "notes"}) {
    write(m_dir / name, "keep");
  }
  fs::create_symlink(victim, m_dir / "..bashrc.torchfix-Qq1Ww2");
  ASSERT_TRUE(install_into_rc(rc, k_body_a));
  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(m_dir)) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{".bashrc", ".bashrc.torchfix-backup", "..bashrc.torchfix-lock",
                                         ".other.torchfix-Ab12Cd", "..bashrc.torchfix-Ab12Cd7", "notes", "victim",
                                         "..bashrc.torchfix-Qq1Ww2"}));
  EXPECT_EQ(read(victim), "precious");
}

TEST_F(RcFileTest, InstallWaitsForTheLockAnotherProcessHolds) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  const fs::path rc = m_dir / ".bashrc";
  write(rc, "mine\n");
  if (!fs::exists("/usr/bin/flock")) GTEST_SKIP() << "flock(1) is missing (Debian package util-linux)";
  // flock(1), a real second process, holds the sidecar lock for 1.5 s.
  const fs::path lock = lock_path(rc);
  const pid_t holder = ::fork();
  if (holder == 0) {
    ::execl("/usr/bin/flock", "flock", lock.c_str(), "/bin/sleep", "1.5", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait until it holds the lock.
  for (int i = 0; i < 200; ++i) {
    const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
    const bool held = fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0;
    if (fd >= 0) ::close(fd);
    if (held) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto start = std::chrono::steady_clock::now();
  auto change = install_into_rc(rc, k_body_a);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int status = 0;
  ::waitpid(holder, &status, 0);
  ASSERT_TRUE(change) << change.error().message;
  EXPECT_GE(waited, 1.0) << "the install did not wait for the lock";
  EXPECT_EQ(read(rc), *install_block("mine\n", k_body_a));
}

TEST_F(RcFileTest, ConcurrentInstallsInRealProcessesTakeTurns) {
  TORCHFIX_LINUX_ONLY("POSIX modes, owners, links, flock and forked writers");
  const fs::path rc = m_dir / ".bashrc";
  write(rc, "mine\n");
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    const pid_t child = ::fork();
    if (child == 0) {
      for (int round = 0; round < 10; ++round) {
        auto change = i % 2 == 0 ? install_into_rc(rc, i % 4 == 0 ? k_body_a : k_body_b) : uninstall_from_rc(rc);
        if (!change) ::_exit(1);  // "changed while torchfix was editing it" or any other failure
      }
      ::_exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "an edit failed instead of waiting its turn";
  }
  const std::string final = read(rc);
  EXPECT_TRUE(final == "mine\n" || final == *install_block("mine\n", k_body_a) ||
              final == *install_block("mine\n", k_body_b))
      << final;
}

#endif  // _WIN32

// The PowerShell that started torchfix picks the profile: pwsh (7) reads
// Documents\PowerShell, powershell (5.1) Documents\WindowsPowerShell
// (about_Profiles); Windows reports image names in any case.
TEST(PowerShellProfile, IsTheCurrentUserCurrentHostProfileOfTheParentsEdition) {
  const fs::path docs = "/users/ana/OneDrive/Documents";
  for (const char* host : {"pwsh.exe", "PWSH.EXE", "pwsh"}) {
    auto p = powershell_profile(docs, host);
    ASSERT_TRUE(p) << host << ": " << p.error().message;
    EXPECT_EQ(*p, docs / "PowerShell" / "Microsoft.PowerShell_profile.ps1") << host;
  }
  for (const char* host : {"powershell.exe", "PowerShell.exe"}) {
    auto p = powershell_profile(docs, host);
    ASSERT_TRUE(p) << host << ": " << p.error().message;
    EXPECT_EQ(*p, docs / "WindowsPowerShell" / "Microsoft.PowerShell_profile.ps1") << host;
  }
  for (const char* host : {"cmd.exe", "", "explorer.exe", "pwsh-preview.exe"}) {
    auto p = powershell_profile(docs, host);
    ASSERT_FALSE(p) << host;
    EXPECT_NE(p.error().message.find("pass --rc $PROFILE"), std::string::npos) << p.error().message;
    EXPECT_NE(p.error().message.find("'" + std::string(host) + "'"), std::string::npos) << p.error().message;
  }
}

}  // namespace
}  // namespace torchfix::shellenv
