// probe_libcuda_link on library layouts the tests make under a root: the
// driver's libcuda.so.1 with and without its development link libcuda.so
// (a symlink, a dangling one, a regular file as WSL2's /usr/lib/wsl/lib
// holds), found through an `ldconfig -p` listing, LD_LIBRARY_PATH,
// TRITON_LIBCUDA_PATH or LIBRARY_PATH, as Triton 3.0-3.5's libcuda_dirs()
// and gcc's -lcuda look.

#include "probe/libcuda_probe.hpp"

#include <gtest/gtest.h>

#include "probe_test_support.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;

constexpr const char* k_multiarch = "/usr/lib/x86_64-linux-gnu";

// The listing `ldconfig -p` prints for a driver's libcuda.so.1 in `dir`.
std::string listing(const std::string& dir) {
  return "1234 libs found in cache `/etc/ld.so.cache'\n\tlibcuda.so.1 (libc6,x86-64) => " + dir +
         "/libcuda.so.1\n\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6\n";
}

// Writes the driver's library as its packages install it: the real file and
// the libcuda.so.1 soname link to it.
void driver_files(const fs::path& root, const std::string& dir) {
  const fs::path at = root / fs::path(dir).relative_path();
  write_file(at / "libcuda.so.535.183.01", "ELF stand-in of the driver's libcuda");
  fs::create_symlink("libcuda.so.535.183.01", at / "libcuda.so.1");
}

TEST(LibcudaLink, OnlyTheSonameLinkLeavesLcudaUnresolved) {
  TempDir root;
  driver_files(root.path(), k_multiarch);
  const LibcudaLink link = probe_libcuda_link({}, listing(k_multiarch), "x86_64", root.path());
  EXPECT_EQ(link.triton_dirs, std::vector<std::string>{k_multiarch});
  EXPECT_EQ(link.libcuda_so_1, std::string(k_multiarch) + "/libcuda.so.1");
  EXPECT_FALSE(link.libcuda_so);
  ASSERT_FALSE(link.linker_dirs.empty());
  EXPECT_EQ(link.linker_dirs.front(), "/usr/local/lib/x86_64-linux-gnu");
}

TEST(LibcudaLink, TheDevelopmentSymlinkIsFoundAndADanglingOneIsNot) {
  TempDir root;
  driver_files(root.path(), k_multiarch);
  const fs::path dev = root.path() / fs::path(k_multiarch).relative_path() / "libcuda.so";
  fs::create_symlink("libcuda.so.999.0", dev);  // a leftover of an uninstalled driver
  EXPECT_FALSE(probe_libcuda_link({}, listing(k_multiarch), "x86_64", root.path()).libcuda_so);
  fs::remove(dev);
  fs::create_symlink("libcuda.so.1", dev);
  const LibcudaLink link = probe_libcuda_link({}, listing(k_multiarch), "x86_64", root.path());
  EXPECT_EQ(link.libcuda_so, std::string(k_multiarch) + "/libcuda.so");
}

// WSL2: /usr/lib/wsl/lib holds libcuda.so, .so.1 and .so.1.1 as regular files
// (microsoft/WSL#8587) and ldconfig lists only libcuda.so.1 there; Triton
// passes that folder with -L, so its libcuda.so is found although ld's own
// folders have none.
TEST(LibcudaLink, WslFolderOfRegularFilesIsFoundThroughLdconfig) {
  TempDir root;
  for (const char* name : {"libcuda.so", "libcuda.so.1", "libcuda.so.1.1"}) {
    write_file(root.path() / "usr/lib/wsl/lib" / name, "the Windows driver's libcuda");
  }
  const LibcudaLink link = probe_libcuda_link({}, listing("/usr/lib/wsl/lib"), "x86_64", root.path());
  EXPECT_EQ(link.triton_dirs, std::vector<std::string>{"/usr/lib/wsl/lib"});
  EXPECT_EQ(link.libcuda_so, "/usr/lib/wsl/lib/libcuda.so");
  // Without the ldconfig entry (a stale cache) Triton falls back to
  // LD_LIBRARY_PATH; without that too, nothing finds it.
  EXPECT_FALSE(probe_libcuda_link({}, "", "x86_64", root.path()).libcuda_so);
  const LibcudaLink from_env =
      probe_libcuda_link({{"LD_LIBRARY_PATH", "/opt/none:/usr/lib/wsl/lib"}}, "", "x86_64", root.path());
  EXPECT_EQ(from_env.triton_dirs, std::vector<std::string>{"/usr/lib/wsl/lib"});
  EXPECT_EQ(from_env.libcuda_so, "/usr/lib/wsl/lib/libcuda.so");
}

// TRITON_LIBCUDA_PATH replaces the lookup; LIBRARY_PATH (the toolkit's stubs,
// as in state-spaces/mamba#123) is searched by gcc after the -L folders.
TEST(LibcudaLink, TritonVariableAndLibraryPathAreWhereTheLinkLooks) {
  TempDir root;
  driver_files(root.path(), k_multiarch);
  write_file(root.path() / "home/u/.local/lib/triton-libcuda/.keep", "");
  // Relative, so that it resolves inside the test root as the absolute one does on the machine.
  fs::create_symlink(fs::relative(root.path() / fs::path(k_multiarch).relative_path() / "libcuda.so.1",
                                  root.path() / "home/u/.local/lib/triton-libcuda"),
                     root.path() / "home/u/.local/lib/triton-libcuda/libcuda.so");
  const LibcudaLink own = probe_libcuda_link({{"TRITON_LIBCUDA_PATH", "/home/u/.local/lib/triton-libcuda"}},
                                             listing(k_multiarch), "x86_64", root.path());
  EXPECT_EQ(own.triton_dirs, std::vector<std::string>{"/home/u/.local/lib/triton-libcuda"});
  EXPECT_EQ(own.libcuda_so, "/home/u/.local/lib/triton-libcuda/libcuda.so");
  write_file(root.path() / "usr/local/cuda/lib64/stubs/libcuda.so", "the toolkit's stub");
  const LibcudaLink stubs = probe_libcuda_link({{"LIBRARY_PATH", "/usr/local/cuda/lib64/stubs/"}}, listing(k_multiarch),
                                               "x86_64", root.path());
  EXPECT_EQ(stubs.linker_dirs.front(), "/usr/local/cuda/lib64/stubs");
  EXPECT_EQ(stubs.libcuda_so, "/usr/local/cuda/lib64/stubs/libcuda.so");
}

}  // namespace
}  // namespace torchfix
