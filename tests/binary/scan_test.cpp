// scan_site_packages and read_path on site-packages trees built at test time.
#include "binary/scan.hpp"

#include <gtest/gtest.h>

#ifndef _WIN32
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <fstream>
#include <future>

#include "../support/linux_only.hpp"
#include "fixtures.hpp"

namespace torchfix::binary {
namespace {

namespace fs = std::filesystem;

void write_text(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// Installs a distribution: files copied from `files` (relative path -> source)
// plus METADATA and a RECORD that lists `record` lines.
void install(const fs::path& site, const std::string& name, const std::string& version,
             const std::vector<std::pair<std::string, fs::path>>& files, const std::string& record) {
  for (const auto& [relative, source] : files) {
    fs::create_directories((site / relative).parent_path());
    fs::copy_file(source, site / relative, fs::copy_options::overwrite_existing);
  }
  const fs::path info = site / (name + "-" + version + ".dist-info");
  write_text(info / "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version +
                                    "\nRequires-Dist: something\n\nLong description\nName: not-this\n");
  write_text(info / "RECORD", record);
}

TEST(Scan, MapsLibrariesToDistributionsThroughRecord) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(partial, test::fixture("partial.so"));
  TORCHFIX_FIXTURE(sm90a, test::fixture("sm90a.o"));
  test::TempDir dir;
  const fs::path site = dir.path() / "site-packages";
  install(site, "flash_attn", "2.8.3", {{"flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so", partial}},
          "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so,sha256=x,1\n"
          "flash_attn/__init__.py,sha256=y,2\n"
          "\"flash_attn/lib/libgone.so\",,\n");
  install(site, "nvidia-cuda-runtime-cu12", "12.6.77", {{"nvidia/cuda_runtime/lib/libk.so.12", sm90a}},
          "nvidia/cuda_runtime/lib/libk.so.12,,\r\n");
  // A distribution whose only library is host code: left out.
  install(site, "plainlib", "1.0", {{"plainlib/_native.so", "/bin/sh"}}, "plainlib/_native.so,,\n");
  // A library not listed in any RECORD is not attributed to anyone.
  fs::copy_file(partial, site / "stray.so");

  const auto packages = scan_site_packages(site);
  ASSERT_EQ(packages.size(), 2u);
  const PackageKernels& flash = packages[0];
  EXPECT_EQ(flash.distribution, "flash_attn");
  EXPECT_EQ(flash.version, "2.8.3");
  ASSERT_EQ(flash.binaries.size(), 2u);
  EXPECT_EQ(flash.binaries[0].path, (site / "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so").string());
  EXPECT_EQ(flash.binaries[0].error, "");
  EXPECT_EQ(flash.binaries[0].groups.size(), 3u);
  EXPECT_EQ(flash.binaries[1].path, (site / "flash_attn/lib/libgone.so").string());
  EXPECT_NE(flash.binaries[1].error.find("missing"), std::string::npos) << flash.binaries[1].error;

  const PackageKernels& runtime = packages[1];
  EXPECT_EQ(runtime.distribution, "nvidia-cuda-runtime-cu12");
  EXPECT_EQ(runtime.version, "12.6.77");
  ASSERT_EQ(runtime.binaries.size(), 1u);
  ASSERT_EQ(runtime.binaries[0].groups.size(), 1u);
  EXPECT_EQ(runtime.binaries[0].groups[0].images.at(0).name(), "sm_90a");
}

TEST(Scan, CorruptLibraryIsRecordedNotThrown) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(sm80, test::fixture("sm80.o"));
  test::TempDir dir;
  const fs::path site = dir.path();
  install(site, "broken", "0.1", {{"broken/libb.so", sm80}}, "broken/libb.so,,\n");
  auto bytes = test::read_bytes(site / "broken/libb.so");
  bytes.resize(bytes.size() / 2);
  test::write_bytes(site / "broken/libb.so", bytes);
  const auto packages = scan_site_packages(site);
  ASSERT_EQ(packages.size(), 1u);
  ASSERT_EQ(packages[0].binaries.size(), 1u);
  EXPECT_FALSE(packages[0].binaries[0].error.empty());
}

#ifndef _WIN32
TEST(Scan, FifoListedInRecordIsSkippedWithoutBlocking) {
  TORCHFIX_LINUX_ONLY("makes FIFOs (mkfifo)");
  // A FIFO named like a library, listed in a RECORD: the doctor hung on it.
  test::TempDir dir;
  const fs::path site = dir.path();
  fs::create_directories(site / "f-1.0.dist-info");
  fs::create_directories(site / "f");
  write_text(site / "f-1.0.dist-info" / "METADATA", "Name: f\nVersion: 1.0\n\n");
  write_text(site / "f-1.0.dist-info" / "RECORD", "f/libx.so,,\nf-1.0.dist-info/RECORD,,\n");
  ASSERT_EQ(::mkfifo((site / "f" / "libx.so").c_str(), 0644), 0);
  auto scan = std::async(std::launch::async, [&] { return scan_site_packages(site); });
  if (scan.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::close(::open((site / "f" / "libx.so").c_str(), O_WRONLY));
    FAIL() << "scan_site_packages blocked on a FIFO";
  }
  EXPECT_TRUE(scan.get().empty());
  // The RECORD itself as a FIFO does not block either.
  fs::remove(site / "f-1.0.dist-info" / "RECORD");
  ASSERT_EQ(::mkfifo((site / "f-1.0.dist-info" / "RECORD").c_str(), 0644), 0);
  auto again = std::async(std::launch::async, [&] { return scan_site_packages(site); });
  if (again.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::close(::open((site / "f-1.0.dist-info" / "RECORD").c_str(), O_WRONLY));
    FAIL() << "scan_site_packages blocked on a FIFO RECORD";
  }
  EXPECT_TRUE(again.get().empty());
}
#endif

TEST(Scan, StopsAtItsDeadline) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(library, test::fixture("partial.so"));
  test::TempDir dir;
  const fs::path site = dir.path();
  fs::create_directories(site / "k-1.0.dist-info");
  fs::create_directories(site / "k");
  fs::copy_file(library, site / "k" / "libk.so");
  write_text(site / "k-1.0.dist-info" / "RECORD", "k/libk.so,,\n");
  EXPECT_FALSE(scan_site_packages(site, std::chrono::steady_clock::time_point::max()).packages.empty());
  const auto late = scan_site_packages(site, std::chrono::steady_clock::now());
  EXPECT_TRUE(late.cut_short);
  EXPECT_TRUE(late.packages.empty());
}

