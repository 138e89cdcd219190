// probe_failed_dll on Windows layouts the tests make: torch\lib with a DLL
// (a PE image written by tests/support/pe_image.hpp) whose import directory
// names DLLs that are, or are not, where Windows' loader looks.

#include "probe/dll_probe.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/pe_image.hpp"
#include "probe_test_support.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;

void write_pe(const fs::path& path, const std::vector<std::string>& imports) {
  fs::create_directories(path.parent_path());
  const auto bytes = testing::pe::make_pe({{".text", std::vector<std::byte>(64, std::byte{0xCC})}},
                                          testing::pe::PeKind::image, imports);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// torch's message (torch/__init__.py) for the DLL at `dll`.
std::string winerror(const fs::path& dll) {
  return "OSError: [WinError 126] The specified module could not be found. Error loading \"" + dll.string() +
         "\" or one of its dependencies.";
}

TEST(FailedDll, ImportMissingEverywhereTheLoaderLooksIsNamed) {
  TempDir root;
  const fs::path torch = root.path() / "Python310" / "Lib" / "site-packages" / "torch";
  const fs::path dll = torch / "lib" / "caffe2_detectron_ops.dll";
  write_pe(dll, {"c10.dll", "VCRUNTIME140_1.dll", "api-ms-win-crt-runtime-l1-1-0.dll", "KERNEL32.dll"});
  write_pe(torch / "lib" / "c10.dll", {"KERNEL32.dll"});
  write_file(root.path() / "Windows" / "System32" / "kernel32.dll", "stand-in");
  const Environment env{{"SystemRoot", (root.path() / "Windows").string()}};
  const std::string python = (root.path() / "Python310" / "python.exe").string();
  auto failed = probe_failed_dll(winerror(dll), python, torch.string(), env);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->error, "");
  EXPECT_EQ(failed->path, dll.string());
  EXPECT_EQ(failed->imports.size(), 4u);
  EXPECT_EQ(failed->missing, std::vector<std::string>{"VCRUNTIME140_1.dll"});
  ASSERT_EQ(failed->searched.size(), 3u);  // the DLL's folder (torch\lib), python.exe's, System32
  EXPECT_EQ(failed->searched[2], (root.path() / "Windows" / "System32").string());

  // The redistributable puts it into System32; a folder on PATH counts too.
  write_file(root.path() / "Windows" / "System32" / "vcruntime140_1.dll", "stand-in");
  EXPECT_TRUE(probe_failed_dll(winerror(dll), python, torch.string(), env)->missing.empty());
  fs::remove(root.path() / "Windows" / "System32" / "vcruntime140_1.dll");
  write_file(root.path() / "tools" / "VCRUNTIME140_1.DLL", "stand-in");
  const Environment with_path{{"SystemRoot", (root.path() / "Windows").string()},
                              {"PATH", ";" + (root.path() / "tools").string()}};
  EXPECT_TRUE(probe_failed_dll(winerror(dll), python, torch.string(), with_path)->missing.empty());
}

TEST(FailedDll, OtherErrorsAndUnreadableDllsSayWhat) {
  TempDir root;
  EXPECT_FALSE(probe_failed_dll("ImportError: No module named 'numpy'", "python", "", {}));
  const fs::path text = root.path() / "not-a-dll.dll";
  write_file(text, "plain text, not a PE image");
  auto failed = probe_failed_dll(winerror(text), "python", "", {});
  ASSERT_TRUE(failed);
  EXPECT_NE(failed->error, "");
  EXPECT_TRUE(failed->missing.empty());
  failed = probe_failed_dll(winerror(root.path() / "gone.dll"), "python", "", {});
  ASSERT_TRUE(failed);
  EXPECT_NE(failed->error, "");
}

}  // namespace
}  // namespace torchfix