#ifndef _WIN32
TEST(ReadPath, FifoNamedLikeALibraryIsAnErrorNotAHang) {
  TORCHFIX_LINUX_ONLY("makes a FIFO (mkfifo)");
  test::TempDir dir;
  const fs::path fifo = dir.path() / "x.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto read = std::async(std::launch::async, [&] { return read_path(fifo); });
  if (read.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::close(::open(fifo.c_str(), O_WRONLY));
    FAIL() << "read_path blocked on a FIFO";
  }
  auto result = read.get();
  ASSERT_TRUE(result);
  ASSERT_EQ(result->size(), 1u);
  EXPECT_NE((*result)[0].error.find("not a regular file"), std::string::npos) << (*result)[0].error;
}
#endif

TEST(Scan, MissingSitePackagesGivesNothing) {
  EXPECT_TRUE(scan_site_packages("/nonexistent/site-packages").empty());
}

TEST(ReadPath, DirectoryWalkSkipsHostOnlyFilesAndSymlinks) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(sm80, test::fixture("sm80.o"));
  TORCHFIX_FIXTURE(ptx, test::fixture("ptx120.o"));
  test::TempDir dir;
  fs::create_directories(dir.path() / "a" / "b");
  fs::copy_file(sm80, dir.path() / "a" / "libone.so");
  fs::copy_file(ptx, dir.path() / "a" / "b" / "libtwo.so.1");
  fs::create_symlink("libtwo.so.1", dir.path() / "a" / "b" / "libtwo.so");
  fs::copy_file("/bin/sh", dir.path() / "a" / "host-only");
  write_text(dir.path() / "a" / "README", "text");
  auto files = read_path(dir.path());
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, (dir.path() / "a" / "b" / "libtwo.so.1").string());
  EXPECT_EQ((*files)[1].path, (dir.path() / "a" / "libone.so").string());
}

TEST(ReadPath, MissingPathIsAnError) {
  auto files = read_path("/nonexistent/path");
  ASSERT_FALSE(files);
  EXPECT_NE(files.error().message.find("/nonexistent/path"), std::string::npos);
}

}  // namespace
}  // namespace torchfix::binary
